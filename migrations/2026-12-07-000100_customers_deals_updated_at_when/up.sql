-- The deals' updated_at trigger runs only when a write leaves updated_at as
-- it was. The bulk jobs set it themselves (to now(), what the trigger would
-- set), so a 100,000-deal stage update no longer calls the trigger's
-- function once per deal; every other write is stamped as before.
DROP TRIGGER customer_deals_updated_at ON customer_deals;
CREATE TRIGGER customer_deals_updated_at BEFORE UPDATE ON customer_deals
    FOR EACH ROW WHEN (NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at)
    EXECUTE FUNCTION stoa_set_updated_at();
