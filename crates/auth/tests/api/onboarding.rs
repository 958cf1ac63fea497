//! Onboarding through `stoa_acl::Onboarding` (stoa-auth's `PgOnboarding`):
//! the password policy, e-mails across tenants, a tenant provisioned with a
//! first user whose id the caller knows, and a session for it that exists
//! only when the transaction commits.

use std::sync::Arc;

use diesel_async::{AsyncConnection, RunQueryDsl};
use stoa_acl::{IssuedSession, Onboarding};
use stoa_auth::{AuthConfig, PgOnboarding};
use stoa_core::AppError;
use stoa_directory::provision::{TenantRequest, provision_tenant};
use stoa_testkit::requests::bearer;

use super::support::*;

fn onboarding() -> Arc<dyn Onboarding> {
    Arc::new(PgOnboarding::new(&AuthConfig::for_tests()))
}

#[actix_web::test]
async fn passwords_are_checked_against_the_policy_then_hashed() {
    let onboarding = onboarding();
    let weak = onboarding.check_password("abc").unwrap_err();
    assert!(weak.contains('6'), "names the length rule: {weak}");
    assert!(onboarding.check_password("Secret-42").is_ok());
    let refused = onboarding.hash_password("abc").await.unwrap_err();
    assert_eq!(refused.status(), 400);
    let hash = onboarding.hash_password("Secret-42").await.unwrap();
    assert!(hash.starts_with("$argon2id$"));
    assert!(
        onboarding
            .verify_password("Secret-42", &hash)
            .await
            .unwrap()
    );
    assert!(
        !onboarding
            .verify_password("Secret-43", &hash)
            .await
            .unwrap()
    );
}

#[actix_web::test]
async fn an_email_is_taken_by_a_live_user_of_any_tenant() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let onboarding = onboarding();
    let mut conn = app.db.conn().await.unwrap();
    assert!(
        onboarding
            .email_taken(&mut conn, "  Admin@ACME.com ")
            .await
            .unwrap()
    );
    assert!(
        !onboarding
            .email_taken(&mut conn, "new@acme.com")
            .await
            .unwrap()
    );
    diesel::sql_query("UPDATE users SET deleted_at = now() WHERE id = $1")
        .bind::<diesel::sql_types::Uuid, _>(acme.employee)
        .execute(&mut *conn)
        .await
        .unwrap();
    assert!(
        !onboarding
            .email_taken(&mut conn, "employee@acme.com")
            .await
            .unwrap(),
        "a deleted user's address is free"
    );
    assert_eq!(
        onboarding
            .first_user("not an address", None, "superadmin")
            .unwrap_err()
            .status(),
        400
    );
}

#[actix_web::test]
async fn a_provisioned_first_user_gets_a_session_that_signs_in() {
    let app = start().await;
    let onboarding = onboarding();
    let registry = stoa_auth::base_registry().unwrap();
    let hash = onboarding.hash_password("Secret-42").await.unwrap();
    let first = onboarding
        .first_user(" Founder@Initech.com", Some(hash), "superadmin")
        .unwrap();
    assert_eq!(first.email, "founder@initech.com");
    let mut conn = app.db.conn().await.unwrap();
    let (tenant, session) = conn
        .transaction::<_, AppError, _>(async |conn| {
            let tenant = provision_tenant(
                conn,
                &registry,
                TenantRequest {
                    name: "Initech".into(),
                    is_active: true,
                    organization: "Initech".into(),
                    users: vec![first],
                },
            )
            .await?;
            let user = tenant.user_ids()[0];
            let session = onboarding.issue_session(conn, user).await?;
            Ok((tenant, session))
        })
        .await
        .unwrap();
    assert_eq!(session.user_id, tenant.user_ids()[0]);
    let profile = app
        .send(bearer(
            actix_web::test::TestRequest::get().uri("/api/auth/profile"),
            &session.access_token,
        ))
        .await;
    assert_eq!(profile.status, 200, "{}", profile.text());
    assert_eq!(profile.json()["email"], "founder@initech.com");
    assert!(!session.session_token.is_empty());
}

#[actix_web::test]
async fn a_session_issued_in_a_rolled_back_transaction_does_not_exist() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let onboarding = onboarding();
    let mut conn = app.db.conn().await.unwrap();
    let issued = std::sync::Mutex::new(None::<IssuedSession>);
    let rolled_back = conn
        .transaction::<(), AppError, _>(async |conn| {
            let session = onboarding.issue_session(conn, acme.admin).await?;
            *issued.lock().unwrap() = Some(session);
            Err(AppError::bad_request("the sign-up failed later"))
        })
        .await;
    assert!(rolled_back.is_err());
    let token = issued.lock().unwrap().take().unwrap().access_token;
    let profile = app
        .send(bearer(
            actix_web::test::TestRequest::get().uri("/api/auth/profile"),
            &token,
        ))
        .await;
    assert_eq!(profile.status, 401);
    let missing = onboarding
        .issue_session(&mut conn, uuid::Uuid::new_v4())
        .await
        .unwrap_err();
    assert_eq!(missing.status(), 404);
}
