//! `/auth/roles/acl` and `/auth/users/acl`: reading, sanitising, the grant
//! boundary, optimistic locking, immediate effect, undo.

use serde_json::{Value, json};
use stoa_auth::testing::{token_for, user_with_features};
use uuid::Uuid;

use super::support::*;

#[actix_web::test]
async fn role_acl_edits_take_effect_on_the_next_request() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    let employee_role = role_named(&app, &admin, "employee").await;

    let res = app
        .send(get(
            &format!("/api/auth/roles/acl?roleId={employee_role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let acl = res.json();
    assert_eq!(acl["isSuperAdmin"], false);
    assert_eq!(acl["organizations"], Value::Null);
    assert!(acl["updatedAt"].is_string());
    // The employee cannot list users yet (and its ACL is cached now).
    assert_eq!(
        app.send(get("/api/auth/users", &employee)).await.status,
        403
    );

    // A feature no module registers: refused to a caller who is not a super
    // admin, naming it; nothing stored.
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &admin,
            json!({"roleId": employee_role, "features": ["auth.users.list", "sales.*"]}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["error"], "Cannot grant feature sales.*.");
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &admin,
            json!({"roleId": employee_role, "features": [" auth.users.list ", "auth.users.list"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "sanitized": false}));
    let undo_grant = undo_token(&res);
    let res = app
        .send(get(
            &format!("/api/auth/roles/acl?roleId={employee_role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["features"], json!(["auth.users.list"]));
    // Seen at once, despite the cache.
    assert_eq!(
        app.send(get("/api/auth/users", &employee)).await.status,
        200
    );

    // Omitted fields keep their values.
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &admin,
            json!({"roleId": employee_role, "organizations": [acme.organization_id]}),
        ))
        .await;
    assert_eq!(res.json(), json!({"ok": true, "sanitized": false}));
    let res = app
        .send(get(
            &format!("/api/auth/roles/acl?roleId={employee_role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["features"], json!(["auth.users.list"]));
    assert_eq!(res.json()["organizations"], json!([acme.organization_id]));
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &admin,
            json!({"roleId": employee_role, "organizations": [Uuid::new_v4()]}),
        ))
        .await;
    assert_eq!(res.status, 400, "unknown organization");

    // Undo the organization change, then the grant: the employee loses access again.
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &admin,
            json!({"roleId": employee_role, "organizations": null}),
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(undo(&app, &admin, &undo_token(&res)).await.status, 200);
    let res = app
        .send(get(
            &format!("/api/auth/roles/acl?roleId={employee_role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["organizations"], json!([acme.organization_id]));
    // The first grant is no longer the admin's latest change of that role.
    assert_eq!(undo(&app, &admin, &undo_grant).await.status, 400);
}

#[actix_web::test]
async fn the_grant_boundary_holds() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee_role = role_named(&app, &admin, "employee").await;
    let admin_role = role_named(&app, &admin, "admin").await;

    // Features the admin lacks, `*`, the super-admin flag: all 403.
    for body in [
        json!({"roleId": employee_role, "features": ["directory.tenants.view"]}),
        json!({"roleId": employee_role, "features": ["*"]}),
        json!({"roleId": employee_role, "features": ["directory.*"]}),
        json!({"roleId": employee_role, "isSuperAdmin": true}),
        json!({"roleId": admin_role, "features": ["*"]}),
    ] {
        let res = app
            .send(put_json("/api/auth/roles/acl", &admin, body.clone()))
            .await;
        assert_eq!(res.status, 403, "{body}: {}", res.text());
    }
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &admin,
            json!({"roleId": employee_role, "features": ["directory.tenants.view"]}),
        ))
        .await;
    assert_eq!(
        res.json()["error"],
        "Cannot grant feature directory.tenants.view."
    );
    // Nor can the admin make itself a super admin through its own override.
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &admin,
            json!({"userId": acme.admin, "isSuperAdmin": true}),
        ))
        .await;
    assert_eq!(res.status, 403);
    // A super admin can.
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &root,
            json!({"roleId": employee_role, "features": ["directory.tenants.view"], "isSuperAdmin": false}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    // Super-admin roles and users stay out of a tenant admin's reach.
    let sa_role = app
        .send(get("/api/auth/roles?search=superadmin", &root))
        .await
        .json()["items"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let res = app
        .send(get(
            &format!("/api/auth/roles/acl?roleId={sa_role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app
        .send(get(
            &format!("/api/auth/users/acl?userId={}", acme.superadmin),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 403);
}

#[actix_web::test]
async fn organization_restricted_admins_grant_inside_their_scope() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    let branch = branch(&app, &root, acme.organization_id).await;
    let manager = user_with_features(
        &app.db,
        &acme,
        "manager@acme.com",
        &["auth.*"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let manager = token_for(&app.db, manager).await;
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &manager,
            json!({"name": "Branch staff"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let staff = res.json()["id"].as_str().unwrap().to_string();
    // `null` means the caller's own organizations (it cannot mean "all").
    for (orgs, status) in [
        (json!([branch]), 200),
        (json!([acme.organization_id]), 403),
        (Value::Null, 200),
    ] {
        let res = app
            .send(put_json(
                "/api/auth/roles/acl",
                &manager,
                json!({"roleId": staff, "features": ["auth.users.list"], "organizations": orgs}),
            ))
            .await;
        assert_eq!(res.status, status, "{orgs}: {}", res.text());
    }
}

#[actix_web::test]
async fn optimistic_lock_and_bad_requests() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee_role = role_named(&app, &admin, "employee").await;
    let current = app
        .send(get(
            &format!("/api/auth/roles/acl?roleId={employee_role}"),
            &admin,
        ))
        .await
        .json()["updatedAt"]
        .as_str()
        .unwrap()
        .to_string();
    let locked = |expected: &str| {
        put_json(
            "/api/auth/roles/acl",
            &admin,
            json!({"roleId": employee_role, "features": ["auth.users.list"]}),
        )
        .insert_header((
            "x-om-ext-optimistic-lock-expected-updated-at",
            expected.to_string(),
        ))
    };
    let res = app.send(locked("2001-01-01T00:00:00Z")).await;
    assert_eq!(res.status, 409);
    assert_eq!(res.json()["code"], "optimistic_lock_conflict");
    assert_eq!(res.json()["expectedUpdatedAt"], "2001-01-01T00:00:00.000Z");
    assert_eq!(app.send(locked(&current)).await.status, 200);
    assert_eq!(app.send(locked("yesterday")).await.status, 400);

    for path in [
        "/api/auth/roles/acl",
        "/api/auth/roles/acl?roleId=nope",
        "/api/auth/users/acl",
        "/api/auth/users/acl?userId=nope",
    ] {
        assert_eq!(app.send(get(path, &admin)).await.status, 400, "{path}");
    }
    let res = app
        .send(get(
            &format!("/api/auth/roles/acl?roleId={}", Uuid::new_v4()),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 404);
    // Another tenant's role and user: invisible; naming its tenant: 403.
    let globex_admin = token_for(&app.db, globex.admin).await;
    let globex_role = role_named(&app, &globex_admin, "employee").await;
    let res = app
        .send(get(
            &format!("/api/auth/roles/acl?roleId={globex_role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(get(
            &format!(
                "/api/auth/roles/acl?roleId={employee_role}&tenantId={}",
                globex.tenant_id
            ),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app
        .send(get(
            &format!("/api/auth/users/acl?userId={}", globex.employee),
            &admin,
        ))
        .await;
    // Another tenant's user reads like an unknown one: no override.
    assert_eq!(res.status, 200);
    let unknown = app
        .send(get(
            &format!("/api/auth/users/acl?userId={}", uuid::Uuid::new_v4()),
            &admin,
        ))
        .await;
    assert_eq!(res.json(), unknown.json());
    assert_eq!(res.json()["hasCustomAcl"], false);
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &admin,
            json!({"roleId": employee_role, "features": "auth.users.list"}),
        ))
        .await;
    assert_eq!(res.status, 400);
}

#[actix_web::test]
async fn user_overrides_replace_roles() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    let path = format!("/api/auth/users/acl?userId={}", acme.employee);

    let res = app.send(get(&path, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({"hasCustomAcl": false, "isSuperAdmin": false, "features": [], "organizations": null, "updatedAt": null})
    );
    // `*` and tenant-level grants are stripped for non-super callers.
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &admin,
            json!({"userId": acme.employee, "features": ["auth.users.list", "*", "directory.tenants.view"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "sanitized": true}));
    let token = undo_token(&res);
    let res = app.send(get(&path, &admin)).await;
    assert_eq!(res.json()["hasCustomAcl"], true);
    assert_eq!(res.json()["features"], json!(["auth.users.list"]));
    assert_eq!(
        app.send(get("/api/auth/users", &employee)).await.status,
        200
    );
    // The override replaces the role ACLs: audit-log access of the role is gone.
    let res = app
        .send(get("/api/audit_logs/audit-logs/actions", &employee))
        .await;
    assert_eq!(res.status, 403);

    // An organization restriction alone is refused.
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &admin,
            json!({"userId": acme.employee, "features": [], "organizations": [acme.organization_id]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["code"], "acl_features_required");
    // Omitted fields keep their values.
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &admin,
            json!({"userId": acme.employee, "organizations": [acme.organization_id]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app.send(get(&path, &admin)).await;
    assert_eq!(res.json()["features"], json!(["auth.users.list"]));
    assert_eq!(res.json()["organizations"], json!([acme.organization_id]));

    // No features: the override goes, the roles apply again.
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &admin,
            json!({"userId": acme.employee, "features": [], "organizations": null}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        app.send(get(&path, &admin)).await.json()["hasCustomAcl"],
        false
    );
    assert_eq!(
        app.send(get("/api/auth/users", &employee)).await.status,
        403
    );
    assert_eq!(
        app.send(get("/api/audit_logs/audit-logs/actions", &employee))
            .await
            .status,
        200
    );
    // The first edit is no longer the latest for this user: its token is stale.
    assert_eq!(undo(&app, &admin, &token).await.status, 400);
}

#[actix_web::test]
async fn every_route_needs_acl_manage() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let lister = user_with_features(
        &app.db,
        &acme,
        "lister@acme.com",
        &["auth.users.list", "auth.roles.list"],
        None,
        None,
    )
    .await;
    let lister = token_for(&app.db, lister).await;
    let id = Uuid::new_v4();
    for req in [
        get(&format!("/api/auth/roles/acl?roleId={id}"), &lister),
        put_json("/api/auth/roles/acl", &lister, json!({"roleId": id})),
        get(&format!("/api/auth/users/acl?userId={id}"), &lister),
        put_json("/api/auth/users/acl", &lister, json!({"userId": id})),
    ] {
        let res = app.send(req).await;
        assert_eq!(res.status, 403);
        assert_eq!(res.json()["requiredFeatures"], json!(["auth.acl.manage"]));
    }
    let res = app
        .send(actix_web::test::TestRequest::get().uri(&format!("/api/auth/users/acl?userId={id}")))
        .await;
    assert_eq!(res.status, 401);
}

/// A super admin's grant of a feature no module registers is kept (stored,
/// inert, listed), so a module installed later honours it, as the reference.
#[actix_web::test]
async fn a_super_admins_grant_of_an_unknown_feature_is_kept() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let superadmin = token_for(&app.db, acme.superadmin).await;
    let employee_role = role_named(&app, &admin, "employee").await;
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &superadmin,
            json!({"roleId": employee_role, "features": ["auth.users.list", "sales.*"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(get(
            &format!("/api/auth/roles/acl?roleId={employee_role}"),
            &superadmin,
        ))
        .await;
    assert_eq!(
        res.json()["features"],
        json!(["auth.users.list", "sales.*"])
    );
}
