//! `/auth/users`: list filters, create, update, delete, undo, visibility.

use serde_json::{Value, json};
use stoa_auth::testing::{token_for, user_with_features};
use uuid::Uuid;

use super::support::*;

fn emails(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["email"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn list_filters_search_and_paging() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    let res = app.send(get("/api/auth/users", &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    // Super admins are hidden from other callers; the order is by e-mail.
    assert_eq!(emails(&body), ["admin@acme.com", "employee@acme.com"]);
    assert_eq!(body["total"], 2);
    assert_eq!(body["totalPages"], 1);
    assert_eq!(body["isSuperAdmin"], false);
    let employee = &body["items"][1];
    assert_eq!(employee["roles"], json!(["employee"]));
    assert_eq!(employee["organizationName"], "Acme Corp");
    assert_eq!(employee["tenantName"], "Acme Corp");
    assert_eq!(employee["isConfirmed"], true);
    assert!(employee.get("hasPassword").is_none());

    // search: e-mail substring, role name, organization name.
    let search = |q: &str| get(&format!("/api/auth/users?search={q}"), &admin);
    assert_eq!(
        emails(&app.send(search("EMPLOY")).await.json()),
        ["employee@acme.com"]
    );
    let res = app.send(search("admin")).await;
    assert_eq!(emails(&res.json()), ["admin@acme.com"]);
    let res = app.send(search("acme%20corp")).await;
    assert_eq!(res.json()["total"], 2);
    let res = app.send(search("%25")).await;
    assert_eq!(res.json()["total"], 0, "LIKE wildcards are literal");

    // name, id (with hasPassword), organization and role filters.
    let res = app.send(get("/api/auth/users?name=nobody", &admin)).await;
    assert_eq!(res.json()["total"], 0);
    let res = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["items"][0]["hasPassword"], true);
    let res = app
        .send(get(
            &format!("/api/auth/users?organizationId={}", acme.organization_id),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 2);
    let employee_role = role_named(&app, &admin, "employee").await;
    let admin_role = role_named(&app, &admin, "admin").await;
    let res = app
        .send(get(
            &format!("/api/auth/users?roleIds={employee_role}"),
            &admin,
        ))
        .await;
    assert_eq!(emails(&res.json()), ["employee@acme.com"]);
    let res = app
        .send(get(
            &format!("/api/auth/users?roleIds={employee_role}&roleIds={admin_role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 2);
    let res = app
        .send(get(
            &format!("/api/auth/users?roleId={employee_role},{admin_role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 2);
    let res = app
        .send(get(
            "/api/auth/users?scopeToActiveOrganization=true",
            &admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 2);

    // Paging: defaults, bounds.
    let res = app
        .send(get("/api/auth/users?pageSize=1&page=2", &admin))
        .await;
    let body = res.json();
    assert_eq!(emails(&body), ["employee@acme.com"]);
    assert_eq!(
        (body["page"].clone(), body["pageSize"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(body["totalPages"], 2);
    for bad in [
        "pageSize=101",
        "pageSize=0",
        "page=0",
        "roleIds=nope",
        "id=nope",
    ] {
        let res = app
            .send(get(&format!("/api/auth/users?{bad}"), &admin))
            .await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
    }

    // A super admin sees everyone, other tenants included.
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app.send(get("/api/auth/users?pageSize=100", &root)).await;
    let body = res.json();
    assert_eq!(body["total"], 6);
    assert_eq!(body["isSuperAdmin"], true);
    // ... and an acme admin never sees Globex's users.
    let res = app.send(get("/api/auth/users?search=globex", &admin)).await;
    assert_eq!(res.json()["total"], 0);
    let res = app
        .send(get(&format!("/api/auth/users?id={}", globex.admin), &admin))
        .await;
    assert_eq!(res.json()["total"], 0);
}

#[actix_web::test]
async fn restricted_callers_see_their_organizations_only() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    let branch = branch(&app, &root, acme.organization_id).await;
    let manager = user_with_features(
        &app.db,
        &acme,
        "manager@acme.com",
        &["auth.users.list", "auth.users.edit"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let manager = token_for(&app.db, manager).await;
    let res = app.send(get("/api/auth/users", &manager)).await;
    assert_eq!(emails(&res.json()), ["manager@acme.com"]);
    // Someone outside the branch cannot be changed.
    let res = app
        .send(put_json(
            "/api/auth/users",
            &manager,
            json!({"id": acme.employee, "name": "X"}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
}

#[actix_web::test]
async fn create_with_password_or_invitation() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let new_user = |email: &str| {
        json!({
            "email": email,
            "name": "  New Person ",
            "password": "Str0ng!pass",
            "organizationId": acme.organization_id,
            "roles": ["employee"],
        })
    };
    let res = app
        .send(post_json(
            "/api/auth/users",
            &admin,
            new_user("New@Acme.com"),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert!(res.header("x-om-operation").is_some());
    let id = res.json()["id"].as_str().unwrap().to_string();
    let res = app
        .send(get(&format!("/api/auth/users?id={id}"), &admin))
        .await;
    let user = &res.json()["items"][0];
    assert_eq!(user["email"], "new@acme.com");
    assert_eq!(user["name"], "New Person");
    assert_eq!(user["roles"], json!(["employee"]));
    assert_eq!(user["isConfirmed"], true);
    // The password works.
    let res = app.send(login_form("new@acme.com", "Str0ng!pass")).await;
    assert_eq!(res.status, 200, "{}", res.text());

    // Refusals.
    let cases = [
        (new_user("new@acme.com"), 400, "Email already in use"),
        (
            json!({"email": "x@acme.com", "organizationId": acme.organization_id}),
            400,
            "Invalid input",
        ),
        (
            json!({"email": "x@acme.com", "password": "weak", "organizationId": acme.organization_id}),
            400,
            "Password does not meet the requirements.",
        ),
        (
            json!({"email": "not-an-email", "password": "Str0ng!pass", "organizationId": acme.organization_id}),
            400,
            "Invalid input",
        ),
        (
            json!({"email": "x@acme.com", "password": "Str0ng!pass", "organizationId": Uuid::new_v4()}),
            400,
            "Organization not found",
        ),
        (
            json!({"email": "x@acme.com", "password": "Str0ng!pass", "organizationId": acme.organization_id, "roles": ["ghost"]}),
            400,
            "Role(s) not found: \"ghost\"",
        ),
        (
            json!({"email": "x@acme.com", "password": "Str0ng!pass", "organizationId": acme.organization_id, "roles": ["superadmin"]}),
            403,
            "Cannot grant role superadmin: it carries super administrator access.",
        ),
        (
            json!({"email": "x@acme.com", "password": "Str0ng!pass", "organizationId": acme.organization_id, "cf_extra": 1}),
            400,
            "",
        ),
    ];
    for (body, status, message) in cases {
        let res = app
            .send(post_json("/api/auth/users", &admin, body.clone()))
            .await;
        assert_eq!(res.status, status, "{body}: {}", res.text());
        if !message.is_empty() {
            assert_eq!(res.json()["error"], message, "{body}");
        }
    }
    assert_eq!(
        app.send(post_json(
            "/api/auth/users",
            &admin,
            new_user("new@acme.com")
        ))
        .await
        .json()["fieldErrors"]["email"],
        "Email already in use"
    );

    // The same e-mail in another tenant is fine (unique per tenant).
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(post_json(
            "/api/auth/users",
            &root,
            json!({"email": "new@acme.com", "password": "Str0ng!pass", "organizationId": globex.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    // An acme admin cannot place a user in Globex: 404, as the reference
    // answers an organization of another tenant (an unknown one is 400).
    let res = app
        .send(post_json(
            "/api/auth/users",
            &admin,
            json!({"email": "spy@acme.com", "password": "Str0ng!pass", "organizationId": globex.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "Organization not found");

    // A role granting what the admin lacks cannot be handed out.
    let strong = user_with_features(
        &app.db,
        &acme,
        "strong@acme.com",
        &["directory.tenants.manage"],
        None,
        None,
    )
    .await;
    let _ = strong;
    let res = app
        .send(post_json(
            "/api/auth/users",
            &admin,
            json!({"email": "y@acme.com", "password": "Str0ng!pass", "organizationId": acme.organization_id, "roles": ["role-strong@acme.com"]}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
}

#[actix_web::test]
async fn invitation_sends_a_setup_link() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            "/api/auth/users",
            &admin,
            json!({"email": "invited@acme.com", "sendInviteEmail": true, "organizationId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert!(res.json().get("_warning").is_none(), "{}", res.text());
    let link = latest_mail_link(&app.db, "invited@acme.com").await;
    let token = link.rsplit('/').next().unwrap().to_string();
    let res = app
        .send(form(
            "/api/auth/reset/confirm",
            &format!("token={token}&password=Str0ng!pass"),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(login_form("invited@acme.com", "Str0ng!pass"))
        .await;
    assert_eq!(res.status, 200);
}

/// The link in the newest mail to `to` (mails go to the outbox table in tests).
pub async fn latest_mail_link(db: &stoa_core::db::Db, to: &str) -> String {
    use diesel::prelude::*;
    use diesel::sql_types::Text;
    use diesel_async::RunQueryDsl;
    #[derive(QueryableByName)]
    struct Body {
        #[diesel(sql_type = Text)]
        body: String,
    }
    let mut conn = db.conn().await.unwrap();
    let mail: Body = diesel::sql_query(
        "SELECT body FROM mail_outbox WHERE recipient = $1 ORDER BY created_at DESC LIMIT 1",
    )
    .bind::<Text, _>(to)
    .get_result(&mut conn)
    .await
    .unwrap();
    mail.body
        .split_whitespace()
        .find(|w| w.starts_with("http"))
        .unwrap()
        .to_string()
}

#[actix_web::test]
async fn update_changes_fields_roles_and_password() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    let admin_role = role_named(&app, &admin, "admin").await;

    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "name": "Eve", "email": "eve@acme.com", "roles": [admin_role]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true}));
    let res = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await;
    let user = res.json()["items"][0].clone();
    assert_eq!(user["email"], "eve@acme.com");
    assert_eq!(user["name"], "Eve");
    assert_eq!(user["roles"], json!(["admin"]));
    // The new role takes effect on the employee's very next request.
    let res = app.send(get("/api/auth/users", &employee)).await;
    assert_eq!(res.status, 200, "{}", res.text());

    // A password change ends the user's sessions.
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "password": "N3w!password"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app.send(get("/api/auth/profile", &employee)).await;
    assert_eq!(res.status, 401);
    let res = app.send(login_form("eve@acme.com", "N3w!password")).await;
    assert_eq!(res.status, 200);

    // `name: null` clears; unknown ids 404; super admins are off limits (403).
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "name": null}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["items"][0]["name"], Value::Null);
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": Uuid::new_v4(), "name": "X"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "User not found");
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.superadmin, "name": "X"}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "email": "admin@acme.com"}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Email already in use");
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "roles": ["superadmin"]}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app
        .send(put_json("/api/auth/users", &admin, json!({"id": "nope"})))
        .await;
    assert_eq!(res.status, 400);

    // Another tenant's user is invisible.
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": globex.employee, "name": "X"}),
        ))
        .await;
    assert_eq!(res.status, 404);
}

#[actix_web::test]
async fn super_admin_moves_a_user_to_another_tenant() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(put_json(
            "/api/auth/users",
            &root,
            json!({"id": acme.employee, "organizationId": globex.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(get(&format!("/api/auth/users?id={}", acme.employee), &root))
        .await;
    let user = res.json()["items"][0].clone();
    assert_eq!(user["tenantId"], json!(globex.tenant_id));
    // Memberships of the old tenant do not travel.
    assert_eq!(user["roles"], json!([]));
}

#[actix_web::test]
async fn delete_then_undo_and_redo() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;

    let res = app
        .send(delete(
            &format!("/api/auth/users?id={}", acme.admin),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 400, "no deleting oneself");
    let res = app
        .send(delete(
            &format!("/api/auth/users?id={}", acme.superadmin),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app.send(delete("/api/auth/users", &admin)).await;
    assert_eq!(res.status, 400);
    let res = app
        .send(delete(
            &format!("/api/auth/users?id={}", Uuid::new_v4()),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 404);

    let res = app
        .send(delete(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let token = undo_token(&res);
    // Gone: its session no longer works, it cannot sign in, it is not listed.
    assert_eq!(
        app.send(get("/api/auth/profile", &employee)).await.status,
        401
    );
    assert_eq!(
        app.send(login_form("employee@acme.com", PASSWORD))
            .await
            .status,
        401
    );
    assert_eq!(
        app.send(get("/api/auth/users", &admin)).await.json()["total"],
        1
    );
    let res = app
        .send(delete(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 404);

    // Undo brings the account back with its role and password.
    let res = undo(&app, &admin, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let log_id = res.json()["logId"].as_str().unwrap().to_string();
    let res = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["items"][0]["roles"], json!(["employee"]));
    assert_eq!(
        app.send(login_form("employee@acme.com", PASSWORD))
            .await
            .status,
        200
    );

    // Redo deletes it again.
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/redo",
            &admin,
            json!({"logId": log_id}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        app.send(get("/api/auth/users", &admin)).await.json()["total"],
        1
    );
}

#[actix_web::test]
async fn undo_update_restores_everything_but_credentials() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let before = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await
        .json()["items"][0]
        .clone();
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "name": "Changed", "email": "changed@acme.com", "password": "N3w!password", "roles": []}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let token = undo_token(&res);
    let res = undo(&app, &admin, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    // E-mail and password are never written back, and the answer says so.
    assert_eq!(res.json()["notRestored"], json!(["email", "password"]));
    let mut after = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await
        .json()["items"][0]
        .clone();
    after["updatedAt"] = before["updatedAt"].clone();
    assert_eq!(after["email"], "changed@acme.com");
    after["email"] = before["email"].clone();
    assert_eq!(after, before);
    // The new password stays; the old one does not come back.
    assert_eq!(
        app.send(login_form("changed@acme.com", "N3w!password"))
            .await
            .status,
        200
    );
    assert_eq!(
        app.send(login_form("changed@acme.com", PASSWORD))
            .await
            .status,
        401
    );
    // The token is spent.
    assert_eq!(undo(&app, &admin, &token).await.status, 400);

    // Undo of a create removes the user.
    let res = app
        .send(post_json(
            "/api/auth/users",
            &admin,
            json!({"email": "temp@acme.com", "password": "Str0ng!pass", "organizationId": acme.organization_id}),
        ))
        .await;
    let token = undo_token(&res);
    assert_eq!(undo(&app, &admin, &token).await.status, 200);
    let res = app.send(get("/api/auth/users?search=temp", &admin)).await;
    assert_eq!(res.json()["total"], 0);
}

#[actix_web::test]
async fn every_route_needs_its_feature() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let body = json!({"email": "a@acme.com", "organizationId": acme.organization_id, "password": "Str0ng!pass"});
    let routes = [
        get("/api/auth/users", &employee),
        post_json("/api/auth/users", &employee, body.clone()),
        put_json(
            "/api/auth/users",
            &employee,
            json!({"id": acme.employee, "name": "x"}),
        ),
        delete(&format!("/api/auth/users?id={}", acme.employee), &employee),
    ];
    let features = [
        "auth.users.list",
        "auth.users.create",
        "auth.users.edit",
        "auth.users.delete",
    ];
    for (req, feature) in routes.into_iter().zip(features) {
        let res = app.send(req).await;
        assert_eq!(res.status, 403, "{feature}");
        assert_eq!(res.json()["requiredFeatures"], json!([feature]));
    }
    let anonymous = [
        actix_web::test::TestRequest::get().uri("/api/auth/users"),
        actix_web::test::TestRequest::post()
            .uri("/api/auth/users")
            .set_json(body),
        actix_web::test::TestRequest::put()
            .uri("/api/auth/users")
            .set_json(json!({"id": acme.employee})),
        actix_web::test::TestRequest::delete().uri("/api/auth/users?id=x"),
    ];
    for req in anonymous {
        assert_eq!(app.send(req).await.status, 401);
    }
}

#[actix_web::test]
async fn list_is_two_round_trips_with_capped_totals_and_cursors() {
    use diesel_async::RunQueryDsl;
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    {
        let mut conn = app.db.conn().await.unwrap();
        diesel::sql_query(
            "INSERT INTO users (tenant_id, organization_id, email) \
             SELECT $1, $2, 'bulk' || lpad(g::text, 4, '0') || '@acme.com' \
             FROM generate_series(1, 1005) g",
        )
        .bind::<diesel::sql_types::Uuid, _>(acme.tenant_id)
        .bind::<diesel::sql_types::Uuid, _>(acme.organization_id)
        .execute(&mut *conn)
        .await
        .unwrap();
    }
    // Warm the ACL cache and a tenant connection (row-level security: a
    // connection that last served another scope costs one `set_config`): a
    // cached caller's list is two round trips, the session check and one
    // statement (page, total, names, access log).
    app.send(get("/api/auth/users?pageSize=1", &admin)).await;
    let (n, body) = app.statements("/api/auth/users?pageSize=50", &admin).await;
    assert_eq!(n, 2, "users list statements");
    assert_eq!(body["items"].as_array().unwrap().len(), 50);
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(1000), json!(true))
    );
    assert_eq!(body["items"][0]["roles"], json!(["admin"]));
    assert_eq!(body["items"][0]["organizationName"], "Acme Corp");
    assert!(body["nextCursor"].is_string());
    // Further pages count from their own start; exact when asked.
    let (_, body) = app
        .statements("/api/auth/users?pageSize=50&page=3", &admin)
        .await;
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(1007), json!(false))
    );
    let (n, body) = app
        .statements("/api/auth/users?pageSize=50&includeTotal=true", &admin)
        .await;
    assert_eq!(
        (n, body["total"].clone(), body["totalCapped"].clone()),
        (2, json!(1007), json!(false))
    );
    let (n, body) = app
        .statements("/api/auth/users?pageSize=50&includeTotal=false", &admin)
        .await;
    assert_eq!((n, body["total"].clone()), (2, json!(50)));
    // search resolves matching organizations and roles first (two lookups).
    let (n, body) = app
        .statements("/api/auth/users?search=employee", &admin)
        .await;
    assert_eq!((n, body["total"].clone()), (4, json!(1)));
    // A page past the end still reports the total (one extra count).
    let (n, body) = app
        .statements("/api/auth/users?pageSize=50&page=40", &admin)
        .await;
    assert_eq!((n, body["total"].clone()), (3, json!(1007)));

    // Keyset paging walks the same order as page/pageSize, 2 statements each.
    let (_, all) = app
        .statements("/api/auth/users?pageSize=100&page=11", &admin)
        .await;
    let tail: Vec<String> = emails(&all);
    assert_eq!(tail.len(), 7);
    let (_, page10) = app
        .statements("/api/auth/users?pageSize=100&page=10", &admin)
        .await;
    let mut cursor = page10["nextCursor"].as_str().unwrap().to_string();
    let (n, next) = app
        .statements(
            &format!("/api/auth/users?pageSize=5&cursor={cursor}"),
            &admin,
        )
        .await;
    assert_eq!(n, 2, "keyset page statements");
    assert_eq!(emails(&next), tail[..5]);
    assert_eq!(
        (next["page"].clone(), next["total"].clone()),
        (json!(201), json!(1007))
    );
    cursor = next["nextCursor"].as_str().unwrap().to_string();
    let (_, last) = app
        .statements(
            &format!("/api/auth/users?pageSize=5&cursor={cursor}"),
            &admin,
        )
        .await;
    assert_eq!(emails(&last), tail[5..]);
    assert!(
        last.get("nextCursor").is_none(),
        "the last page has no cursor"
    );

    // A bad cursor is 400, never 500.
    let roles_cursor = "eyJ2IjoxLCJzIjoiYXV0aC5yb2xlczpuYW1lIiwibyI6MSwiayI6WyJhIiwiYiJdfQ";
    for bad in ["nope", "e30", roles_cursor, &"A".repeat(3000)] {
        let res = app
            .send(get(&format!("/api/auth/users?cursor={bad}"), &admin))
            .await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
    }

    // The reads were access-logged by the same statement: one entry per user.
    let mut conn = app.db.conn().await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let logged: Count = diesel::sql_query(
        "SELECT count(*) AS n FROM access_logs WHERE actor_user_id = $1 \
         AND resource_kind = 'auth.user' AND access_type = 'read:list'",
    )
    .bind::<diesel::sql_types::Uuid, _>(acme.admin)
    .get_result(&mut *conn)
    .await
    .unwrap();
    assert!(logged.n >= 300, "{}", logged.n);
}

/// One issue per failing field (the route's shape A, with `details` as this
/// list, is rendered by the server's access middleware: apps/server's shape test).
#[actix_web::test]
async fn create_reports_every_failing_field() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            "/api/auth/users",
            &admin,
            json!({"email": "not-an-email", "organizationId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    let body = res.json();
    assert_eq!(body["error"], "Invalid input");
    let paths: Vec<Value> = body["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue["path"].clone())
        .collect();
    assert_eq!(paths, vec![json!(["email"]), json!(["password"])], "{body}");
}
