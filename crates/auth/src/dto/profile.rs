//! `GET`/`PUT /auth/profile` bodies.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use validator::Validate;

#[derive(Debug, Serialize, ToSchema)]
pub struct Profile {
    pub email: String,
    /// `null` when unset.
    pub name: Option<String>,
    pub roles: Vec<String>,
}

#[derive(Debug, Default, Deserialize, ToSchema, Validate)]
#[serde(rename_all = "camelCase")]
pub struct ProfileUpdate {
    pub email: Option<String>,
    /// Required with `password`.
    pub current_password: Option<String>,
    pub password: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProfileUpdated {
    pub ok: bool,
    pub email: String,
}
