//! Every way a credential can be wrong answers 401 and reveals nothing.

use actix_web::test::TestRequest;
use diesel_async::RunQueryDsl;
use serde_json::json;
use stoa_auth::testing::token_for;
use stoa_auth::tokens::TokenKeys;

use super::support::*;

fn b64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

async fn assert_401<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    why: &str,
) {
    let res = app.send(get("/api/auth/profile", token)).await;
    assert_eq!(res.status, 401, "{why}: {}", res.text());
    assert_eq!(res.json(), json!({"error": "Unauthorized"}), "{why}");
}

#[actix_web::test]
async fn missing_tampered_alg_none_expired_and_foreign_tokens_are_401() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let res = app.get("/api/auth/profile").await;
    assert_eq!(res.status, 401);
    assert_eq!(res.json(), json!({"error": "Unauthorized"}));

    let good = token_for(&app.db, acme.employee).await;
    let claims = keys().verify(&good).unwrap();
    let parts: Vec<&str> = good.split('.').collect();

    // Payload swapped for the super admin's, signature kept.
    let mut forged = claims.clone();
    forged.sub = acme.superadmin;
    let forged_payload = b64(&serde_json::to_vec(&forged).unwrap());
    assert_401(
        &app,
        &format!("{}.{}.{}", parts[0], forged_payload, parts[2]),
        "tampered",
    )
    .await;

    // alg:none with no signature.
    let none_header = b64(br#"{"alg":"none","typ":"JWT"}"#);
    assert_401(&app, &format!("{none_header}.{}.", parts[1]), "alg none").await;

    // HS512 header with our payload.
    let hs512 = b64(br#"{"alg":"HS512","typ":"JWT"}"#);
    assert_401(
        &app,
        &format!("{hs512}.{}.{}", parts[1], parts[2]),
        "alg swap",
    )
    .await;

    // Signed with another secret.
    let other = TokenKeys::new("a-completely-different-secret")
        .sign(&claims)
        .unwrap();
    assert_401(&app, &other, "foreign secret").await;

    // Expired.
    let mut old = claims.clone();
    old.iat -= 10 * 3600;
    old.exp = old.iat + 3600;
    assert_401(&app, &keys().sign(&old).unwrap(), "expired").await;

    // Wrong audience / issuer.
    let mut aud = claims.clone();
    aud.aud = "customer".into();
    assert_401(&app, &keys().sign(&aud).unwrap(), "audience").await;
    let mut iss = claims.clone();
    iss.iss = "someone-else".into();
    assert_401(&app, &keys().sign(&iss).unwrap(), "issuer").await;

    // A session id that does not exist, or belongs to someone else.
    let mut sid = claims.clone();
    sid.sid = uuid::Uuid::new_v4();
    assert_401(&app, &keys().sign(&sid).unwrap(), "unknown session").await;
    let admin_token = token_for(&app.db, acme.admin).await;
    let mut stolen = claims.clone();
    stolen.sid = keys().verify(&admin_token).unwrap().sid;
    assert_401(&app, &keys().sign(&stolen).unwrap(), "foreign session").await;

    assert_401(&app, "not-a-jwt", "garbage").await;
    assert_eq!(app.send(get("/api/auth/profile", &good)).await.status, 200);
}

#[actix_web::test]
async fn deleted_or_deactivated_users_lose_access_at_once() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let employee = token_for(&app.db, acme.employee).await;
    let admin = token_for(&app.db, acme.admin).await;
    assert_eq!(
        app.send(get("/api/auth/profile", &employee)).await.status,
        200
    );
    assert_eq!(app.send(get("/api/auth/profile", &admin)).await.status, 200);

    let mut conn = app.db.conn().await.unwrap();
    diesel::sql_query(format!(
        "UPDATE users SET deleted_at = now() WHERE id = '{}'",
        acme.employee
    ))
    .execute(&mut *conn)
    .await
    .unwrap();
    diesel::sql_query(format!(
        "UPDATE users SET is_active = false WHERE id = '{}'",
        acme.admin
    ))
    .execute(&mut *conn)
    .await
    .unwrap();
    assert_eq!(
        app.send(get("/api/auth/profile", &employee)).await.status,
        401
    );
    assert_eq!(app.send(get("/api/auth/profile", &admin)).await.status, 401);
    // And they cannot sign in again.
    assert_eq!(
        app.send(login_form("admin@acme.com", PASSWORD))
            .await
            .status,
        401
    );
}

#[actix_web::test]
async fn the_auth_cookie_works_and_a_bad_one_is_cleared() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let token = token_for(&app.db, acme.admin).await;
    let res = app
        .send(
            TestRequest::get()
                .uri("/api/auth/profile")
                .cookie(actix_web::cookie::Cookie::new("auth_token", token)),
        )
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["email"], "admin@acme.com");
    let res = app
        .send(
            TestRequest::get()
                .uri("/api/auth/profile")
                .cookie(actix_web::cookie::Cookie::new("auth_token", "stale")),
        )
        .await;
    assert_eq!(res.status, 401);
    let cleared = cookies(&res);
    assert!(
        cleared
            .iter()
            .any(|c| c.starts_with("auth_token=;") && c.contains("Max-Age=0")),
        "{cleared:?}"
    );
}

#[actix_web::test]
async fn an_unreachable_database_is_503_not_401() {
    let app = stoa_testkit::app()
        .module_with(stoa_auth::testing::module)
        .unreachable_database()
        .start()
        .await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let claims = stoa_auth::tokens::Claims {
        sub: uuid::Uuid::new_v4(),
        sid: uuid::Uuid::new_v4(),
        tenant_id: None,
        org_id: None,
        email: "a@b.co".into(),
        roles: vec![],
        iat: now,
        exp: now + 60,
        iss: stoa_auth::tokens::ISSUER.into(),
        aud: stoa_auth::tokens::AUDIENCE.into(),
    };
    let token = keys().sign(&claims).unwrap();
    let res = app.send(get("/api/auth/profile", &token)).await;
    assert_eq!(res.status, 503);
    assert_eq!(res.json(), json!({"error": "Database unavailable"}));
}
