-- Attachment partitions: where files of a kind are kept and who may read
-- them. Codes are unique across every tenant (the reference's rule) and never
-- change; tenant_id NULL marks a global partition (the two defaults).
CREATE TABLE attachment_partitions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    code text NOT NULL UNIQUE,
    title text NOT NULL,
    description text,
    storage_driver text NOT NULL DEFAULT 'local',
    config_json jsonb,
    is_public boolean NOT NULL DEFAULT false,
    requires_ocr boolean NOT NULL DEFAULT true,
    ocr_model text,
    tenant_id uuid REFERENCES tenants (id) ON DELETE CASCADE,
    organization_id uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The reference creates these lazily on first use; here they exist from the start.
INSERT INTO attachment_partitions (code, title, is_public)
VALUES ('productsMedia', 'Products media', true),
       ('privateAttachments', 'Private attachments', false);

-- Uploaded files. Every row is fully scoped (tenant and organization): API
-- uploads always are. The object lives in storage under storage_key.
CREATE TABLE attachments (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL,
    entity_id text NOT NULL,
    record_id text NOT NULL,
    partition_code text NOT NULL,
    file_name text NOT NULL,
    mime_type text NOT NULL,
    file_size bigint NOT NULL CHECK (file_size >= 0),
    checksum text NOT NULL,
    storage_driver text NOT NULL,
    storage_key text NOT NULL,
    tags text[] NOT NULL DEFAULT '{}',
    assignments jsonb NOT NULL DEFAULT '[]',
    custom_fields jsonb,
    content text,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX attachments_record ON attachments (tenant_id, entity_id, record_id, created_at DESC);
CREATE INDEX attachments_partition ON attachments (partition_code);
CREATE INDEX attachments_library ON attachments (tenant_id, organization_id, created_at DESC);
