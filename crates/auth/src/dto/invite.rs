//! `POST /auth/users/resend-invite` bodies.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Deserialize, ToSchema)]
pub struct ResendInviteRequest {
    /// The user to invite again.
    pub id: Uuid,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InviteResent {
    pub ok: bool,
    /// `invite_email_failed` when the token was issued but the e-mail could not be sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}
