-- The deals list filtered by stage (and owner, value range), page and capped
-- count in one prepared statement: its generic plan read the stage's whole
-- bitmap (166,000 rows of 1M deals) before the count's LIMIT 1001 could stop,
-- 14-20 ms per request. With the owner and value in the index, both the page
-- and the count are index-only range scans that stop early (about 1 ms).
-- It replaces customer_deals_stage (the same key).
CREATE INDEX customer_deals_stage_value ON customer_deals
    (tenant_id, pipeline_stage_id, created_at DESC, id DESC) INCLUDE (owner_user_id, value_amount);
DROP INDEX customer_deals_stage;
