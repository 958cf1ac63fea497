//! The table the onboarding module owns.

diesel::table! {
    onboarding_requests (id) {
        id -> Uuid,
        email -> Text,
        token_hash -> Text,
        status -> Text,
        first_name -> Text,
        last_name -> Text,
        organization_name -> Text,
        locale -> Nullable<Text>,
        marketing_consent -> Bool,
        client_ip -> Nullable<Text>,
        password_hash -> Nullable<Text>,
        expires_at -> Timestamptz,
        last_email_sent_at -> Timestamptz,
        completed_at -> Nullable<Timestamptz>,
        tenant_id -> Nullable<Uuid>,
        organization_id -> Nullable<Uuid>,
        user_id -> Nullable<Uuid>,
        progress_job_id -> Nullable<Uuid>,
        preparation_completed_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}
