DROP TRIGGER customer_deals_read_version_delete ON customer_deals;
DROP TRIGGER customer_deals_read_version_update ON customer_deals;
DROP TRIGGER customer_deals_read_version_insert ON customer_deals;
DELETE FROM read_versions WHERE name = 'customers.deals' OR starts_with(name, 'customers.deals@');
