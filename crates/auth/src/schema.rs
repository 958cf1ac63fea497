//! Tables owned by the auth module.

diesel::table! {
    users (id) {
        id -> Uuid,
        tenant_id -> Nullable<Uuid>,
        organization_id -> Nullable<Uuid>,
        email -> Text,
        name -> Nullable<Text>,
        password_hash -> Nullable<Text>,
        is_confirmed -> Bool,
        is_active -> Bool,
        last_login_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    roles (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        name -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    user_roles (id) {
        id -> Uuid,
        user_id -> Uuid,
        role_id -> Uuid,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    role_acls (id) {
        id -> Uuid,
        role_id -> Uuid,
        tenant_id -> Uuid,
        features -> Array<Text>,
        is_super_admin -> Bool,
        organizations -> Nullable<Array<Uuid>>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    user_acls (id) {
        id -> Uuid,
        user_id -> Uuid,
        tenant_id -> Uuid,
        features -> Array<Text>,
        is_super_admin -> Bool,
        organizations -> Nullable<Array<Uuid>>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    sessions (id) {
        id -> Uuid,
        user_id -> Uuid,
        token_hash -> Text,
        previous_token_hash -> Nullable<Text>,
        remember -> Bool,
        expires_at -> Timestamptz,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    password_resets (id) {
        id -> Uuid,
        user_id -> Uuid,
        token_hash -> Text,
        kind -> Text,
        expires_at -> Timestamptz,
        used_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    acl_version (id) {
        id -> Int2,
        version -> Int8,
    }
}

diesel::joinable!(user_roles -> users (user_id));
diesel::joinable!(user_roles -> roles (role_id));
diesel::joinable!(role_acls -> roles (role_id));
diesel::joinable!(sessions -> users (user_id));
diesel::joinable!(password_resets -> users (user_id));
diesel::allow_tables_to_appear_in_same_query!(
    users,
    roles,
    user_roles,
    role_acls,
    user_acls,
    sessions,
    password_resets,
    acl_version
);
