-- Repeated reads become rows of their own again, then the columns go.
INSERT INTO access_reads (id, tenant_id, organization_id, actor_user_id, resource_kind,
                          resource_ids, entry_ids, access_type, fields, context_json,
                          created_at)
SELECT gen_random_uuid(), r.tenant_id, r.organization_id, r.actor_user_id, r.resource_kind,
       r.resource_ids,
       ARRAY(SELECT stoa_access_entry_id(again.base, p - 1)
             FROM generate_series(1, cardinality(r.resource_ids)) AS p),
       r.access_type, r.fields, r.context_json, again.at
FROM access_reads r
CROSS JOIN LATERAL unnest(r.repeat_bases, r.repeat_ats) AS again (base, at);

DROP VIEW access_logs;
CREATE VIEW access_logs AS
SELECT e.id, r.tenant_id, r.organization_id, r.actor_user_id, r.resource_kind,
       e.resource_id, r.access_type, r.fields, r.context_json, r.created_at
FROM access_reads r
CROSS JOIN LATERAL unnest(r.entry_ids, r.resource_ids) AS e (id, resource_id);
DROP FUNCTION stoa_access_entry_id(uuid, bigint);
ALTER TABLE access_reads
    DROP CONSTRAINT access_reads_repeats_paired,
    DROP COLUMN repeat_bases,
    DROP COLUMN repeat_ats;
