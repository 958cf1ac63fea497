//! `GET /onboarding/onboarding/verify?token=`: opens the e-mailed link.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, get};
use stoa_acl::{AUTH_COOKIE, SESSION_COOKIE};
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Query};

use crate::dto::{VerifyAnswer, VerifyQuery, VerifyRefused, VerifyResponse};
use crate::html::{page, prefers_html};
use crate::routes::{LOGIN_TENANT_COOKIE, State, gate};
use crate::service;

/// The codes of a link that did not verify: answered 200 like a verified
/// one (the spec's status), the body saying what happened.
const LINK_OUTCOMES: &[&str] = &[
    "invalid_token",
    "token_used",
    "token_expired",
    "account_exists",
];

/// Verifies the e-mail and creates the workspace: the tenant, its root
/// organization and the first user (role `admin`, the password given at
/// sign-up), all or nothing, with every module's initial data; queues
/// the demo data. Answers 200 whatever the link's outcome: JSON (`ok:true`
/// with the workspace, or `ok:false` with a `code`), or a small HTML page
/// saying the same when the client asks for `text/html` (a browser following
/// the link). A used, expired or unknown link changes nothing; two
/// concurrent openings of one link create one workspace (the second finds
/// the link used). Never opens a session: the answer expires the session
/// cookies a browser may hold, and the new admin signs in with their password.
#[utoipa::path(
    tag = "Onboarding",
    params(VerifyQuery),
    responses(
        (status = 200, description = "Every outcome of the link. Verified: `{ok:true, tenantId, ...}` and the `om_login_tenant` cookie. Not verified: `{ok:false, error, code}` with `code` `invalid_token` (missing, malformed, unknown or replaced by a newer link), `token_used` (already verified), `token_expired` (older than 24 hours) or `account_exists` (the e-mail got an account meanwhile); nothing changed. Browsers (`Accept: text/html`) get a page saying the same. The session cookies are expired either way", content(
            (VerifyAnswer = "application/json"),
            (String = "text/html"),
        )),
        (status = 404, body = ErrorBody, description = "`{ok:false, error}`: self-service onboarding is disabled"),
    )
)]
#[get("/onboarding/onboarding/verify")]
pub async fn verify(
    req: HttpRequest,
    state: State,
    q: Result<Query<VerifyQuery>, AppError>,
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
        // A query that does not parse holds no usable token.
        let token = q
            .ok()
            .and_then(|q| q.into_inner().token)
            .unwrap_or_default();
        service::verify(&state, token.trim()).await
    }
    .await;
    let verified = match result {
        Ok(verified) => verified,
        Err(err) if err.code().is_some_and(|c| LINK_OUTCOMES.contains(&c)) => {
            return Ok(refused(&err, &state, html));
        }
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
    let mut res = answer();
    res.cookie(cookie);
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
    Ok(res.json(VerifyAnswer::Verified(VerifyResponse {
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
    })))
}

/// A 200, never cached, that expires the session cookies (the reference
/// clears them too): whoever was signed in on this browser is not once the
/// link is opened, and the link itself signs nobody in.
fn answer() -> HttpResponseBuilder {
    let mut res = HttpResponse::Ok();
    res.insert_header((header::CACHE_CONTROL, "no-store"));
    for name in [AUTH_COOKIE, SESSION_COOKIE] {
        let mut gone = Cookie::build(name, "").path("/").finish();
        gone.make_removal();
        res.cookie(gone);
    }
    res
}

/// A link that did not verify: 200 with `{ok:false, error, code}`, or a
/// page saying so.
fn refused(err: &AppError, state: &State, html: bool) -> HttpResponse {
    let mut res = answer();
    if html {
        let link = sign_in_link(err, state);
        return res.content_type("text/html; charset=utf-8").body(page(
            "This link cannot be used",
            err.message(),
            link.as_ref().map(|(href, label)| (href.as_str(), *label)),
        ));
    }
    res.json(VerifyAnswer::Refused(VerifyRefused {
        ok: false,
        error: err.message().to_string(),
        code: err.code().unwrap_or("invalid_token").to_string(),
    }))
}

/// Where a refused link sends its visitor on: signing in, when the
/// workspace or account exists.
fn sign_in_link(err: &AppError, state: &State) -> Option<(String, &'static str)> {
    match err.code() {
        Some("token_used" | "account_exists") => Some((state.config.login_base(), "Sign in")),
        _ => None,
    }
}

/// The error as a page, with the same status.
fn error_page(err: &AppError, state: &State) -> HttpResponse {
    let link = sign_in_link(err, state);
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
