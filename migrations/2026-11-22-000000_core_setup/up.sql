-- Shared helpers used by every module's tables.

-- Sets updated_at on UPDATE for tables that opt in with:
--   CREATE TRIGGER <t>_updated_at BEFORE UPDATE ON <t>
--   FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();
CREATE OR REPLACE FUNCTION stoa_set_updated_at() RETURNS trigger AS $$
BEGIN
    IF NEW IS DISTINCT FROM OLD AND NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at THEN
        NEW.updated_at := now();
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
