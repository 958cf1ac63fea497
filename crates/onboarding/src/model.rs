//! Rows of `onboarding_requests`.

use diesel::prelude::*;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::onboarding_requests;

/// A request still waiting for its link to be opened.
pub const PENDING: &str = "pending";
/// A verified request: its tenant exists.
pub const COMPLETED: &str = "completed";

/// A sign-up request.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = onboarding_requests)]
pub struct RequestRow {
    pub id: Uuid,
    pub email: String,
    pub status: String,
    pub first_name: String,
    pub last_name: String,
    pub organization_name: String,
    pub locale: Option<String>,
    pub marketing_consent: bool,
    pub client_ip: Option<String>,
    pub password_hash: Option<String>,
    pub expires_at: OffsetDateTime,
    pub completed_at: Option<OffsetDateTime>,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub user_id: Option<Uuid>,
    pub progress_job_id: Option<Uuid>,
    pub preparation_completed_at: Option<OffsetDateTime>,
}
