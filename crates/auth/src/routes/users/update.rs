//! `PUT /auth/users`.

use actix_web::{HttpResponse, put};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::with_operation;
use crate::accounts::users;
use crate::dto::{Ok, UpdateUser};
use crate::routes::State;

/// Updates a user; `roles` replaces the memberships, a password change ends
/// the user's sessions, an e-mail change is told to the old address. Callers
/// changing their own e-mail or password send `currentPassword` too.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = UpdateUser,
    responses(
        (status = 200, body = Ok),
        (status = 404, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "Too many wrong current passwords (`Retry-After`)"),
    )
)]
#[put("/auth/users")]
pub async fn update_user(
    ctx: AuthContext,
    state: State,
    body: Json<UpdateUser>,
) -> AppResult<HttpResponse> {
    ctx.require("auth.users.edit")?;
    let (op, email_change) = users::update(&state, &ctx, body.into_inner()).await?;
    if let Some(change) = email_change {
        crate::service::profile::notify_email_change(&state, &change.old, &change.new).await;
    }
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok { ok: true }))
}
