DROP TRIGGER customer_deals_updated_at ON customer_deals;
CREATE TRIGGER customer_deals_updated_at BEFORE UPDATE ON customer_deals
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();
