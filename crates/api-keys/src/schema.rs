//! The table owned by the API-keys module.

diesel::table! {
    api_keys (id) {
        id -> Uuid,
        name -> Text,
        description -> Nullable<Text>,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        key_prefix -> Text,
        key_hash -> Text,
        role_ids -> Array<Uuid>,
        created_by -> Uuid,
        creator_user_id -> Uuid,
        creator_key_ids -> Array<Uuid>,
        last_used_at -> Nullable<Timestamptz>,
        expires_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

/// Read-only mirrors of the columns the per-request key check reads from
/// stoa-auth's tables. Diesel's orphan rules keep a crate from joining tables
/// declared in two other crates, and the check must stay one statement (key,
/// creator liveness and `acl_version` together). Nothing here is written.
pub mod auth_mirror {
    diesel::table! {
        users (id) {
            id -> Uuid,
            tenant_id -> Nullable<Uuid>,
            organization_id -> Nullable<Uuid>,
            is_active -> Bool,
            deleted_at -> Nullable<Timestamptz>,
        }
    }

    diesel::table! {
        acl_version (id) {
            id -> Int2,
            version -> Int8,
        }
    }

    use super::api_keys;

    diesel::allow_tables_to_appear_in_same_query!(users, acl_version, api_keys);
}
