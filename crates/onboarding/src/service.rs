//! The rules of sign-up, verification and the status page. Reads take a
//! connection; writes open their transaction here (route files never do).

use diesel::prelude::*;
use diesel::sql_types::{Bool, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::Onboarding;
use stoa_core::AppError;
use stoa_core::command::Actor;
use stoa_core::error::Issue;
use time::OffsetDateTime;
use uuid::Uuid;
use validator::ValidateEmail;

use crate::commands::{Verified, VerifySignUp};
use crate::dto::{Preparation, StatusResponse, SubmitForm};
use crate::error::OnboardingError;
use crate::model::{COMPLETED, PENDING, RequestRow};
use crate::schema::onboarding_requests;
use crate::state::OnboardingState;
use crate::{mail, token};

pub use crate::commands::{COMPLETED_EVENT, FIRST_USER_ROLE};

/// Longest accepted password (stoa-auth's limit).
pub const MAX_PASSWORD_LEN: usize = 256;

/// A submission that passed every check.
#[derive(Clone, Debug)]
pub struct Submission {
    /// Trimmed, lower-case.
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub organization_name: String,
    pub password: String,
    pub locale: Option<String>,
    pub marketing_consent: bool,
}

fn issue(field: &str, message: &str, code: &'static str) -> Issue {
    Issue {
        path: vec![field.into()],
        message: message.to_string(),
        code: code.into(),
    }
}

/// A required text of `min..=max` characters (trimmed).
fn text(
    issues: &mut Vec<Issue>,
    field: &str,
    value: Option<&str>,
    max: usize,
    label: &str,
) -> String {
    let value = value.map(str::trim).unwrap_or("");
    if value.is_empty() {
        issues.push(issue(field, &format!("{label} is required."), "too_small"));
    } else if value.chars().count() > max {
        issues.push(issue(
            field,
            &format!("{label} must be at most {max} characters."),
            "too_big",
        ));
    }
    value.to_string()
}

/// Checks every field of the form, naming each one that fails; the e-mail
/// and the password as the accounts check them (the first user's address,
/// the password policy).
pub fn validate(form: SubmitForm, accounts: &dyn Onboarding) -> Result<Submission, AppError> {
    let mut issues = Vec::new();
    let email = form
        .email
        .as_deref()
        .map(str::trim)
        .unwrap_or("")
        .to_lowercase();
    if email.is_empty() {
        issues.push(issue("email", "Email is required.", "too_small"));
    } else if email.len() > 254
        || !email.validate_email()
        || accounts.first_user(&email, None, FIRST_USER_ROLE).is_err()
    {
        issues.push(issue(
            "email",
            "Enter a valid email address.",
            "invalid_string",
        ));
    }
    let first_name = text(
        &mut issues,
        "firstName",
        form.first_name.as_deref(),
        120,
        "First name",
    );
    let last_name = text(
        &mut issues,
        "lastName",
        form.last_name.as_deref(),
        120,
        "Last name",
    );
    let organization_name = text(
        &mut issues,
        "organizationName",
        form.organization_name.as_deref(),
        240,
        "Organization name",
    );
    let password = form.password.unwrap_or_default();
    if password.is_empty() {
        issues.push(issue("password", "Password is required.", "too_small"));
    } else if password.chars().count() > MAX_PASSWORD_LEN {
        issues.push(issue(
            "password",
            &format!("Password must be at most {MAX_PASSWORD_LEN} characters."),
            "too_big",
        ));
    } else if let Err(message) = accounts.check_password(&password) {
        issues.push(issue("password", &message, "weak_password"));
    }
    match form.confirm_password.as_deref() {
        None | Some("") => issues.push(issue(
            "confirmPassword",
            "Confirm your password.",
            "too_small",
        )),
        Some(confirm) if confirm != password => issues.push(issue(
            "confirmPassword",
            "Passwords do not match.",
            "custom",
        )),
        Some(_) => {}
    }
    if form.terms_accepted != Some(true) {
        issues.push(issue(
            "termsAccepted",
            "You must accept the terms to continue.",
            "invalid_literal",
        ));
    }
    let locale = match form.locale.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(l)
            if (2..=10).contains(&l.len())
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
        {
            Some(l.to_string())
        }
        Some(_) => {
            issues.push(issue(
                "locale",
                "Locale must be 2 to 10 letters, digits, '-' or '_'.",
                "invalid_string",
            ));
            None
        }
    };
    if !issues.is_empty() {
        return Err(
            AppError::bad_request("Please check the form and try again.")
                .ok_false()
                .with_issues(issues),
        );
    }
    Ok(Submission {
        email,
        first_name,
        last_name,
        organization_name,
        password,
        locale,
        marketing_consent: form.marketing_consent.unwrap_or(false),
    })
}

