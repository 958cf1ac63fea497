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

// stoa-core's ACL version (bumped by every change to roles, ACLs,
// memberships or organizations), read in the per-request key check.
diesel::table! {
    acl_version (id) {
        id -> Int2,
        version -> Int8,
    }
}

diesel::allow_tables_to_appear_in_same_query!(acl_version, api_keys);
