//! Tables of sidebar preferences and variants (owned by stoa-auth).

use crate::schema::{roles, user_roles, users};

diesel::table! {
    user_sidebar_preferences (id) {
        id -> Uuid,
        user_id -> Uuid,
        tenant_id -> Nullable<Uuid>,
        organization_id -> Nullable<Uuid>,
        locale -> Text,
        settings -> Jsonb,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    role_sidebar_preferences (id) {
        id -> Uuid,
        role_id -> Uuid,
        tenant_id -> Uuid,
        locale -> Text,
        settings -> Jsonb,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    sidebar_variants (id) {
        id -> Uuid,
        user_id -> Uuid,
        tenant_id -> Nullable<Uuid>,
        organization_id -> Nullable<Uuid>,
        locale -> Text,
        name -> Text,
        settings -> Jsonb,
        is_active -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::joinable!(role_sidebar_preferences -> roles (role_id));
diesel::joinable!(user_sidebar_preferences -> users (user_id));
diesel::joinable!(sidebar_variants -> users (user_id));
// Pairs only: each invocation relates every table it lists, and the auth
// tables are already related among themselves in `crate::schema`.
diesel::allow_tables_to_appear_in_same_query!(role_sidebar_preferences, roles);
diesel::allow_tables_to_appear_in_same_query!(role_sidebar_preferences, user_roles);
diesel::allow_tables_to_appear_in_same_query!(role_sidebar_preferences, users);
diesel::allow_tables_to_appear_in_same_query!(user_sidebar_preferences, users);
diesel::allow_tables_to_appear_in_same_query!(user_sidebar_preferences, roles);
diesel::allow_tables_to_appear_in_same_query!(user_sidebar_preferences, user_roles);
diesel::allow_tables_to_appear_in_same_query!(user_sidebar_preferences, role_sidebar_preferences);
diesel::allow_tables_to_appear_in_same_query!(sidebar_variants, users);
