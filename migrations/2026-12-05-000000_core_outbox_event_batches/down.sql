ALTER TABLE event_outbox
    DROP CONSTRAINT event_outbox_batch_shape,
    DROP COLUMN event_count,
    DROP COLUMN batch;
