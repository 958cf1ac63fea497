-- The library's "tags in use" and its default order, without reading every
-- attachment of the tenant per request (issue 52: 10,000 files made the page
-- 12 ms of Postgres, 7 of them a DISTINCT over every row's tags, the rest a
-- top-N sort of every row).

-- How many attachments of an organization carry each tag, maintained by
-- statement triggers; a tag whose count drops to zero loses its row.
CREATE TABLE attachment_tag_counts (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    tag text NOT NULL,
    uses bigint NOT NULL CHECK (uses > 0),
    PRIMARY KEY (tenant_id, organization_id, tag)
);
CREATE INDEX attachment_tag_counts_organization ON attachment_tag_counts (organization_id);
SELECT stoa_tenant_policies('attachment_tag_counts');

INSERT INTO attachment_tag_counts (tenant_id, organization_id, tag, uses)
SELECT a.tenant_id, a.organization_id, t.tag, count(*)
FROM attachments a, unnest(a.tags) AS t(tag)
GROUP BY 1, 2, 3;

-- Adds each delta to its (tenant, organization, tag). Increments upsert in key
-- order (two uploads racing on one tag wait for each other, never deadlock);
-- decrements only update, so a tenant's cascading delete (its counts already
-- gone) inserts nothing; counts at zero are removed.
CREATE FUNCTION stoa_attachment_tag_counts_add(deltas jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO attachment_tag_counts AS c (tenant_id, organization_id, tag, uses)
    SELECT d.tenant_id, d.organization_id, d.tag, d.n
    FROM jsonb_to_recordset(deltas) AS d(tenant_id uuid, organization_id uuid, tag text, n bigint)
    WHERE d.n > 0
    ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, organization_id, tag) DO UPDATE SET uses = c.uses + EXCLUDED.uses;
    WITH d AS (
        SELECT * FROM jsonb_to_recordset(deltas)
            AS d(tenant_id uuid, organization_id uuid, tag text, n bigint)
        WHERE d.n < 0
    ), lowered AS (
        SELECT c.tenant_id, c.organization_id, c.tag, c.uses + d.n AS uses
        FROM attachment_tag_counts c JOIN d USING (tenant_id, organization_id, tag)
        ORDER BY 1, 2, 3
        FOR UPDATE OF c
    ), gone AS (
        DELETE FROM attachment_tag_counts c USING lowered l
        WHERE (c.tenant_id, c.organization_id, c.tag) = (l.tenant_id, l.organization_id, l.tag)
          AND l.uses <= 0
    )
    UPDATE attachment_tag_counts c SET uses = l.uses FROM lowered l
    WHERE (c.tenant_id, c.organization_id, c.tag) = (l.tenant_id, l.organization_id, l.tag)
      AND l.uses > 0;
END $$;

CREATE FUNCTION stoa_attachment_tag_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    deltas jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT jsonb_agg(d) INTO deltas FROM (
            SELECT tenant_id, organization_id, t.tag, count(*) AS n
            FROM new_rows, unnest(tags) AS t(tag) GROUP BY 1, 2, 3
        ) d;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT jsonb_agg(d) INTO deltas FROM (
            SELECT tenant_id, organization_id, t.tag, -count(*) AS n
            FROM old_rows, unnest(tags) AS t(tag) GROUP BY 1, 2, 3
        ) d;
    ELSE
        SELECT jsonb_agg(d) INTO deltas FROM (
            SELECT m.tenant_id, m.organization_id, m.tag, sum(m.delta) AS n FROM (
                SELECT tenant_id, organization_id, t.tag, 1 AS delta
                FROM new_rows, unnest(tags) AS t(tag)
                UNION ALL
                SELECT tenant_id, organization_id, t.tag, -1
                FROM old_rows, unnest(tags) AS t(tag)
            ) m GROUP BY 1, 2, 3 HAVING sum(m.delta) <> 0
        ) d;
    END IF;
    IF deltas IS NOT NULL THEN
        PERFORM stoa_attachment_tag_counts_add(deltas);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER attachments_tag_counts_insert AFTER INSERT ON attachments
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION stoa_attachment_tag_counts_changed();
CREATE TRIGGER attachments_tag_counts_delete AFTER DELETE ON attachments
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION stoa_attachment_tag_counts_changed();
CREATE TRIGGER attachments_tag_counts_update AFTER UPDATE ON attachments
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION stoa_attachment_tag_counts_changed();

-- The default order (newest first, ties by id) read from an index: per
-- organization for a caller limited to one, per tenant otherwise.
DROP INDEX attachments_library;
CREATE INDEX attachments_library ON attachments (tenant_id, organization_id, created_at DESC, id DESC);
CREATE INDEX attachments_library_tenant ON attachments (tenant_id, created_at DESC, id DESC);
