//! `POST /onboarding/onboarding`: self-service sign-up.

use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, post, web};
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;
use stoa_core::http::{TrustedProxyDepth, client_ip};
use stoa_core::rate_limit::{Layers, Quota};

use crate::dto::{SubmitForm, SubmitResponse};
use crate::error::OnboardingError;
use crate::routes::{State, gate};
use crate::service;
use crate::state::OnboardingState;

/// The least time an accepted submission takes: both paths (new e-mail,
/// e-mail with an account) are padded to it, on top of doing the same work,
/// so response times do not tell them apart.
pub const MIN_ANSWER_TIME: Duration = Duration::from_millis(250);

/// Accepts a sign-up and e-mails a verification link (valid 24 h, single
/// use). Counted per client address before anything else, then per e-mail.
/// A repeat for a pending e-mail refreshes the request and its link (the
/// earlier link stops working). An e-mail that already has an account gets
/// the same answer, in the same time; its owner is told by e-mail instead.
#[utoipa::path(
    tag = "Onboarding",
    request_body = SubmitForm,
    responses(
        (status = 201, body = SubmitResponse, description = "Accepted; a verification e-mail is on its way (`X-RateLimit-Limit`, `X-RateLimit-Remaining`)"),
        (status = 400, body = ErrorBody, description = "`{ok:false, error:\"Please check the form and try again.\", fieldErrors:{field: message}}` naming every failing field (password policy, matching confirmation, accepted terms); `{ok:false, error:\"Invalid payload\"}` for a body that is not JSON"),
        (status = 404, body = ErrorBody, description = "`{ok:false, error}`: self-service onboarding is disabled"),
        (status = 429, body = ErrorBody, description = "Too many submissions from this client or for this e-mail (`Retry-After`, `X-RateLimit-Reset`)"),
    )
)]
#[post("/onboarding/onboarding")]
pub async fn submit(req: HttpRequest, state: State, body: web::Bytes) -> AppResult<HttpResponse> {
    // No caller yet: the lookup spans tenants (an audited bypass, `stoa_core::rls`).
    stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope("onboarding"));
    gate(&state)?;
    let ip = client_ip(&req, TrustedProxyDepth(state.config.trust_proxy_depth));
    let client = Layers::new(&*state.limiter).layer(
        format!("onboarding:ip:{}", ip.as_deref().unwrap_or("-")),
        state.config.submit_per_client,
    );
    let quota = client.reserve()?;
    match accept(&state, &body, ip).await {
        // The e-mail's own limit refused it: its headers, not the client's.
        Err(err) if err.status() == StatusCode::TOO_MANY_REQUESTS => Err(err),
        other => Quota::attach(quota, other),
    }
}

async fn accept(
    state: &OnboardingState,
    body: &[u8],
    ip: Option<String>,
) -> AppResult<HttpResponse> {
    let form: SubmitForm = match stoa_core::extract::parse_json(body) {
        Ok(form) => form,
        Err(err) if not_json(&err) => return Err(OnboardingError::InvalidPayload.into()),
        Err(err) => return Err(err.ok_false()),
    };
    let submission = service::validate(form, &*state.accounts)?;
    let started = Instant::now();
    // Per e-mail, whether or not it has an account: a refusal tells nothing.
    Layers::new(&*state.limiter)
        .layer(
            format!("onboarding:email:{}", submission.email),
            state.config.submit_per_email,
        )
        .reserve()?;
    let hash = state.accounts.hash_password(&submission.password).await?;
    let email = submission.email.clone();
    service::submit(state, submission, hash, ip).await?;
    if let Some(rest) = MIN_ANSWER_TIME.checked_sub(started.elapsed()) {
        tokio_sleep(rest).await;
    }
    Ok(HttpResponse::Created().json(SubmitResponse { ok: true, email }))
}

/// Whether `err` is about a body that is not JSON at all.
fn not_json(err: &stoa_core::AppError) -> bool {
    err.issues()
        .is_some_and(|issues| issues.iter().any(|i| i.code == "invalid_json"))
}

async fn tokio_sleep(d: Duration) {
    actix_web::rt::time::sleep(d).await;
}
