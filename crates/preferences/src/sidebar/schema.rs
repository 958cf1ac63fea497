//! Tables of sidebar preferences and variants (owned by stoa-preferences).

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

/// Read-only mirrors of the stoa-auth columns the sidebar queries join
/// (role names and memberships). Diesel's orphan rules keep a crate from
/// relating its tables to tables declared in another crate, and the
/// navigation reads both preferences in one statement. Nothing here is
/// written; stoa-auth owns these tables.
pub mod auth_mirror {
    diesel::table! {
        roles (id) {
            id -> Uuid,
            tenant_id -> Uuid,
            name -> Text,
            deleted_at -> Nullable<Timestamptz>,
        }
    }

    diesel::table! {
        user_roles (id) {
            id -> Uuid,
            user_id -> Uuid,
            role_id -> Uuid,
        }
    }

    use super::{role_sidebar_preferences, sidebar_variants, user_sidebar_preferences};

    diesel::joinable!(role_sidebar_preferences -> roles (role_id));
    diesel::allow_tables_to_appear_in_same_query!(
        roles,
        user_roles,
        role_sidebar_preferences,
        user_sidebar_preferences,
        sidebar_variants
    );
}
