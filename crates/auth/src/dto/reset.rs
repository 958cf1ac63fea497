//! Password reset forms and answers.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ResetForm {
    pub email: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OkTrue {
    pub ok: bool,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ResetConfirmForm {
    pub token: Option<String>,
    pub password: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ResetConfirmed {
    pub ok: bool,
    pub redirect: String,
}
