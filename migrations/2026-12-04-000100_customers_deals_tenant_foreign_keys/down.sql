CREATE INDEX customer_deals_stage_fk ON customer_deals (pipeline_stage_id);
CREATE INDEX customer_deals_pipeline_fk ON customer_deals (pipeline_id);
ALTER TABLE customer_deals
    ADD CONSTRAINT customer_deals_pipeline_id_fkey FOREIGN KEY (pipeline_id)
        REFERENCES customer_pipelines (id),
    ADD CONSTRAINT customer_deals_pipeline_stage_id_fkey FOREIGN KEY (pipeline_stage_id)
        REFERENCES customer_pipeline_stages (id),
    DROP CONSTRAINT customer_deals_tenant_stage_fkey,
    DROP CONSTRAINT customer_deals_tenant_pipeline_fkey;
ALTER TABLE customer_pipeline_stages DROP CONSTRAINT customer_pipeline_stages_tenant_id_id_key;
ALTER TABLE customer_pipelines DROP CONSTRAINT customer_pipelines_tenant_id_id_key;
