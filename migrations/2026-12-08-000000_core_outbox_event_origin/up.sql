-- Every event carries its origin: the module that wrote it, set by the
-- server (the command bus takes it from the command's id, other writers name
-- their module in code), never from a payload or a configured name.
-- Subscribers act only on events of the origins they expect, so a business
-- rule's EMIT_EVENT named `mail.send` or `attachments.attachment.deleted`
-- reaches neither the mailer nor the storage cleanup (docs/security.md,
-- "Events come only from their owners").
ALTER TABLE event_outbox ADD COLUMN origin text NOT NULL DEFAULT '';
-- Events written before this migration: the command's module, and the
-- mailer's own queue for mail (which wrote no command id).
UPDATE event_outbox SET origin = CASE
    WHEN command_id IS NOT NULL THEN split_part(command_id, '.', 1)
    WHEN name = 'mail.send' THEN 'mail'
    WHEN name LIKE 'progress.job.%' THEN 'progress'
    ELSE '' END
WHERE status = 'pending';
