//! Tables owned by the catalog module.

diesel::table! {
    catalog_products (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Uuid,
        title -> Text,
        subtitle -> Nullable<Text>,
        description -> Nullable<Text>,
        sku -> Nullable<Text>,
        handle -> Nullable<Text>,
        product_type -> Text,
        is_active -> Bool,
        price_amount -> Nullable<Numeric>,
        price_currency -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}
