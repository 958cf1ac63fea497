SELECT stoa_drop_read_version_triggers('attachment_partitions');
SELECT stoa_drop_read_version_triggers('attachments');
