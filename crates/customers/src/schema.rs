//! Tables owned by the customers module.

diesel::table! {
    customer_pipelines (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Uuid,
        name -> Text,
        is_default -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    customer_pipeline_stages (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Uuid,
        pipeline_id -> Uuid,
        label -> Text,
        position -> Int4,
        color -> Nullable<Text>,
        icon -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    customer_deals (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Uuid,
        title -> Text,
        description -> Nullable<Text>,
        status -> Text,
        pipeline_stage -> Nullable<Text>,
        pipeline_id -> Nullable<Uuid>,
        pipeline_stage_id -> Nullable<Uuid>,
        value_amount -> Nullable<Numeric>,
        value_currency -> Nullable<Text>,
        probability -> Nullable<Int4>,
        expected_close_at -> Nullable<Timestamptz>,
        owner_user_id -> Nullable<Uuid>,
        source -> Nullable<Text>,
        closure_outcome -> Nullable<Text>,
        loss_notes -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::joinable!(customer_pipeline_stages -> customer_pipelines (pipeline_id));
diesel::allow_tables_to_appear_in_same_query!(
    customer_pipelines,
    customer_pipeline_stages,
    customer_deals
);
