-- Many events in one outbox row (issue 27). A statement that writes more
-- than a few dozen events (a bulk job's unit: two per deal) writes them as
-- batch rows of up to 250 events each, `batch` holding every event in its
-- envelope and `event_count` their number; `name` is `core.event_batch` and
-- `payload` `{"events": n}`. Each outbox row is inserted, claimed and
-- marked delivered by non-HOT writes (about 11 WAL records per row), so a
-- bulk job's 200,000 events cost 2.2 million records as single rows and
-- about 9,000 as batches. Subscribers still receive one event at a time;
-- a subscriber that fails on one event of a batch gets the whole batch
-- again (at least once: they are idempotent by `event_id`).
ALTER TABLE event_outbox
    ADD COLUMN batch jsonb,
    ADD COLUMN event_count integer NOT NULL DEFAULT 1,
    ADD CONSTRAINT event_outbox_batch_shape CHECK (
        (batch IS NULL AND event_count = 1)
        OR (jsonb_typeof(batch) = 'array' AND event_count = jsonb_array_length(batch)
            AND event_count >= 1)
    );
