//! The tables the assistant owns.

diesel::table! {
    ai_agent_runtime_overrides (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        agent_id -> Nullable<Text>,
        provider_id -> Nullable<Text>,
        model_id -> Nullable<Text>,
        base_url -> Nullable<Text>,
        api_key_encrypted -> Nullable<Text>,
        allowed_override_providers -> Nullable<Jsonb>,
        allowed_override_models_by_provider -> Jsonb,
        input_moderation -> Nullable<Bool>,
        loop_disabled -> Nullable<Bool>,
        loop_max_steps -> Nullable<Int4>,
        loop_max_tool_calls -> Nullable<Int4>,
        loop_max_wall_clock_ms -> Nullable<Int4>,
        loop_max_tokens -> Nullable<Int4>,
        loop_stop_when_json -> Nullable<Jsonb>,
        loop_active_tools_json -> Nullable<Jsonb>,
        updated_by_user_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    ai_agent_mutation_policy_overrides (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        agent_id -> Text,
        mutation_policy -> Text,
        notes -> Nullable<Text>,
        created_by_user_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    ai_agent_prompt_overrides (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        agent_id -> Text,
        version -> Int4,
        sections -> Jsonb,
        notes -> Nullable<Text>,
        created_by_user_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    ai_tenant_model_allowlists (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        allowed_providers -> Nullable<Jsonb>,
        allowed_models_by_provider -> Jsonb,
        updated_by_user_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    ai_pending_actions (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        agent_id -> Text,
        tool_name -> Text,
        conversation_id -> Nullable<Text>,
        target_entity_type -> Nullable<Text>,
        target_record_id -> Nullable<Text>,
        normalized_input -> Jsonb,
        field_diff -> Jsonb,
        record_version -> Nullable<Text>,
        idempotency_key -> Text,
        created_by_user_id -> Nullable<Uuid>,
        status -> Text,
        execution_result -> Nullable<Jsonb>,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
        resolved_at -> Nullable<Timestamptz>,
        resolved_by_user_id -> Nullable<Uuid>,
    }
}

diesel::table! {
    ai_token_usage_events (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        user_id -> Nullable<Uuid>,
        agent_id -> Text,
        module_id -> Text,
        session_id -> Uuid,
        turn_id -> Uuid,
        step_index -> Int4,
        provider_id -> Text,
        model_id -> Text,
        input_tokens -> Int8,
        output_tokens -> Int8,
        cached_input_tokens -> Nullable<Int8>,
        reasoning_tokens -> Nullable<Int8>,
        finish_reason -> Nullable<Text>,
        loop_abort_reason -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    ai_token_usage_daily (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        day -> Date,
        agent_id -> Text,
        model_id -> Text,
        provider_id -> Text,
        input_tokens -> Int8,
        output_tokens -> Int8,
        cached_input_tokens -> Int8,
        reasoning_tokens -> Int8,
        step_count -> Int8,
        turn_count -> Int8,
        session_count -> Int8,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    ai_chat_conversations (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        conversation_id -> Text,
        agent_id -> Text,
        owner_user_id -> Uuid,
        title -> Nullable<Text>,
        status -> Text,
        visibility -> Text,
        page_context -> Nullable<Jsonb>,
        last_message_at -> Nullable<Timestamptz>,
        imported_from_local_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
        /// Generated: `COALESCE(last_message_at, created_at)`, never written.
        activity_at -> Timestamptz,
    }
}

diesel::table! {
    ai_chat_conversation_participants (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        conversation_id -> Uuid,
        user_id -> Uuid,
        role -> Text,
        last_read_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    ai_chat_messages (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        conversation_id -> Uuid,
        client_message_id -> Nullable<Text>,
        role -> Text,
        content -> Text,
        ui_parts -> Nullable<Jsonb>,
        attachment_ids -> Nullable<Jsonb>,
        files_metadata -> Nullable<Jsonb>,
        model -> Nullable<Text>,
        metadata -> Nullable<Jsonb>,
        created_by_user_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    ai_session_tokens (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        user_id -> Uuid,
        token_hash -> Text,
        expires_at -> Timestamptz,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    ai_moderation_flags (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        agent_id -> Text,
        user_id -> Nullable<Uuid>,
        provider_id -> Text,
        model_id -> Text,
        categories -> Jsonb,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(ai_chat_conversation_participants -> ai_chat_conversations (conversation_id));
diesel::joinable!(ai_chat_messages -> ai_chat_conversations (conversation_id));

diesel::allow_tables_to_appear_in_same_query!(
    ai_chat_conversations,
    ai_chat_conversation_participants,
    ai_chat_messages,
);
