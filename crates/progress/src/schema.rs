//! Tables owned by the progress module.

diesel::table! {
    progress_jobs (id) {
        id -> Uuid,
        job_type -> Text,
        name -> Text,
        description -> Nullable<Text>,
        status -> Text,
        progress_percent -> Int2,
        processed_count -> Int4,
        total_count -> Nullable<Int4>,
        eta_seconds -> Nullable<Int4>,
        started_by_user_id -> Nullable<Uuid>,
        started_at -> Nullable<Timestamptz>,
        heartbeat_at -> Nullable<Timestamptz>,
        finished_at -> Nullable<Timestamptz>,
        result_summary -> Nullable<Jsonb>,
        error_message -> Nullable<Text>,
        meta -> Nullable<Jsonb>,
        cancellable -> Bool,
        cancelled_by_user_id -> Nullable<Uuid>,
        cancel_requested_at -> Nullable<Timestamptz>,
        parent_job_id -> Nullable<Uuid>,
        partition_index -> Nullable<Int4>,
        partition_count -> Nullable<Int4>,
        tenant_id -> Uuid,
        organization_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}
