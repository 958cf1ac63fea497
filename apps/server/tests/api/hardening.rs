//! Input and HTTP-stack hardening across the assembled modules: control
//! characters never reach Postgres, validation errors carry `fieldErrors`, and a
//! session cookie cannot be used by a foreign site.

use std::sync::Arc;

use actix_web::test::TestRequest;
use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_auth::AuthConfig;
use stoa_auth::testing::{Tenant, seed_tenant_with, token_for};
use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;
use stoa_testkit::requests::{bearer, form, get, post_json};

/// Every module, mounted as the server mounts them.
fn everything(db: &Db) -> ApiConfigurator {
    let configurators = stoa_server::configurators(
        &stoa_server::test_services(db).unwrap(),
        AuthConfig::for_tests(),
    )
    .unwrap();
    Arc::new(move |cfg| {
        for configure in &configurators {
            configure(cfg);
        }
    })
}

async fn seed(db: &Db) -> Tenant {
    let registry = stoa_server::registry().unwrap();
    seed_tenant_with(db, &registry, "Acme Corp", "acme.com").await
}

#[derive(QueryableByName)]
struct Snapshot {
    #[diesel(sql_type = Text)]
    v: String,
}

/// Row counts of every table a rejected request could have written, and the
/// latest change to users.
async fn snapshot(db: &Db) -> String {
    let tables = [
        "users",
        "roles",
        "user_roles",
        "sessions",
        "password_resets",
        "tenants",
        "organizations",
        "user_devices",
        "api_keys",
        "action_logs",
        "event_outbox",
        "progress_jobs",
        "mail_outbox",
    ];
    let counts: Vec<String> = tables
        .iter()
        .map(|t| format!("'{t}', (SELECT count(*) FROM {t})"))
        .collect();
    let sql = format!(
        "SELECT json_build_object({}, 'usersChanged', (SELECT max(updated_at) FROM users))::text AS v",
        counts.join(", ")
    );
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(sql)
        .get_result::<Snapshot>(&mut *conn)
        .await
        .unwrap()
        .v
}

const CONTROL: &str = "must not contain control characters";

