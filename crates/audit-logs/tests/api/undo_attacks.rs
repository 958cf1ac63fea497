//! Undo and redo as an attacker would use them (docs/security.md): each test
//! replays a finding of the security review and shows it now fails, next to
//! the legitimate path that must keep working.

use serde_json::{Value, json};
use stoa_testkit::AppService;
use stoa_testkit::TestApp;
use uuid::Uuid;

use super::support::*;

const NEW_PASSWORD: &str = "N3w-Passw0rd!";

async fn redo<S: AppService>(app: &TestApp<S>, token: &str, log_id: &Value) -> u16 {
    app.send(post_json(
        "/api/audit_logs/audit-logs/actions/redo",
        token,
        json!({"logId": log_id}),
    ))
    .await
    .status
    .as_u16()
}

async fn user_acl<S: AppService>(app: &TestApp<S>, token: &str, user: Uuid) -> Value {
    let res = app
        .send(get(&format!("/api/auth/users/acl?userId={user}"), token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

async fn put_ok<S: AppService>(app: &TestApp<S>, token: &str, path: &str, body: Value) -> Value {
    let res = app.send(put_json(path, token, body.clone())).await;
    assert_eq!(res.status, 200, "{path} {body}: {}", res.text());
    operation(&res)
}

async fn login_status<S: AppService>(app: &TestApp<S>, email: &str, password: &str) -> u16 {
    app.send(stoa_testkit::requests::form(
        "/api/auth/login",
        &format!("email={email}&password={}", password.replace('!', "%21")),
    ))
    .await
    .status
    .as_u16()
}

/// Finding 1: a tenant admin undid the super admin's removal of a
/// super-admin flag (and redid a grant the super admin undid), making an
/// account it controls a super admin. Tenant-wide undo no longer reaches a super admin's entries,
/// and the flag is never written back by undo, even by a super admin.
#[actix_web::test]
async fn a_tenant_admin_cannot_take_back_a_revoked_super_admin_flag() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let admin = token_for(&app.db, acme.admin).await;
    let path = "/api/auth/users/acl";

    let grant = put_ok(
        &app,
        &sa,
        path,
        json!({"userId": acme.employee, "isSuperAdmin": true, "features": ["auth.*"]}),
    )
    .await;
    let revoke = put_ok(
        &app,
        &sa,
        path,
        json!({"userId": acme.employee, "isSuperAdmin": false, "features": ["auth.*"]}),
    )
    .await;
    let res = undo(&app, &admin, &revoke["undoToken"]).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(
        user_acl(&app, &sa, acme.employee).await["isSuperAdmin"],
        false
    );

    // The super admin undoes its own revocation: the features come back, the
    // flag does not, and the answer says so.
    let res = undo(&app, &sa, &revoke["undoToken"]).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["notRestored"], json!(["isSuperAdmin"]));
    assert_eq!(
        user_acl(&app, &sa, acme.employee).await["isSuperAdmin"],
        false
    );
    let _ = grant;
}

#[actix_web::test]
async fn a_tenant_admin_cannot_redo_a_grant_the_super_admin_undid() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let admin = token_for(&app.db, acme.admin).await;
    let grant = put_ok(
        &app,
        &sa,
        "/api/auth/users/acl",
        json!({"userId": acme.admin, "isSuperAdmin": true, "features": ["auth.*"]}),
    )
    .await;
    assert_eq!(undo(&app, &sa, &grant["undoToken"]).await.status, 200);
    assert_eq!(redo(&app, &admin, &grant["id"]).await, 400);
    assert_eq!(user_acl(&app, &sa, acme.admin).await["hasCustomAcl"], false);
}

