//! Tables owned by the job queue (stoa-jobs).

diesel::table! {
    job_queue (id) {
        id -> Uuid,
        kind -> Text,
        payload -> Jsonb,
        progress_job_id -> Nullable<Uuid>,
        status -> Text,
        attempts -> Int4,
        max_attempts -> Int4,
        run_after -> Timestamptz,
        locked_until -> Nullable<Timestamptz>,
        locked_by -> Nullable<Text>,
        last_error -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        tenant_id -> Nullable<Uuid>,
        organization_id -> Nullable<Uuid>,
        created_by_user_id -> Nullable<Uuid>,
        created_by_api_key_id -> Nullable<Uuid>,
        schedule -> Nullable<Text>,
        items_failed -> Int4,
        trace_parent -> Nullable<Text>,
    }
}

diesel::table! {
    job_units (job_id, unit) {
        job_id -> Uuid,
        unit -> Text,
        done_at -> Timestamptz,
        items -> Int4,
        failed_items -> Nullable<Jsonb>,
    }
}

diesel::table! {
    job_schedules (name) {
        name -> Text,
        kind -> Text,
        payload -> Jsonb,
        period -> Interval,
        next_run_at -> Timestamptz,
        last_run_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}
