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
