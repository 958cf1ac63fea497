//! `POST /auth/users/resend-invite`: a new invitation link for a user who has
//! not chosen a password yet.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, post, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use utoipa::ToSchema;
use uuid::Uuid;

use stoa_core::rate_limit::Quota;

use super::State;
use crate::invite::ResendInvite;
use crate::limits;
use crate::schema::{user_roles, users};
use crate::service::UserRow;
use crate::state::AuthState;

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

/// 400 `{error:"Validation failed", fieldErrors:{id:[..]}}` (the reference's body; its status was 422).
fn validation_failed(message: &str) -> AppError {
    AppError::bad_request("Validation failed").with_field("fieldErrors", json!({"id": [message]}))
}

fn requested_id(body: &[u8]) -> AppResult<Uuid> {
    stoa_core::extract::check_json_body(body)?;
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    match value.get("id") {
        None | Some(Value::Null) => Err(validation_failed("Required")),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map_err(|_| validation_failed("Invalid uuid")),
        Some(_) => Err(validation_failed("Expected a uuid string")),
    }
}

/// Invalidates the user's earlier tokens, issues an invitation valid 48 hours
/// and mails `<APP_URL>/reset/<token>` (`auth.users.create`). Limited per
/// invited user (3 per 5 minutes), so an administrator working through a list
/// is never blocked. Users the caller cannot see (another tenant, outside its
/// organizations, super administrators for anyone else) answer 404 like
/// unknown ones.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = ResendInviteRequest,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = InviteResent),
        (status = 400, body = ErrorBody, description = "`{error:\"Validation failed\", fieldErrors}` (malformed id), or invalid request origin"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "User not found (or not visible to the caller)"),
        (status = 409, body = ErrorBody, description = "User already has a password"),
        (status = 429, body = ErrorBody),
        (status = 500, body = ErrorBody, description = "The invitation e-mail origin (APP_URL) is not configured"),
    )
)]
#[post("/auth/users/resend-invite")]
pub async fn resend_invite(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    let mut quota = limits::resend_invite(&state, None).peek();
    let result = resend(&req, &ctx, &state, &body, &mut quota).await;
    Quota::attach(quota, result)
}

async fn resend(
    req: &HttpRequest,
    ctx: &AuthContext,
    state: &AuthState,
    body: &[u8],
    quota: &mut Option<Quota>,
) -> AppResult<HttpResponse> {
    ctx.require("auth.users.create")?;
    let id = requested_id(body)?;
    let attempts = limits::resend_invite(state, Some(id));
    *quota = attempts.peek();

    let not_found = || AppError::not_found("User not found");
    let mut conn = state.db.conn().await?;
    let mut query = users::table
        .filter(users::id.eq(id))
        .filter(users::deleted_at.is_null())
        .select(UserRow::as_select())
        .into_boxed();
    if !ctx.is_super_admin() {
        query = query.filter(users::tenant_id.eq(ctx.tenant_id.ok_or_else(not_found)?));
    }
    let user = query
        .first(&mut *conn)
        .await
        .optional()?
        .ok_or_else(not_found)?;
    if !ctx.is_super_admin() {
        // An organization-restricted caller reaches only users of its organizations.
        if !ctx.may_write_organization(user.organization_id) {
            return Err(not_found());
        }
        // Super administrators are hidden from everyone else: answering
        // anything but 404 (e.g. 409 "has a password") would reveal them.
        let role_ids: Vec<Uuid> = user_roles::table
            .filter(user_roles::user_id.eq(user.id))
            .select(user_roles::role_id)
            .load(&mut *conn)
            .await?;
        if crate::acl::is_super_admin(&mut conn, user.id, &role_ids).await? {
            return Err(not_found());
        }
    }
    drop(conn);
    match attempts.reserve() {
        Ok(reserved) => *quota = reserved,
        Err(limited) => {
            *quota = None;
            return Err(limited);
        }
    }
    if user.password_hash.is_some() {
        return Err(AppError::conflict("User already has a password"));
    }
    let Some(app_url) = state.config.app_url.clone() else {
        return Err(AppError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Invitation email origin is not configured",
        ));
    };
    if let Some(origin) = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        && !state.config.allowed_origins.iter().any(|o| o == origin)
    {
        return Err(AppError::bad_request("Invalid request origin"));
    }

    let email = user.email.clone();
    let actor = ctx.actor();
    let (token, _) = state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                stoa_core::command::execute(conn, &actor, ResendInvite { user }).await
            })
        })
        .await?;
    let warning = crate::invite::send_invitation(state, &app_url, &email, &token)
        .await
        .map(String::from);
    Ok(HttpResponse::Ok().json(InviteResent { ok: true, warning }))
}
