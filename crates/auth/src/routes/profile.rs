use actix_web::{HttpResponse, get, put, web};
use serde::{Deserialize, Serialize};
use stoa_acl::AuthContext;
use stoa_core::error::{ErrorBody, Issue};
use stoa_core::{AppError, AppResult};
use utoipa::ToSchema;

use super::{State, auth_cookie};
use crate::commands::UpdateProfileCommand;
use crate::password::{MAX_PASSWORD_LEN, hash_password, verify_password};
use crate::service::{self, normalize_email};

#[derive(Debug, Serialize, ToSchema)]
pub struct Profile {
    pub email: String,
    /// `null` when unset.
    pub name: Option<String>,
    pub roles: Vec<String>,
}

/// The caller's profile.
#[utoipa::path(
    tag = "Authentication & Accounts",
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Profile),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/auth/profile")]
pub async fn get_profile(ctx: AuthContext) -> AppResult<web::Json<Profile>> {
    // The session check already read the live user row: no further query.
    let (Some(_), Some(email)) = (ctx.user_id, ctx.email.clone()) else {
        return Err(AppError::not_found("User not found"));
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

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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

fn invalid(message: &'static str, path: &'static str, detail: &str) -> AppError {
    AppError::bad_request(message).with_issues(vec![Issue {
        path: vec![path.into()],
        message: detail.to_string(),
        code: "invalid".into(),
    }])
}

/// Changes the caller's e-mail and/or password. A password change needs the
/// current password, ends the caller's other sessions and returns a new token.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = ProfileUpdate,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = ProfileUpdated, description = "Updated; a fresh `auth_token` cookie is set"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
    )
)]
#[put("/auth/profile")]
pub async fn update_profile(
    ctx: AuthContext,
    state: State,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    const INVALID: &str = "Invalid profile update.";
    stoa_core::extract::check_json_body(&body)?;
    let update: ProfileUpdate =
        serde_json::from_slice(&body).map_err(|e| invalid(INVALID, "body", &e.to_string()))?;
    let user_id = ctx
        .user_id
        .ok_or_else(|| AppError::not_found("User not found"))?;
    let email = update
        .email
        .as_deref()
        .map(normalize_email)
        .filter(|e| !e.is_empty());
    let password = update.password.filter(|p| !p.is_empty());
    if email.is_none() && password.is_none() {
        return Err(invalid(
            INVALID,
            "email",
            "Provide an e-mail or a new password.",
        ));
    }
    if password.is_some()
        != update
            .current_password
            .as_deref()
            .is_some_and(|p| !p.is_empty())
    {
        return Err(invalid(
            INVALID,
            "currentPassword",
            "The current password is required to set a new one.",
        ));
    }
    if let Some(email) = &email
        && (email.len() > 254
            || !email
                .split_once('@')
                .is_some_and(|(l, d)| !l.is_empty() && d.contains('.')))
    {
        return Err(invalid(INVALID, "email", "Invalid e-mail address."));
    }
    if let Some(password) = &password {
        if password.len() > MAX_PASSWORD_LEN {
            return Err(invalid(INVALID, "password", "Password is too long."));
        }
        state
            .config
            .password_policy
            .check(password)
            .map_err(|m| invalid("Password does not meet the requirements.", "password", &m))?;
    }

    let mut conn = state.db.conn().await?;
    let user = service::user_by_id(&mut conn, user_id)
        .await?
        .ok_or_else(|| AppError::not_found("User not found"))?;
    let mut new_hash = None;
    if let Some(password) = password {
        let current = update.current_password.unwrap_or_default();
        if !verify_password(current, user.password_hash.clone()).await? {
            return Err(invalid(
                "Current password is incorrect.",
                "currentPassword",
                "Current password is incorrect.",
            ));
        }
        new_hash = Some(hash_password(password).await?);
    }
    if let Some(email) = &email
        && *email != user.email
        && service::email_taken(&mut conn, user.tenant_id, email, user.id).await?
    {
        return Err(invalid(
            "Email already in use",
            "email",
            "Email already in use",
        ));
    }
    let final_email = email.unwrap_or_else(|| user.email.clone());
    let session = ctx.session_id;
    let command = UpdateProfileCommand {
        user: user_id,
        email: final_email.clone(),
        password_hash: new_hash,
        keep_session: session,
    };
    let actor = ctx.actor();
    let (_, op) = state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move { stoa_core::command::execute(conn, &actor, command).await })
        })
        .await?;
    let mut user = user;
    user.email = final_email.clone();
    let token = state.access_token(&user, session.unwrap_or_default(), ctx.acl.roles.clone())?;
    Ok(stoa_core::command::with_operation(HttpResponse::Ok(), &op)
        .cookie(auth_cookie(&state, &token))
        .json(ProfileUpdated {
            ok: true,
            email: final_email,
        }))
}
