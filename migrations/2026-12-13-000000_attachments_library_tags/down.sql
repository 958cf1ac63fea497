DROP INDEX attachments_library_tenant;
DROP INDEX attachments_library;
CREATE INDEX attachments_library ON attachments (tenant_id, organization_id, created_at DESC);
DROP TRIGGER attachments_tag_counts_update ON attachments;
DROP TRIGGER attachments_tag_counts_delete ON attachments;
DROP TRIGGER attachments_tag_counts_insert ON attachments;
DROP FUNCTION stoa_attachment_tag_counts_changed();
DROP FUNCTION stoa_attachment_tag_counts_add(jsonb);
DROP TABLE attachment_tag_counts;
