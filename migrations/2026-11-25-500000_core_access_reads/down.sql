DROP VIEW access_logs;

CREATE TABLE access_logs (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid,
    organization_id uuid,
    actor_user_id uuid,
    resource_kind text NOT NULL,
    resource_id text NOT NULL,
    access_type text NOT NULL,
    fields text[] NOT NULL DEFAULT '{}',
    context_json jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO access_logs (id, tenant_id, organization_id, actor_user_id, resource_kind,
                         resource_id, access_type, fields, context_json, created_at)
SELECT e.id, r.tenant_id, r.organization_id, r.actor_user_id, r.resource_kind,
       e.resource_id, r.access_type, r.fields, r.context_json, r.created_at
FROM access_reads r
CROSS JOIN LATERAL unnest(r.entry_ids, r.resource_ids) AS e (id, resource_id);
DROP TABLE access_reads;
CREATE INDEX access_logs_tenant_actor ON access_logs (tenant_id, actor_user_id, created_at DESC);
CREATE INDEX access_logs_created ON access_logs (created_at);