/// Finding 1: a tenant admin undid the super admin's password change and the
/// old password worked again. Now the entry is out of the admin's reach, and
/// the super admin's own undo leaves the password as it is.
#[actix_web::test]
async fn undo_never_brings_back_an_old_password() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let admin = token_for(&app.db, acme.admin).await;
    let change = put_ok(
        &app,
        &sa,
        "/api/auth/users",
        json!({"id": acme.employee, "password": NEW_PASSWORD, "name": "Renamed"}),
    )
    .await;
    let employee = format!("employee@{}", acme.domain);
    assert_eq!(login_status(&app, &employee, NEW_PASSWORD).await, 200);

    assert_eq!(undo(&app, &admin, &change["undoToken"]).await.status, 400);
    let res = undo(&app, &sa, &change["undoToken"]).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["notRestored"], json!(["password"]));
    assert_eq!(login_status(&app, &employee, NEW_PASSWORD).await, 200);
    assert_eq!(login_status(&app, &employee, "secret").await, 401);

    // The action log shows the change of password, redacted, and never the hash.
    let res = app
        .send(get(
            &format!(
                "/api/audit_logs/audit-logs/actions?resourceKind=auth.user&resourceId={}",
                acme.employee
            ),
            &sa,
        ))
        .await;
    let text = res.text();
    assert!(!text.contains("$argon2"), "{text}");
    let items = res.json()["items"].as_array().unwrap().clone();
    let forward = items.iter().find(|i| i["id"] == change["id"]).unwrap();
    assert_eq!(
        forward["changes"]["password"],
        json!({"from": "[redacted]", "to": "[redacted]"}),
        "{forward}"
    );
}

/// Finding 1: a super admin later demoted undid their own earlier change and
/// was a super admin again. Profile changes are not undoable, and any other
/// own entry is refused once the record changed or the caller lost the right.
#[actix_web::test]
async fn a_demoted_super_admin_cannot_undo_their_way_back() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let other_sa =
        stoa_auth::testing::user_with_features(&app.db, &acme, "root2@acme.com", &[], None, None)
            .await;
    stoa_auth::testing::set_user_acl(&app.db, other_sa, acme.tenant_id, &[], true).await;
    let other = token_for(&app.db, other_sa).await;
    let sa = token_for(&app.db, acme.superadmin).await;

    // Profile changes carry no undo token.
    let res = app
        .send(put_json(
            "/api/auth/profile",
            &sa,
            json!({"currentPassword": "secret", "password": NEW_PASSWORD}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(res.header("x-om-operation").is_none());

    // The super admin renames itself (undoable), then is demoted to admin.
    let own = put_ok(
        &app,
        &sa,
        "/api/auth/users",
        json!({"id": acme.superadmin, "name": "Root"}),
    )
    .await;
    put_ok(
        &app,
        &other,
        "/api/auth/users",
        json!({"id": acme.superadmin, "roles": ["admin"]}),
    )
    .await;
    let demoted = token_for(&app.db, acme.superadmin).await;
    let res = undo(&app, &demoted, &own["undoToken"]).await;
    assert!(
        matches!(res.status.as_u16(), 403 | 409),
        "{} {}",
        res.status,
        res.text()
    );
    let roles = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.superadmin),
            &other,
        ))
        .await
        .json();
    assert_eq!(roles["items"][0]["roles"], json!(["admin"]), "{roles}");
}

/// A change made after the entry (by anyone) makes the entry stale: 409.
#[actix_web::test]
async fn an_entry_whose_record_changed_since_is_refused() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let (sales, _) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    let rename = put_ok(
        &app,
        &admin,
        "/api/directory/organizations",
        json!({"id": sales, "name": "Sales EMEA"}),
    )
    .await;
    put_ok(
        &app,
        &sa,
        "/api/directory/organizations",
        json!({"id": sales, "name": "Sales APAC"}),
    )
    .await;
    let res = undo(&app, &admin, &rename["undoToken"]).await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(res.json()["code"], "changed_since");
    assert_eq!(
        org(&app, &admin, sales).await.unwrap()["name"],
        "Sales APAC"
    );
}

