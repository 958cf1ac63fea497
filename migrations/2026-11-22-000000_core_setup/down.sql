DROP FUNCTION IF EXISTS stoa_set_updated_at();
