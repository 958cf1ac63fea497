-- The deals list filtered by stage and owner (the pipeline board of one
-- salesperson), page and capped count in one statement: with only
-- customer_deals_stage_value the count filtered a stage's entries by owner
-- and read the heap for the organization (4-8 ms over 1M deals, 38 ms p50
-- at 4 connections). With the owner in the key and the organization in
-- the payload both are index-only range scans that stop early (1.8 ms).
CREATE INDEX customer_deals_stage_owner ON customer_deals
    (tenant_id, pipeline_stage_id, owner_user_id, created_at DESC, id DESC)
    INCLUDE (value_amount, organization_id);
-- The stage-only list's index carries the organization too, for the same
-- reason (a caller limited to some organizations filters by it).
DROP INDEX customer_deals_stage_value;
CREATE INDEX customer_deals_stage_value ON customer_deals
    (tenant_id, pipeline_stage_id, created_at DESC, id DESC)
    INCLUDE (owner_user_id, value_amount, organization_id);