/// Finding 2: moving a user from tenant A to tenant B recorded the entry in
/// B; B's admin read A's data in it and undid it, putting the user back into
/// A. The entry now records both tenants and only super admins reach it.
#[actix_web::test]
async fn an_entry_touching_two_tenants_is_out_of_a_tenant_admins_reach() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let beta = seed(&app.db, "Beta", "beta.com").await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let beta_admin = token_for(&app.db, beta.admin).await;
    let res = app
        .send(put_json(
            "/api/auth/users",
            &sa,
            json!({"id": acme.employee, "organizationId": beta.organization_id, "roles": ["employee"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let moved = operation(&res);

    let list = app
        .send(get(
            "/api/audit_logs/audit-logs/actions?pageSize=100",
            &beta_admin,
        ))
        .await;
    assert_eq!(list.status, 200);
    assert!(
        !list.text().contains(&acme.employee.to_string()),
        "{}",
        list.text()
    );
    assert!(!list.text().contains(&acme.tenant_id.to_string()));

    assert_eq!(
        undo(&app, &beta_admin, &moved["undoToken"]).await.status,
        400
    );
    let user = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.employee),
            &beta_admin,
        ))
        .await
        .json();
    assert_eq!(
        user["items"][0]["tenantId"],
        json!(beta.tenant_id),
        "{user}"
    );

    // The super admin who made the move may undo it (working in tenant B,
    // where the entry is).
    let res = app
        .send(
            post_json(
                "/api/audit_logs/audit-logs/actions/undo",
                &sa,
                json!({"undoToken": moved["undoToken"]}),
            )
            .insert_header(("x-om-selected-tenant", beta.tenant_id.to_string())),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let acme_admin = token_for(&app.db, acme.admin).await;
    let user = app
        .send(get(
            &format!("/api/auth/users?id={}", acme.employee),
            &acme_admin,
        ))
        .await
        .json();
    assert_eq!(
        user["items"][0]["tenantId"],
        json!(acme.tenant_id),
        "{user}"
    );
}

/// Tenant-wide undo by a super admin of an admin's change keeps working.
#[actix_web::test]
async fn a_super_admin_undoes_an_admins_change_tenant_wide() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let change = put_ok(
        &app,
        &admin,
        "/api/auth/users",
        json!({"id": acme.employee, "name": "Temp"}),
    )
    .await;
    let res = undo(&app, &sa, &change["undoToken"]).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(res.json().get("notRestored").is_none());
}

/// An admin limited to one organization subtree, for the scope tests.
struct Restricted {
    token: String,
    scope: Uuid,
}

async fn restricted<S: AppService>(app: &TestApp<S>, acme: &Tenant) -> Restricted {
    let admin = token_for(&app.db, acme.admin).await;
    let (scope, _) = create_org(
        app,
        &admin,
        json!({"name": "Branch", "parentId": acme.organization_id}),
    )
    .await;
    let user = user_with_features(
        &app.db,
        acme,
        "branch-admin@acme.com",
        &["auth.*", "directory.organizations.*", "audit_logs.*"],
        Some(vec![scope]),
        Some(scope),
    )
    .await;
    Restricted {
        token: token_for(&app.db, user).await,
        scope,
    }
}

/// Finding 3a: `childIds` pulled organizations from outside the caller's set
/// under its own, and `parentId: null` detached its own organization.
#[actix_web::test]
async fn a_restricted_admin_cannot_move_organizations_outside_its_scope() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let r = restricted(&app, &acme).await;
    let root = acme.organization_id;

    // Legitimate: a child of its own organization, renamed, moved inside.
    let (team, _) = create_org(&app, &r.token, json!({"name": "Team", "parentId": r.scope})).await;
    let (squad, _) = create_org(
        &app,
        &r.token,
        json!({"name": "Squad", "parentId": r.scope}),
    )
    .await;
    put_ok(
        &app,
        &r.token,
        "/api/directory/organizations",
        json!({"id": squad, "parentId": team, "name": "Squad A"}),
    )
    .await;

    let attempts = [
        (
            "POST",
            json!({"name": "Grab", "parentId": r.scope, "childIds": [root]}),
        ),
        ("POST", json!({"name": "Top"})),
        ("PUT", json!({"id": team, "childIds": [root]})),
        ("PUT", json!({"id": r.scope, "parentId": null})),
        ("PUT", json!({"id": team, "parentId": null})),
    ];
    for (method, body) in attempts {
        let req = if method == "POST" {
            post_json("/api/directory/organizations", &r.token, body.clone())
        } else {
            put_json("/api/directory/organizations", &r.token, body.clone())
        };
        let res = app.send(req).await;
        assert_eq!(res.status, 403, "{method} {body}: {}", res.text());
    }
    let sa = token_for(&app.db, acme.superadmin).await;
    let tree = org(&app, &sa, root).await.unwrap();
    assert_eq!(tree["parentId"], json!(null));
    assert_eq!(
        org(&app, &sa, r.scope).await.unwrap()["parentId"],
        json!(root)
    );
}

