-- A deal's stage and pipeline are checked within its tenant: the foreign keys
-- include tenant_id, so the database itself refuses another tenant's stage,
-- and the checks a stage or pipeline deletion makes ("is one still in use?")
-- use the list indexes that already start with (tenant_id, pipeline_stage_id)
-- and (tenant_id, pipeline_id). The two single-column indexes the old keys
-- needed go: every deal that changes stage (a bulk job moves 100,000) wrote
-- an entry into each.
ALTER TABLE customer_pipelines
    ADD CONSTRAINT customer_pipelines_tenant_id_id_key UNIQUE (tenant_id, id);
ALTER TABLE customer_pipeline_stages
    ADD CONSTRAINT customer_pipeline_stages_tenant_id_id_key UNIQUE (tenant_id, id);
ALTER TABLE customer_deals
    ADD CONSTRAINT customer_deals_tenant_stage_fkey FOREIGN KEY (tenant_id, pipeline_stage_id)
        REFERENCES customer_pipeline_stages (tenant_id, id),
    ADD CONSTRAINT customer_deals_tenant_pipeline_fkey FOREIGN KEY (tenant_id, pipeline_id)
        REFERENCES customer_pipelines (tenant_id, id),
    DROP CONSTRAINT customer_deals_pipeline_stage_id_fkey,
    DROP CONSTRAINT customer_deals_pipeline_id_fkey;
DROP INDEX customer_deals_stage_fk;
DROP INDEX customer_deals_pipeline_fk;
