//! Tables owned by the directory module.

diesel::table! {
    tenants (id) {
        id -> Uuid,
        name -> Text,
        is_active -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    organizations (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        name -> Text,
        slug -> Nullable<Text>,
        logo_url -> Nullable<Text>,
        logo_preserve_aspect_ratio -> Bool,
        is_active -> Bool,
        parent_id -> Nullable<Uuid>,
        root_id -> Uuid,
        depth -> Int4,
        ancestor_ids -> Array<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::joinable!(organizations -> tenants (tenant_id));
diesel::allow_tables_to_appear_in_same_query!(tenants, organizations);
