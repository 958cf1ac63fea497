-- The outbox's batch rows hold their events as JSON text, not jsonb. Only
-- the server writes and reads them, always whole: as jsonb every batch was
-- parsed into jsonb on insert (the check below measured its length) and
-- printed back to text when claimed, about a fifth of the database's time
-- in a 100,000-deal bulk stage update, for nothing any query used. The
-- server serializes each batch itself, so the text is JSON by construction;
-- a test reads it with `batch::jsonb`.
ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_batch_shape;
ALTER TABLE event_outbox ALTER COLUMN batch TYPE text USING batch::text;
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_batch_shape CHECK (
    (batch IS NULL AND event_count = 1)
    OR (batch IS NOT NULL AND event_count >= 1)
);
-- The new type starts with the default compression: lz4 again where the
-- server has it (migration core_outbox_batch_lz4 says why).
DO $$
BEGIN
    ALTER TABLE event_outbox ALTER COLUMN batch SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: event_outbox.batch keeps the default compression';
END;
$$;
