DROP INDEX IF EXISTS attachments_organization;
ALTER TABLE attachments DROP CONSTRAINT IF EXISTS attachments_organization_fk;
DROP INDEX IF EXISTS attachment_partitions_organization;
DROP INDEX IF EXISTS attachment_partitions_tenant;
ALTER TABLE attachment_partitions DROP CONSTRAINT IF EXISTS attachment_partitions_organization_fk;
