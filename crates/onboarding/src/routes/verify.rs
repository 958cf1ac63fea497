//! `GET /onboarding/onboarding/verify?token=`: opens the e-mailed link.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get};
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Query};

use crate::dto::{VerifyQuery, VerifyResponse};
use crate::html::{page, prefers_html};
use crate::routes::{LOGIN_TENANT_COOKIE, State, gate};
use crate::service;

/// Verifies the e-mail and creates the workspace: the tenant, its root
/// organization and the first user (role `admin`, the password given at
/// sign-up) in one transaction, with every module's initial data; queues
/// the demo data. Answers JSON, or a small HTML page with a link onward
/// when the client asks for `text/html` (a browser following the link).
/// A used, expired or unknown link changes nothing; two concurrent openings
/// of one link create one workspace (the second finds the link used).
#[utoipa::path(
    tag = "Onboarding",
    params(VerifyQuery),
    responses(
        (status = 200, description = "The workspace exists; `om_login_tenant` cookie set. Browsers (`Accept: text/html`) get a page linking to the sign-in page", content(
            (VerifyResponse = "application/json"),
            (String = "text/html"),
        )),
        (status = 400, body = ErrorBody, description = "`{ok:false, error, code:\"invalid_token\"}`: missing, malformed or unknown token (or one replaced by a newer link)"),
        (status = 404, body = ErrorBody, description = "`{ok:false, error}`: self-service onboarding is disabled"),
        (status = 409, body = ErrorBody, description = "`code: token_used` (already verified) or `code: account_exists` (the e-mail got an account meanwhile)"),
        (status = 410, body = ErrorBody, description = "`code: token_expired`: older than 24 hours"),
    )
)]
#[get("/onboarding/onboarding/verify")]
pub async fn verify(
    req: HttpRequest,
    state: State,
    q: Query<VerifyQuery>,
) -> AppResult<HttpResponse> {
    // No caller yet: the lookup spans tenants (an audited bypass, `stoa_core::rls`).
    stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope("onboarding"));
    let html = prefers_html(
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    );
    let result = async {
        gate(&state)?;
        let token = q.token.as_deref().map(str::trim).unwrap_or("");
        service::verify(&state, token).await
    }
    .await;
    let verified = match result {
        Ok(verified) => verified,
        Err(err) if html => return Ok(error_page(&err, &state)),
        Err(err) => return Err(err),
    };
    let login_url = state.config.login_url(verified.tenant_id);
    let cookie = Cookie::build(LOGIN_TENANT_COOKIE, verified.tenant_id.to_string())
        .path("/")
        .same_site(SameSite::Lax)
        .secure(login_url.starts_with("https://"))
        .max_age(actix_web::cookie::time::Duration::days(14))
        .finish();
    let mut res = HttpResponse::Ok();
    res.cookie(cookie)
        .insert_header((header::CACHE_CONTROL, "no-store"));
    if html {
        return Ok(res.content_type("text/html; charset=utf-8").body(page(
            "Your workspace is ready",
            &format!(
                "Your e-mail {} is confirmed and your workspace has been created. \
                 Sign in with the password you chose; demo data is being added meanwhile.",
                verified.email
            ),
            Some((&login_url, "Sign in")),
        )));
    }
    Ok(res.json(VerifyResponse {
        ok: true,
        tenant_id: verified.tenant_id,
        organization_id: verified.organization_id,
        user_id: verified.user_id,
        email: verified.email,
        progress_job_id: verified.progress_job_id,
        status_url: format!(
            "/api/onboarding/onboarding/status?tenantId={}",
            verified.tenant_id
        ),
        login_url,
    }))
}

/// The error as a page, with the same status.
fn error_page(err: &AppError, state: &State) -> HttpResponse {
    let link = match err.code() {
        Some("token_used" | "account_exists") => Some((state.config.login_base(), "Sign in")),
        _ => None,
    };
    let title = match err.status().as_u16() {
        404 => "Not available",
        500.. => "Something went wrong",
        _ => "This link cannot be used",
    };
    HttpResponse::build(err.status())
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(page(
            title,
            err.message(),
            link.as_ref().map(|(href, label)| (href.as_str(), *label)),
        ))
}