const UPSERT: &str = "INSERT INTO onboarding_requests (email, token_hash, first_name, last_name, \
         organization_name, locale, marketing_consent, client_ip, password_hash, expires_at, \
         last_email_sent_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now()) \
     ON CONFLICT (email) WHERE status = 'pending' DO UPDATE SET \
         token_hash = EXCLUDED.token_hash, first_name = EXCLUDED.first_name, \
         last_name = EXCLUDED.last_name, organization_name = EXCLUDED.organization_name, \
         locale = EXCLUDED.locale, marketing_consent = EXCLUDED.marketing_consent, \
         client_ip = EXCLUDED.client_ip, password_hash = EXCLUDED.password_hash, \
         expires_at = EXCLUDED.expires_at, last_email_sent_at = now(), updated_at = now()";

/// At most one sign-up e-mail per address in this window (the reference's):
/// a repeat inside it sends nothing and changes nothing.
pub const MAIL_WINDOW_SECS: i32 = 600;

/// Claims the address's mail window: `true` (and the window restarts now)
/// when the address was not mailed in the last [`MAIL_WINDOW_SECS`]. One
/// atomic upsert: a concurrent submission for the same address waits on the
/// row (or its key) until this transaction ends, then finds the window
/// taken, so two racing requests, in one process or several, send one mail.
const CLAIM_WINDOW: &str = "INSERT INTO onboarding_mail_sends (email, sent_at) VALUES ($1, now()) \
     ON CONFLICT (email) DO UPDATE SET sent_at = EXCLUDED.sent_at \
     WHERE onboarding_mail_sends.sent_at <= now() - make_interval(secs => $2) \
     RETURNING true AS claimed";

#[derive(QueryableByName)]
struct Claimed {
    #[diesel(sql_type = Bool)]
    claimed: bool,
}

/// Whether this submission may mail the address ([`CLAIM_WINDOW`]).
async fn claim_mail_window(conn: &mut AsyncPgConnection, email: &str) -> Result<bool, AppError> {
    let rows: Vec<Claimed> = diesel::sql_query(CLAIM_WINDOW)
        .bind::<Text, _>(email)
        .bind::<diesel::sql_types::Integer, _>(MAIL_WINDOW_SECS)
        .load(conn)
        .await?;
    Ok(rows.iter().any(|r| r.claimed))
}

/// Records the submission and queues its e-mail, in one transaction: a new
/// or refreshed pending request (a fresh token, the earlier link stops
/// working) with the verification link, or — when the e-mail already has an
/// account — no request and a message telling the owner so. Both paths
/// hash the password first (the caller did) and write the same number of
/// rows, so neither the answer nor its timing tells them apart.
///
/// An address mailed (either message) less than [`MAIL_WINDOW_SECS`] ago
/// gets nothing: the submission changes nothing (the earlier link keeps
/// working) and the answer is the same. The window is decided in the
/// database first ([`claim_mail_window`]), so it holds across processes and
/// races.
pub async fn submit(
    state: &OnboardingState,
    submission: Submission,
    password_hash: String,
    client_ip: Option<String>,
) -> Result<(), AppError> {
    let token = token::generate().map_err(AppError::internal)?;
    let token_hash = token::hash(&token);
    let link = state.config.verify_link(&token);
    let login = state.config.login_base();
    let expires_at = OffsetDateTime::now_utc() + state.config.token_ttl;
    let accounts = state.accounts.clone();
    state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                if !claim_mail_window(conn, &submission.email).await? {
                    return Ok(());
                }
                if accounts.email_taken(conn, &submission.email).await? {
                    let mail = mail::account_exists(&submission.email, &login);
                    stoa_mail::queue(conn, &mail, None).await?;
                    return Ok(());
                }
                diesel::sql_query(UPSERT)
                    .bind::<Text, _>(&submission.email)
                    .bind::<Text, _>(&token_hash)
                    .bind::<Text, _>(&submission.first_name)
                    .bind::<Text, _>(&submission.last_name)
                    .bind::<Text, _>(&submission.organization_name)
                    .bind::<Nullable<Text>, _>(&submission.locale)
                    .bind::<Bool, _>(submission.marketing_consent)
                    .bind::<Nullable<Text>, _>(&client_ip)
                    .bind::<Text, _>(&password_hash)
                    .bind::<Timestamptz, _>(expires_at)
                    .execute(conn)
                    .await?;
                let mail = mail::verification(
                    &submission.email,
                    &submission.first_name,
                    &submission.organization_name,
                    &link,
                );
                stoa_mail::queue(conn, &mail, None).await?;
                Ok(())
            })
        })
        .await
}

