//! Request and response bodies.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

/// `POST /onboarding/onboarding`. Every field is checked, and each missing or
/// invalid one is named in `fieldErrors`.
#[derive(Clone, Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmitForm {
    /// The e-mail the verification link goes to; the new admin's login.
    #[schema(example = "ada@example.com")]
    pub email: Option<String>,
    /// 1 to 120 characters.
    pub first_name: Option<String>,
    /// 1 to 120 characters.
    pub last_name: Option<String>,
    /// The workspace's (tenant's and root organization's) name, 1 to 240 characters.
    pub organization_name: Option<String>,
    /// Must meet the password policy (`OM_PASSWORD_*`).
    #[schema(format = Password)]
    pub password: Option<String>,
    /// Must equal `password`.
    #[schema(format = Password)]
    pub confirm_password: Option<String>,
    /// Must be `true`.
    pub terms_accepted: Option<bool>,
    /// Recorded as the new admin's `marketing_email` consent when `true`.
    pub marketing_consent: Option<bool>,
    /// 2 to 10 characters (`en`, `pt-BR`).
    pub locale: Option<String>,
}

/// The same answer for every accepted submission, whether or not the e-mail
/// already has an account.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SubmitResponse {
    pub ok: bool,
    /// The e-mail, normalised (trimmed, lower-case).
    pub email: String,
}

/// `GET /onboarding/onboarding/verify`.
#[derive(Clone, Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VerifyQuery {
    /// The token of the e-mailed link (64 hex digits).
    pub token: Option<String>,
}

/// A verified sign-up (JSON clients; browsers get a page).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyResponse {
    pub ok: bool,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub user_id: Uuid,
    pub email: String,
    /// The job preparing the demo data (`GET /progress/jobs/{id}` once signed in).
    pub progress_job_id: Option<Uuid>,
    /// `GET /onboarding/onboarding/status?tenantId=..` (with the
    /// `om_login_tenant` cookie this answer sets).
    pub status_url: String,
    /// Where the new admin signs in.
    pub login_url: String,
}

/// A link that did not verify (200, like every outcome of the link: the
/// body says what happened).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct VerifyRefused {
    /// Always `false`.
    pub ok: bool,
    /// What happened, for people.
    #[schema(example = "This verification link has expired. Please sign up again.")]
    pub error: String,
    /// What happened, for programs: `invalid_token` (missing, malformed,
    /// unknown or replaced by a newer link), `token_used` (already
    /// verified), `token_expired` (older than 24 hours) or `account_exists`
    /// (the e-mail got an account meanwhile).
    #[schema(example = "token_expired")]
    pub code: String,
}

/// What `GET /onboarding/onboarding/verify` answers as JSON: the verified
/// workspace, or why the link did not verify.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum VerifyAnswer {
    Verified(VerifyResponse),
    Refused(VerifyRefused),
}

/// `GET /onboarding/onboarding/status`.
#[derive(Clone, Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
pub struct StatusQuery {
    /// The verified workspace's tenant.
    #[param(value_type = Option<Uuid>)]
    pub tenant_id: Option<String>,
    /// Alias of `tenantId`.
    #[param(value_type = Option<Uuid>)]
    pub tenant: Option<String>,
}

/// The demo data being prepared.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Preparation {
    /// `pending`, `running`, `completed`, `failed` or `cancelled` (the job's);
    /// `completed` when there was nothing to prepare.
    pub status: String,
    pub progress_percent: i16,
    pub processed_count: i32,
    pub total_count: Option<i32>,
    pub progress_job_id: Option<Uuid>,
}

/// A verified workspace's state.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusResponse {
    pub ok: bool,
    /// The request's status (`completed` once verified).
    pub status: String,
    /// Verified and the demo data prepared.
    pub ready: bool,
    pub tenant_id: Uuid,
    pub preparation: Preparation,
    /// Where to sign in, once ready.
    pub login_url: Option<String>,
}
