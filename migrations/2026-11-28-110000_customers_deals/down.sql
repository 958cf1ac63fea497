DROP TABLE customer_deals;
DROP TABLE customer_pipeline_stages;
DROP TABLE customer_pipelines;
