//! Tables written by the command bus and the outbox (read by stoa-audit-logs).

diesel::table! {
    action_logs (id) {
        id -> Uuid,
        tenant_id -> Nullable<Uuid>,
        organization_id -> Nullable<Uuid>,
        actor_user_id -> Nullable<Uuid>,
        command_id -> Text,
        action_label -> Nullable<Text>,
        action_type -> Text,
        resource_kind -> Nullable<Text>,
        resource_id -> Nullable<Text>,
        parent_resource_kind -> Nullable<Text>,
        parent_resource_id -> Nullable<Text>,
        execution_state -> Text,
        undo_token -> Nullable<Text>,
        command_payload -> Nullable<Jsonb>,
        snapshot_before -> Nullable<Jsonb>,
        snapshot_after -> Nullable<Jsonb>,
        changes_json -> Nullable<Jsonb>,
        changed_fields -> Array<Text>,
        primary_changed_field -> Nullable<Text>,
        context_json -> Nullable<Jsonb>,
        source_key -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        other_tenant_ids -> Array<Uuid>,
        actor_is_super_admin -> Bool,
    }
}

// A view (migrations `core_access_reads`, `core_access_read_repeats`): one
// row per record read, expanded from `access_reads`. `created_at` is the
// read's time, `stored_at` its row's (at most `access::REPEAT_SPAN` earlier):
// bound `stored_at` too, it reaches the indexes. Read it; write `access_reads`.
diesel::table! {
    access_logs (id) {
        id -> Uuid,
        tenant_id -> Nullable<Uuid>,
        organization_id -> Nullable<Uuid>,
        actor_user_id -> Nullable<Uuid>,
        resource_kind -> Text,
        resource_id -> Text,
        access_type -> Text,
        fields -> Array<Text>,
        context_json -> Nullable<Jsonb>,
        created_at -> Timestamptz,
        stored_at -> Timestamptz,
    }
}

// One row per read: the records it read (`resource_ids`) and their entry
// ids (`entry_ids`, the ids `access_logs` shows); repeated reads of the same
// answer written behind it add their times and entry-id bases to the row.
diesel::table! {
    access_reads (id) {
        id -> Uuid,
        tenant_id -> Nullable<Uuid>,
        organization_id -> Nullable<Uuid>,
        actor_user_id -> Nullable<Uuid>,
        resource_kind -> Text,
        resource_ids -> Array<Text>,
        entry_ids -> Array<Uuid>,
        access_type -> Text,
        fields -> Array<Text>,
        context_json -> Nullable<Jsonb>,
        created_at -> Timestamptz,
        repeat_bases -> Nullable<Array<Uuid>>,
        repeat_ats -> Nullable<Array<Timestamptz>>,
    }
}

diesel::table! {
    event_outbox (id) {
        id -> Int8,
        event_id -> Uuid,
        name -> Text,
        payload -> Jsonb,
        tenant_id -> Nullable<Uuid>,
        status -> Text,
        attempts -> Int4,
        next_attempt_at -> Timestamptz,
        last_error -> Nullable<Text>,
        created_at -> Timestamptz,
        delivered_at -> Nullable<Timestamptz>,
        organization_id -> Nullable<Uuid>,
        actor_user_id -> Nullable<Uuid>,
        actor_source -> Nullable<Text>,
        command_id -> Nullable<Text>,
        action_log_id -> Nullable<Uuid>,
        resource_kind -> Nullable<Text>,
        resource_id -> Nullable<Text>,
        batch -> Nullable<Text>,
        event_count -> Int4,
        origin -> Text,
    }
}

// Each subscriber's delivery state of one outbox event.
diesel::table! {
    event_deliveries (outbox_id, subscriber) {
        outbox_id -> Int8,
        subscriber -> Text,
        status -> Text,
        attempts -> Int4,
        last_error -> Nullable<Text>,
        updated_at -> Timestamptz,
    }
}

// What write guards logged about their decisions (`GuardInput::log`).
diesel::table! {
    guard_logs (id) {
        id -> Uuid,
        tenant_id -> Nullable<Uuid>,
        organization_id -> Nullable<Uuid>,
        actor_user_id -> Nullable<Uuid>,
        guard -> Text,
        command_id -> Text,
        phase -> Text,
        resource_kind -> Nullable<Text>,
        resource_id -> Nullable<Text>,
        outcome -> Text,
        message -> Text,
        data -> Nullable<Jsonb>,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(event_deliveries -> event_outbox (outbox_id));
diesel::allow_tables_to_appear_in_same_query!(event_outbox, event_deliveries);
