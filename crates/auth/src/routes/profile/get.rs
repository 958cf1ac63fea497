//! `GET /auth/profile`.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;

use crate::dto::Profile;
use crate::error::AuthError;

/// The caller's profile.
#[utoipa::path(
    tag = "Authentication & Accounts",
    responses(
        (status = 200, body = Profile),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/auth/profile")]
pub async fn get_profile(ctx: AuthContext) -> AppResult<web::Json<Profile>> {
    // The session check already read the live user row: no further query.
    let (Some(_), Some(email)) = (ctx.user_id, ctx.email.clone()) else {
        return Err(AuthError::UserNotFound.into());
    };
    Ok(web::Json(Profile {
        email,
        name: ctx
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from),
        roles: ctx.acl.roles.clone(),
    }))
}