/// Opens a verification link, in one transaction: locks the request (a
/// concurrent opening of the same link waits, then finds it used), checks
/// it is pending and unexpired and that the e-mail still has no account,
/// then runs [`VerifySignUp`] through the command bus (provisioning, consent,
/// demo-data job, the request completed; logged with its event). Any
/// failure rolls everything back.
pub async fn verify(state: &OnboardingState, raw_token: &str) -> Result<Verified, AppError> {
    if !token::well_formed(raw_token) {
        return Err(OnboardingError::InvalidToken.into());
    }
    let token_hash = token::hash(raw_token);
    let accounts = state.accounts.clone();
    let registry = state.registry.clone();
    let key = state.consent_key.clone();
    let (deals, products) = (state.config.demo_deals, state.config.demo_products);
    state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let row: RequestRow = onboarding_requests::table
                    .filter(onboarding_requests::token_hash.eq(&token_hash))
                    .select(RequestRow::as_select())
                    .for_update()
                    .first(conn)
                    .await
                    .optional()?
                    .ok_or(OnboardingError::InvalidToken)?;
                if row.status == COMPLETED {
                    return Err(OnboardingError::TokenUsed.into());
                }
                if row.status != PENDING {
                    return Err(OnboardingError::InvalidToken.into());
                }
                if row.expires_at <= OffsetDateTime::now_utc() {
                    return Err(OnboardingError::TokenExpired.into());
                }
                if accounts.email_taken(conn, &row.email).await? {
                    return Err(OnboardingError::AccountExists.into());
                }
                let command = VerifySignUp {
                    request: row,
                    accounts,
                    registry,
                    consent_key: key,
                    deals,
                    products,
                };
                let (verified, _) =
                    stoa_core::command::execute(conn, &Actor::api(None, None, None), command)
                        .await?;
                Ok(verified)
            })
        })
        .await
}

/// The preparation state of the workspace `tenant` (a verified request's).
pub async fn status(
    conn: &mut AsyncPgConnection,
    state: &OnboardingState,
    tenant: Uuid,
) -> Result<StatusResponse, AppError> {
    let row: RequestRow = onboarding_requests::table
        .filter(onboarding_requests::tenant_id.eq(tenant))
        .select(RequestRow::as_select())
        .first(conn)
        .await
        .optional()?
        .ok_or(OnboardingError::NotFound)?;
    let job = match row.progress_job_id {
        Some(id) => stoa_progress::service::get(conn, id).await?,
        None => None,
    };
    let preparation = match job {
        Some(job) => Preparation {
            status: job.status,
            progress_percent: job.progress_percent,
            processed_count: job.processed_count,
            total_count: job.total_count,
            progress_job_id: Some(job.id),
        },
        None => Preparation {
            status: if row.preparation_completed_at.is_some() {
                "completed".into()
            } else {
                "pending".into()
            },
            progress_percent: if row.preparation_completed_at.is_some() {
                100
            } else {
                0
            },
            processed_count: 0,
            total_count: None,
            progress_job_id: row.progress_job_id,
        },
    };
    // A failed preparation does not keep the admin out: the workspace works
    // without demo data.
    let ready = row.status == COMPLETED
        && (row.preparation_completed_at.is_some()
            || matches!(
                preparation.status.as_str(),
                "completed" | "failed" | "cancelled"
            ));
    Ok(StatusResponse {
        ok: true,
        status: row.status,
        ready,
        tenant_id: tenant,
        preparation,
        login_url: ready.then(|| state.config.login_url(tenant)),
    })
}