/// Finding 3b/3c: assigning a role that covers every organization, and ACLs
/// stored as unrestricted, let a restricted admin reach the whole tenant.
#[actix_web::test]
async fn a_restricted_admin_grants_only_inside_its_organizations() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let r = restricted(&app, &acme).await;
    let sa = token_for(&app.db, acme.superadmin).await;

    // The tenant's admin role reaches every organization: not assignable.
    let res = app
        .send(post_json(
            "/api/auth/users",
            &r.token,
            json!({"email": "new@acme.com", "password": NEW_PASSWORD,
                   "organizationId": r.scope, "roles": ["employee"]}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["code"], "organization_out_of_scope");

    // A role it creates reaches only its organizations, and is assignable.
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &r.token,
            json!({"name": "Branch staff"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let role: Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &r.token,
            json!({"roleId": role, "features": ["auth.users.list"], "organizations": null}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let acl = app
        .send(get(&format!("/api/auth/roles/acl?roleId={role}"), &sa))
        .await
        .json();
    assert_eq!(acl["organizations"], json!([r.scope]), "{acl}");
    let res = app
        .send(post_json(
            "/api/auth/users",
            &r.token,
            json!({"email": "new@acme.com", "password": NEW_PASSWORD,
                   "organizationId": r.scope, "roles": [role]}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let user: Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();

    // A user override with organizations omitted or null is the caller's set;
    // naming an organization outside it is 403.
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &r.token,
            json!({"userId": user, "features": ["auth.users.list"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        user_acl(&app, &sa, user).await["organizations"],
        json!([r.scope])
    );
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &r.token,
            json!({"userId": user, "features": ["auth.users.list"],
                   "organizations": [acme.organization_id]}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());

    // The tenant-wide employee role cannot be edited by the restricted admin.
    let roles = app
        .send(get("/api/auth/roles?search=employee", &sa))
        .await
        .json();
    let employee = roles["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "employee")
        .map(|r| r["id"].clone())
        .unwrap();
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &r.token,
            json!({"roleId": employee, "features": ["auth.users.list"]}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
}

/// Undo is authorized like the forward write: a restricted admin cannot undo
/// a tenant admin's move of one of its organizations out to the tenant root.
#[actix_web::test]
async fn a_restricted_admin_cannot_undo_outside_its_scope() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let r = restricted(&app, &acme).await;
    let admin = token_for(&app.db, acme.admin).await;
    let (team, _) = create_org(&app, &r.token, json!({"name": "Team", "parentId": r.scope})).await;
    // The tenant admin, working in the branch (so the entry is the branch's),
    // moves Team under the tenant root; undoing it would write into the root.
    let res = app
        .send(
            put_json(
                "/api/directory/organizations",
                &admin,
                json!({"id": team, "parentId": acme.organization_id}),
            )
            .insert_header(("x-om-selected-org", r.scope.to_string())),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let moved = operation(&res);
    let res = undo(&app, &r.token, &moved["undoToken"]).await;
    assert_eq!(res.status, 403, "{}", res.text());
    let sa = token_for(&app.db, acme.superadmin).await;
    assert_eq!(
        org(&app, &sa, team).await.unwrap()["parentId"],
        json!(acme.organization_id)
    );
    // The tenant admin's own undo works.
    let res = app
        .send(
            post_json(
                "/api/audit_logs/audit-logs/actions/undo",
                &admin,
                json!({"undoToken": moved["undoToken"]}),
            )
            .insert_header(("x-om-selected-org", r.scope.to_string())),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        org(&app, &sa, team).await.unwrap()["parentId"],
        json!(r.scope)
    );
}
