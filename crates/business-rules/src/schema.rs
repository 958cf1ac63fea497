//! The tables the business-rules module owns.

diesel::table! {
    business_rules (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Uuid,
        rule_id -> Text,
        rule_name -> Text,
        description -> Nullable<Text>,
        rule_type -> Text,
        rule_category -> Nullable<Text>,
        entity_type -> Text,
        event_type -> Nullable<Text>,
        condition_expression -> Nullable<Jsonb>,
        success_actions -> Nullable<Jsonb>,
        failure_actions -> Nullable<Jsonb>,
        enabled -> Bool,
        priority -> Int4,
        version -> Int4,
        effective_from -> Nullable<Timestamptz>,
        effective_to -> Nullable<Timestamptz>,
        created_by -> Nullable<Uuid>,
        updated_by -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
        webhook_secret -> Nullable<Text>,
    }
}

diesel::table! {
    business_rule_sets (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Uuid,
        set_id -> Text,
        set_name -> Text,
        description -> Nullable<Text>,
        enabled -> Bool,
        created_by -> Nullable<Uuid>,
        updated_by -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    business_rule_set_members (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Uuid,
        rule_set_id -> Uuid,
        rule_id -> Uuid,
        sequence -> Int4,
        enabled -> Bool,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    business_rule_logs (id) {
        id -> Int8,
        rule_id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        entity_id -> Text,
        entity_type -> Text,
        execution_result -> Text,
        input_context -> Nullable<Jsonb>,
        output_context -> Nullable<Jsonb>,
        error_message -> Nullable<Text>,
        execution_time_ms -> Int4,
        executed_by -> Nullable<Text>,
        executed_at -> Timestamptz,
    }
}

diesel::table! {
    business_rule_versions (tenant_id) {
        tenant_id -> Uuid,
        version -> Int8,
    }
}

diesel::joinable!(business_rule_set_members -> business_rule_sets (rule_set_id));
diesel::joinable!(business_rule_set_members -> business_rules (rule_id));
diesel::joinable!(business_rule_logs -> business_rules (rule_id));
diesel::allow_tables_to_appear_in_same_query!(
    business_rules,
    business_rule_sets,
    business_rule_set_members,
    business_rule_logs,
);
