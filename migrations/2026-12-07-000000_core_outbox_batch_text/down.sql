ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_batch_shape;
ALTER TABLE event_outbox ALTER COLUMN batch TYPE jsonb USING batch::jsonb;
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_batch_shape CHECK (
    (batch IS NULL AND event_count = 1)
    OR (jsonb_typeof(batch) = 'array' AND event_count = jsonb_array_length(batch)
        AND event_count >= 1)
);
DO $$
BEGIN
    ALTER TABLE event_outbox ALTER COLUMN batch SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: event_outbox.batch keeps the default compression';
END;
$$;
