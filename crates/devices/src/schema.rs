//! Tables owned by the devices module.

diesel::table! {
    user_devices (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        user_id -> Uuid,
        device_id -> Text,
        platform -> Text,
        client_app_version -> Nullable<Text>,
        os_version -> Nullable<Text>,
        locale -> Nullable<Text>,
        push_token -> Nullable<Text>,
        push_provider -> Nullable<Text>,
        push_token_updated_at -> Nullable<Timestamptz>,
        last_seen_at -> Timestamptz,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
        push_token_hash -> Nullable<Text>,
        push_token_fingerprint -> Nullable<Text>,
    }
}
