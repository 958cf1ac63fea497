-- Attachments and partitions belong to an organization of their tenant:
-- bind the column and index it, as every scoped table
-- (crates/core/tests/api/schema.rs).
ALTER TABLE attachment_partitions
    ADD CONSTRAINT attachment_partitions_organization_fk FOREIGN KEY (organization_id) REFERENCES organizations (id);
CREATE INDEX attachment_partitions_tenant ON attachment_partitions (tenant_id)
    WHERE tenant_id IS NOT NULL;
CREATE INDEX attachment_partitions_organization ON attachment_partitions (organization_id)
    WHERE organization_id IS NOT NULL;

ALTER TABLE attachments
    ADD CONSTRAINT attachments_organization_fk FOREIGN KEY (organization_id) REFERENCES organizations (id);
CREATE INDEX attachments_organization ON attachments (organization_id);
