DROP TABLE attachments;
DROP TABLE attachment_partitions;
