-- Repeated reads of one kept answer share a row. A kept list answered again
-- reads the same records as before, so the writer behind the answers stores
-- a burst of such reads (one reader, one answer, at most 8 reads within 10 ms) as one
-- row: the first read as before (`created_at`, `entry_ids`), each further
-- read as its time (`repeat_ats`) and the base of its entry ids
-- (`repeat_bases`). Writing a 3 KB row per repeated read was the whole cost
-- that kept a kept user list below half of a profile read (issue 15).
ALTER TABLE access_reads
    ADD COLUMN repeat_bases uuid[],
    ADD COLUMN repeat_ats timestamptz[],
    ADD CONSTRAINT access_reads_repeats_paired CHECK (
        (repeat_bases IS NULL AND repeat_ats IS NULL)
        OR (cardinality(repeat_bases) > 0
            AND cardinality(repeat_bases) = cardinality(repeat_ats))
    );

-- The entry id of a repeated read's record: the read's base with its last
-- two bytes XORed with the record's position (from 0), the rule the server
-- uses for a read's own entry ids (`entry_ids_from` in stoa-core).
CREATE FUNCTION stoa_access_entry_id(base uuid, ordinal bigint) RETURNS uuid
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT encode(
        set_byte(
            set_byte(uuid_send(base), 14,
                     get_byte(uuid_send(base), 14) # ((ordinal >> 8) & 255)::int),
            15, get_byte(uuid_send(base), 15) # (ordinal & 255)::int),
        'hex')::uuid
$$;

-- One entry per read record, as before; `created_at` is each read's own
-- time, `stored_at` its row's (the first read's: never later, at most 10 ms
-- earlier). Conditions on `stored_at` reach the `access_reads` indexes.
DROP VIEW access_logs;
CREATE VIEW access_logs AS
SELECT e.id, r.tenant_id, r.organization_id, r.actor_user_id, r.resource_kind,
       e.resource_id, r.access_type, r.fields, r.context_json, e.created_at,
       r.created_at AS stored_at
FROM access_reads r
CROSS JOIN LATERAL (
    SELECT first.id, first.resource_id, r.created_at
    FROM unnest(r.entry_ids, r.resource_ids) AS first (id, resource_id)
    UNION ALL
    SELECT stoa_access_entry_id(again.base, record.position - 1), record.resource_id, again.at
    FROM unnest(r.repeat_bases, r.repeat_ats) AS again (base, at)
    CROSS JOIN LATERAL unnest(r.resource_ids) WITH ORDINALITY AS record (resource_id, position)
) AS e (id, resource_id, created_at);
