DROP INDEX customer_deals_stage_value;
CREATE INDEX customer_deals_stage_value ON customer_deals
    (tenant_id, pipeline_stage_id, created_at DESC, id DESC) INCLUDE (owner_user_id, value_amount);
DROP INDEX customer_deals_stage_owner;
