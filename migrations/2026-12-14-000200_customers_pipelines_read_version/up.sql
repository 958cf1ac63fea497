-- The pipeline and stage lists are kept answers (issue 52: two statements
-- per request, 50-64% of a profile read in stop 61's bench): every write to
-- either table bumps the tenant's `customers.pipelines` version, which both
-- lists read in their one statement.
SELECT stoa_read_version_triggers('customer_pipelines', 'customers.pipelines');
SELECT stoa_read_version_triggers('customer_pipeline_stages', 'customers.pipelines');
