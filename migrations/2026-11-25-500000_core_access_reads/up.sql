-- One row per read instead of one row per record read. A list read of 50
-- users wrote 50 rows (50 heap tuples and 150 index entries); it now writes
-- one row whose `resource_ids` names the records, with one stable entry id
-- per record in `entry_ids`. The view `access_logs` expands the rows back to
-- one entry per record, so everything that reads access logs (the API, the
-- tests, ad-hoc SQL) sees the shape it saw before.
ALTER TABLE access_logs RENAME TO access_reads;
ALTER INDEX access_logs_pkey RENAME TO access_reads_pkey;
ALTER INDEX access_logs_tenant_actor RENAME TO access_reads_tenant_actor;
ALTER INDEX access_logs_created RENAME TO access_reads_created;

ALTER TABLE access_reads ADD COLUMN resource_ids text[], ADD COLUMN entry_ids uuid[];
UPDATE access_reads SET resource_ids = ARRAY[resource_id], entry_ids = ARRAY[id];
ALTER TABLE access_reads
    ALTER COLUMN resource_ids SET NOT NULL,
    ALTER COLUMN entry_ids SET NOT NULL,
    DROP COLUMN resource_id,
    ADD CONSTRAINT access_reads_one_entry_per_record CHECK (
        cardinality(resource_ids) > 0
        AND cardinality(resource_ids) = cardinality(entry_ids)
    );

CREATE VIEW access_logs AS
SELECT e.id, r.tenant_id, r.organization_id, r.actor_user_id, r.resource_kind,
       e.resource_id, r.access_type, r.fields, r.context_json, r.created_at
FROM access_reads r
CROSS JOIN LATERAL unnest(r.entry_ids, r.resource_ids) AS e (id, resource_id);
