-- The outbox is a queue: it is read by due time (`event_outbox_pending`) and
-- by id, never by tenant or organization. Each event is written three times
-- (insert, claim, delivery), and none of those updates is HOT, so every index
-- costs three entries per event: a bulk job's 200,000 events wrote 1.2
-- million entries into these two alone. The schema test lists both columns
-- as exceptions.
DROP INDEX event_outbox_tenant;
DROP INDEX event_outbox_organization;
