SELECT stoa_drop_read_version_triggers('customer_pipeline_stages');
SELECT stoa_drop_read_version_triggers('customer_pipelines');
