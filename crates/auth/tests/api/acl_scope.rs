//! The ACL rules Open Mercato clients rely on: a user override never grants
//! more than the editor holds, users are never created in another tenant's
//! organization, and deleting a user takes (and undo gives back) its ACL
//! override and role links.

use serde_json::json;
use stoa_auth::testing::{token_for, user_with_features};
use uuid::Uuid;

use super::support::*;

#[actix_web::test]
async fn user_acl_grants_stay_inside_the_editors_own_acl() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    // An ACL manager without the directory features.
    let editor = user_with_features(
        &app.db,
        &acme,
        "acl-editor@acme.com",
        &["auth.acl.manage", "auth.users.list"],
        None,
        Some(acme.organization_id),
    )
    .await;
    let editor = token_for(&app.db, editor).await;
    for features in [
        json!(["directory.organizations.manage"]),
        json!(["auth.users.delete"]),
        json!(["auth.*"]),
        json!(["auth.users.list", "directory.organizations.view"]),
    ] {
        let res = app
            .send(put_json(
                "/api/auth/users/acl",
                &editor,
                json!({"userId": acme.employee, "features": features}),
            ))
            .await;
        assert_eq!(res.status, 403, "{features}: {}", res.text());
    }
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &editor,
            json!({"userId": acme.employee, "features": ["directory.organizations.manage"]}),
        ))
        .await;
    assert_eq!(
        res.json()["error"],
        "Cannot grant feature directory.organizations.manage."
    );
    // Nothing was stored by the refused requests.
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(get(
            &format!("/api/auth/users/acl?userId={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["hasCustomAcl"], false);

    // A feature no module registers (the reference scenario `sales.*`): 403
    // naming it for an ACL manager, nothing stored.
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &editor,
            json!({"userId": acme.employee, "features": ["auth.users.list", "sales.*"]}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["error"], "Cannot grant feature sales.*.");
    let res = app
        .send(get(
            &format!("/api/auth/users/acl?userId={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["hasCustomAcl"], false);
    // What the editor holds is grantable.
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &editor,
            json!({"userId": acme.employee, "features": ["auth.users.list"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "sanitized": false}));
    let res = app
        .send(get(
            &format!("/api/auth/users/acl?userId={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["features"], json!(["auth.users.list"]));
}

#[actix_web::test]
async fn tenant_admins_cannot_create_users_in_another_tenants_organization() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            "/api/auth/users",
            &admin,
            json!({"email": "spy@globex.com", "password": "Secret123!", "organizationId": globex.organization_id}),
        ))
        .await;
    // Another tenant's organization: 404 `Organization not found` (the
    // reference's answer), although row-level security hides it from the
    // admin's own lookup.
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(res.json(), json!({"error": "Organization not found"}));
    // Moving an existing user there is refused the same way.
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "organizationId": globex.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(res.json()["error"], "Organization not found");
    // Nothing was created in either tenant.
    let root = token_for(&app.db, globex.superadmin).await;
    let res = app
        .send(get("/api/auth/users?search=spy%40globex.com", &root))
        .await;
    assert_eq!(res.json()["total"], 0, "{}", res.text());
    // An unknown organization stays a 400 naming the field, and so does a
    // malformed id.
    let res = app
        .send(post_json(
            "/api/auth/users",
            &admin,
            json!({"email": "x@acme.com", "password": "Secret123!", "organizationId": Uuid::new_v4()}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["error"], "Organization not found");
    assert_eq!(
        res.json()["details"]["fieldErrors"]["organizationId"],
        json!(["Unknown organization"])
    );
    let res = app
        .send(post_json(
            "/api/auth/users",
            &admin,
            json!({"email": "x@acme.com", "password": "Secret123!", "organizationId": "not-a-uuid"}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert!(res.text().contains("organizationId"), "{}", res.text());
    // Nothing was written by any of the refusals.
    let res = app
        .send(get("/api/auth/users?search=x%40acme.com", &admin))
        .await;
    assert_eq!(res.json()["total"], 0, "{}", res.text());
}

#[actix_web::test]
async fn deleting_a_user_takes_its_acl_and_roles_and_undo_restores_them() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            "/api/auth/users",
            &admin,
            json!({"email": "temp@acme.com", "password": "Secret123!", "organizationId": acme.organization_id, "roles": ["employee"]}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let user: Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &admin,
            json!({"userId": user, "features": ["auth.users.list"], "organizations": [acme.organization_id]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let acl_before = app
        .send(get(&format!("/api/auth/users/acl?userId={user}"), &admin))
        .await
        .json();
    assert_eq!(acl_before["hasCustomAcl"], true);

    let res = app
        .send(stoa_testkit::requests::delete(
            &format!("/api/auth/users?id={user}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let token = undo_token(&res);
    // Gone, with its override and memberships.
    let mut conn = app.db.conn().await.unwrap();
    let (acls, roles) = links(&mut conn, user).await;
    assert_eq!((acls, roles), (0, 0), "override and role links removed");
    drop(conn);
    let res = app
        .send(get(&format!("/api/auth/users/acl?userId={user}"), &admin))
        .await;
    // The deleted user's ACL: 200 without an override, as the reference.
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["hasCustomAcl"], false);
    assert_eq!(res.json()["features"], json!([]));

    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/undo",
            &admin,
            json!({"undoToken": token}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let acl_after = app
        .send(get(&format!("/api/auth/users/acl?userId={user}"), &admin))
        .await
        .json();
    assert_eq!(acl_after["hasCustomAcl"], true);
    assert_eq!(acl_after["features"], acl_before["features"]);
    assert_eq!(acl_after["organizations"], acl_before["organizations"]);
    let res = app
        .send(get(&format!("/api/auth/users?id={user}"), &admin))
        .await;
    assert_eq!(res.json()["items"][0]["roles"], json!(["employee"]));
    let mut conn = app.db.conn().await.unwrap();
    assert_eq!(links(&mut conn, user).await, (1, 1));
}

/// Rows of (user_acls, user_roles) of `user` (both are hard-deleted).
async fn links(conn: &mut diesel_async::AsyncPgConnection, user: Uuid) -> (i64, i64) {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use stoa_auth::schema::{user_acls, user_roles};
    let acls: i64 = user_acls::table
        .filter(user_acls::user_id.eq(user))
        .count()
        .get_result(conn)
        .await
        .unwrap();
    let roles: i64 = user_roles::table
        .filter(user_roles::user_id.eq(user))
        .count()
        .get_result(conn)
        .await
        .unwrap();
    (acls, roles)
}
