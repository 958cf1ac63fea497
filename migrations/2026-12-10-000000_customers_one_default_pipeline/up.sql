-- One default pipeline per organization: a pipeline made the default unsets
-- the previous one (in the same transaction, recorded as its own action-log
-- entry), and this index refuses a second default whatever the path.
-- Organizations holding several defaults keep the newest.
UPDATE customer_pipelines p
SET is_default = false
WHERE p.is_default
  AND EXISTS (
      SELECT 1
      FROM customer_pipelines q
      WHERE q.tenant_id = p.tenant_id
        AND q.organization_id = p.organization_id
        AND q.is_default
        AND (q.created_at, q.id) > (p.created_at, p.id)
  );

CREATE UNIQUE INDEX customer_pipelines_one_default
    ON customer_pipelines (tenant_id, organization_id)
    WHERE is_default;
