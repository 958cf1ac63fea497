-- A batch row of the outbox holds up to 250 events (about 230 KB of JSON for
-- a bulk job's deals), always large enough to be compressed. pglz spent 2 of
-- the 21 s of database time of a 100,000-deal bulk stage update compressing
-- them (and the dispatcher decompresses each); lz4 does the same work in a
-- fraction of the time at a similar ratio on such repetitive JSON. A server
-- built without lz4 keeps pglz.
DO $$
BEGIN
    ALTER TABLE event_outbox ALTER COLUMN batch SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: event_outbox.batch keeps the default compression';
END;
$$;
