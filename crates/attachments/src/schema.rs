//! Tables owned by the attachments module.

diesel::table! {
    attachment_partitions (id) {
        id -> Uuid,
        code -> Text,
        title -> Text,
        description -> Nullable<Text>,
        storage_driver -> Text,
        config_json -> Nullable<Jsonb>,
        is_public -> Bool,
        requires_ocr -> Bool,
        ocr_model -> Nullable<Text>,
        tenant_id -> Nullable<Uuid>,
        organization_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    attachments (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Uuid,
        entity_id -> Text,
        record_id -> Text,
        partition_code -> Text,
        file_name -> Text,
        mime_type -> Text,
        file_size -> Int8,
        checksum -> Text,
        storage_driver -> Text,
        storage_key -> Text,
        tags -> Array<Text>,
        assignments -> Jsonb,
        custom_fields -> Nullable<Jsonb>,
        content -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}
