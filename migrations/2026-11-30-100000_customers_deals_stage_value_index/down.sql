CREATE INDEX customer_deals_stage ON customer_deals (tenant_id, pipeline_stage_id, created_at DESC, id DESC);
DROP INDEX customer_deals_stage_value;
