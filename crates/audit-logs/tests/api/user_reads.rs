//! Reads of personal data write access-log entries: `GET /auth/users` (list
//! and `?id=`) and `GET /auth/users/consents`, visible to tenant viewers.

use serde_json::Value;

use super::support::*;

async fn access<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    query: &str,
) -> Value {
    let res = app
        .send(get(
            &format!("/api/audit_logs/audit-logs/access?{query}"),
            token,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

#[actix_web::test]
async fn reading_a_user_is_logged_with_the_fields_returned() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["items"][0]["id"], acme.employee.to_string());

    // A tenant viewer (not the reader) finds the entry.
    let auditor = user_with_features(
        &app.db,
        &acme,
        "auditor@acme.com",
        &["audit_logs.view_self", "audit_logs.view_tenant"],
        None,
        Some(acme.organization_id),
    )
    .await;
    let auditor = token_for(&app.db, auditor).await;
    let body = access(
        &app,
        &auditor,
        &format!("resourceKind=auth.user&actorUserId={}", acme.admin),
    )
    .await;
    assert_eq!(body["total"], 1, "{body}");
    let item = &body["items"][0];
    assert_eq!(item["resourceKind"], "auth.user");
    assert_eq!(item["resourceId"], acme.employee.to_string());
    assert_eq!(item["accessType"], "read:item");
    assert_eq!(item["actorUserId"], acme.admin.to_string());
    let fields: Vec<&str> = item["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    for field in ["email", "name", "id", "hasPassword"] {
        assert!(fields.contains(&field), "{field} not in {fields:?}");
    }

    // A list writes one entry per user returned.
    let res = app.send(get("/api/auth/users", &admin)).await;
    let listed = res.json()["items"].as_array().unwrap().len();
    assert!(listed >= 2);
    let body = access(
        &app,
        &auditor,
        &format!(
            "resourceKind=auth.user&accessType=read:list&actorUserId={}",
            acme.admin
        ),
    )
    .await;
    assert_eq!(body["total"], listed);

    // Consents are the user's personal data too.
    let res = app
        .send(get(
            &format!("/api/auth/users/consents?userId={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = access(
        &app,
        &auditor,
        &format!(
            "resourceKind=auth.user&accessType=read:item&actorUserId={}",
            acme.admin
        ),
    )
    .await;
    assert_eq!(body["total"], 2, "{body}");
}

#[actix_web::test]
async fn other_tenants_never_see_the_entries() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200);
    let foreign = token_for(&app.db, globex.admin).await;
    let body = access(
        &app,
        &foreign,
        &format!("resourceKind=auth.user&actorUserId={}", acme.admin),
    )
    .await;
    assert_eq!(body["total"], 0, "{body}");
}