#[actix_web::test]
async fn nul_in_text_input_is_400_naming_the_field_and_changes_nothing() {
    let app = stoa_testkit::app().module_with(everything).start().await;
    let acme = seed(&app.db).await;
    let token = token_for(&app.db, acme.superadmin).await;
    let org = acme.organization_id;
    let before = snapshot(&app.db).await;

    let cases: Vec<(&str, TestRequest, &str)> = vec![
        (
            "login",
            form(
                "/api/auth/login",
                "email=superadmin%00@acme.com&password=secret",
            ),
            "email",
        ),
        (
            "reset",
            form("/api/auth/reset", "email=superadmin@acme.com%00"),
            "email",
        ),
        (
            "organization lookup",
            TestRequest::get().uri("/api/directory/organizations/lookup?slug=acme%00"),
            "slug",
        ),
        (
            "tenant lookup",
            TestRequest::get().uri("/api/directory/tenants/lookup?tenantId=%00"),
            "tenantId",
        ),
        (
            "user search",
            get("/api/auth/users?search=a%00b", &token),
            "search",
        ),
        (
            "role search",
            get("/api/auth/roles?search=adm%00", &token),
            "search",
        ),
        (
            "organization create",
            post_json(
                "/api/directory/organizations",
                &token,
                json!({"name": "Evil\u{0}Org", "tenantId": acme.tenant_id}),
            ),
            "name",
        ),
        (
            "device registration",
            post_json(
                "/api/devices",
                &token,
                json!({"deviceId": "d\u{0}1", "platform": "ios"}),
            ),
            "deviceId",
        ),
        (
            "API key name",
            post_json(
                "/api/api_keys/keys",
                &token,
                json!({"name": "ci\u{0}", "organizationId": org}),
            ),
            "name",
        ),
        (
            "action log filters",
            get(
                "/api/audit_logs/audit-logs/actions?resourceKind=auth.user%00",
                &token,
            ),
            "resourceKind",
        ),
        (
            "user create",
            post_json(
                "/api/auth/users",
                &token,
                json!({"email": "x@acme.com", "password": "Secret1!", "organizationId": org, "name": "\u{0}"}),
            ),
            "name",
        ),
        (
            "profile update",
            bearer(
                TestRequest::put()
                    .uri("/api/auth/profile")
                    .set_json(json!({"name": "a\u{0}"})),
                &token,
            ),
            "name",
        ),
        (
            "undo",
            post_json(
                "/api/audit_logs/audit-logs/actions/undo",
                &token,
                json!({"undoToken": "t\u{0}"}),
            ),
            "undoToken",
        ),
        (
            "progress job",
            post_json(
                "/api/progress/jobs",
                &token,
                json!({"jobType": "x", "name": "n\u{0}"}),
            ),
            "name",
        ),
    ];
    for (what, req, field) in cases {
        let res = app.send(req).await;
        assert_eq!(res.status, 400, "{what}: {}", res.text());
        let body = res.json();
        let issue = &body["issues"][0];
        assert_eq!(issue["message"], CONTROL, "{what}: {body}");
        assert_eq!(issue["path"][0], field, "{what}: {body}");
    }
    // Tab, LF and CR are text in a body (a multi-line description).
    let res = app
        .send(post_json(
            "/api/progress/jobs",
            &token,
            json!({"jobType": "x", "name": "n", "description": "line 1\r\n\tline 2"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let mut after = snapshot(&app.db).await;
    assert_ne!(after, before, "the valid job was created");
    let mut conn = app.db.conn().await.unwrap();
    // The valid job and the `progress.job.created` event it emitted.
    for table in ["progress_jobs", "event_outbox"] {
        diesel::sql_query(format!("DELETE FROM {table}"))
            .execute(&mut *conn)
            .await
            .unwrap();
    }
    drop(conn);
    after = snapshot(&app.db).await;
    assert_eq!(after, before, "no rejected request wrote anything");
}

#[actix_web::test]
async fn validation_errors_carry_field_errors_for_open_mercato_clients() {
    let app = stoa_testkit::app().module_with(everything).start().await;
    let acme = seed(&app.db).await;
    let token = token_for(&app.db, acme.superadmin).await;

    // Neither a password nor an invitation: `password` is flagged.
    let res = app
        .send(post_json(
            "/api/auth/users",
            &token,
            json!({"email": "new@acme.com", "organizationId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    let body = res.json();
    assert_eq!(body["error"], "Invalid input");
    assert!(
        body["details"]["fieldErrors"]["password"][0].is_string(),
        "{body}"
    );
    assert_eq!(body["issues"][0]["path"], json!(["password"]));

    // Progress job creation: the extractor's shape.
    let res = app
        .send(post_json(
            "/api/progress/jobs",
            &token,
            json!({"jobType": "", "name": "n", "totalCount": 0}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    let body = res.json();
    assert_eq!(body["error"], "Invalid input");
    let fields = &body["details"]["fieldErrors"];
    assert!(fields["jobType"][0].is_string(), "{body}");
    assert!(fields["totalCount"][0].is_string(), "{body}");
    assert_eq!(body["details"]["formErrors"], json!([]));
    let res = app
        .send(post_json(
            "/api/progress/jobs",
            &token,
            json!({"jobType": 5, "name": "n"}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert!(res.json()["details"]["fieldErrors"]["jobType"][0].is_string());
}

fn cookie_of(res: &stoa_testkit::TestResponse, name: &str) -> String {
    res.cookie(name)
        .unwrap_or_else(|| panic!("no {name} cookie: {:?}", res.cookies()))
}

#[actix_web::test]
async fn a_session_cookie_cannot_be_used_by_a_foreign_site() {
    let app = stoa_testkit::app()
        .module_with(everything)
        .http(|h| h.app_url = Some("http://localhost:3000".into()))
        .start()
        .await;
    let acme = seed(&app.db).await;
    let login = app
        .send(form(
            "/api/auth/login",
            "email=superadmin@acme.com&password=secret",
        ))
        .await;
    assert_eq!(login.status, 200, "{}", login.text());
    let auth = cookie_of(&login, "auth_token");
    let role = |origin: &'static str, name: &'static str| {
        TestRequest::post()
            .uri("/api/auth/roles")
            .cookie(actix_web::cookie::Cookie::new("auth_token", auth.clone()))
            .insert_header(("origin", origin))
            .set_json(json!({"name": name, "tenantId": acme.tenant_id}))
    };
    let before = snapshot(&app.db).await;
    let res = app.send(role("https://evil.example", "forged")).await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert!(res.json()["error"].as_str().unwrap().contains("Cross-site"));
    assert_eq!(snapshot(&app.db).await, before, "nothing was created");

    // The web app (APP_URL) may use the cookie.
    let res = app.send(role("http://localhost:3000", "Sales")).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let res: Value = app
        .send(get(
            "/api/auth/roles?search=forged",
            &token_for(&app.db, acme.superadmin).await,
        ))
        .await
        .json();
    assert_eq!(res["total"], 0, "{res}");
}
