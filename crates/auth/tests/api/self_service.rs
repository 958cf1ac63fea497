//! One's own e-mail and password through the administration route
//! (`PUT /auth/users` on one's own id) need the same proof as the profile:
//! the current password (docs/security.md, "Account takeover paths").

use serde_json::json;
use stoa_auth::testing::token_for;
use stoa_testkit::count;

use super::support::*;

const NEW_PASSWORD: &str = "N3w-Passw0rd!";

/// The finding: anyone allowed to edit users changed their own e-mail and
/// password through `PUT /auth/users` with no current password, and the old
/// address was not told.
#[actix_web::test]
async fn own_email_and_password_through_the_admin_route_need_the_current_password() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let path = "/api/auth/users";

    for body in [
        json!({"id": acme.admin, "email": "thief@evil.com"}),
        json!({"id": acme.admin, "password": NEW_PASSWORD}),
        json!({"id": acme.admin, "password": NEW_PASSWORD, "currentPassword": "guess"}),
        json!({"id": acme.admin, "email": "thief@evil.com", "currentPassword": ""}),
    ] {
        let res = app.send(put_json(path, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        assert_eq!(
            res.json()["issues"][0]["path"],
            json!(["currentPassword"]),
            "{body}: {}",
            res.text()
        );
    }
    let res = app.send(login_form("admin@acme.com", NEW_PASSWORD)).await;
    assert_eq!(res.status, 401, "the password did not change");
    let res = app.send(get("/api/auth/profile", &admin)).await;
    assert_eq!(res.json()["email"], "admin@acme.com");

    // Other own fields need no password; other users' credentials neither.
    let res = app
        .send(put_json(
            path,
            &admin,
            json!({"id": acme.admin, "name": "Boss"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(put_json(
            path,
            &admin,
            json!({"id": acme.admin, "email": "ADMIN@acme.com "}),
        ))
        .await;
    assert_eq!(res.status, 200, "the same address: {}", res.text());

    // With the password: changed, and the old address is told.
    let res = app
        .send(put_json(
            path,
            &admin,
            json!({"id": acme.admin, "email": "boss@acme.com", "currentPassword": PASSWORD}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let told = count(
        &app.db,
        "SELECT count(*) AS n FROM mail_outbox WHERE recipient = 'admin@acme.com' \
         AND body LIKE '%boss@acme.com%'",
    )
    .await;
    assert_eq!(told, 1);
}

/// An e-mail change ends the reset and invitation links sent to the old
/// address, whoever changes it and on whichever route.
#[actix_web::test]
async fn an_email_change_ends_the_links_sent_to_the_old_address() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let link = {
        let mut conn = app.db.conn().await.unwrap();
        stoa_auth::queries::create_reset_token(
            &mut conn,
            acme.employee,
            "reset",
            std::time::Duration::from_secs(600),
        )
        .await
        .unwrap()
    };
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "email": "worker@acme.com"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    // The old address was told of the administrator's change too.
    let told = count(
        &app.db,
        "SELECT count(*) AS n FROM mail_outbox WHERE recipient = 'employee@acme.com'",
    )
    .await;
    assert_eq!(told, 1);
    let res = app
        .send(form(
            "/api/auth/reset/confirm",
            &format!("token={link}&password={NEW_PASSWORD}"),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    let res = app.send(login_form("worker@acme.com", NEW_PASSWORD)).await;
    assert_eq!(res.status, 401);
}

/// One's own roles, organization and ACL are left to another administrator
/// (400): a caller who removed their own access could not put it back.
/// Schemathesis found the signing super admin's id in a response and
/// emptied its roles, and the rest of the run saw only 403s.
#[actix_web::test]
async fn own_roles_and_acl_are_left_to_another_administrator() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let refused = "You cannot change your own roles, organization or access";
    let root = token_for(&app.db, acme.superadmin).await;
    let branch = branch(&app, &root, acme.organization_id).await;
    for body in [
        json!({"id": acme.admin, "organizationId": branch}),
        json!({"id": acme.admin, "roles": []}),
        json!({"id": acme.admin, "roles": ["employee"]}),
        json!({"id": acme.admin, "roles": ["admin", "employee"]}),
    ] {
        let res = app
            .send(put_json("/api/auth/users", &admin, body.clone()))
            .await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        assert_eq!(res.json()["error"], refused, "{body}");
    }
    for body in [
        json!({"userId": acme.admin, "features": []}),
        json!({"userId": acme.admin, "features": ["auth.users.list"]}),
    ] {
        let res = app
            .send(put_json("/api/auth/users/acl", &admin, body.clone()))
            .await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        assert_eq!(res.json()["error"], refused, "{body}");
    }
    // Nothing changed: the caller still acts as an administrator.
    let res = app.send(get("/api/auth/users", &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    // The same roles and organization again are no change, and other
    // users' roles still change.
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.admin, "roles": ["admin"], "organizationId": acme.organization_id, "name": "Boss"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "roles": ["admin"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}

/// A super admin cannot take the super-admin flag off a role they hold:
/// with the only such role, nobody could give it back.
#[actix_web::test]
async fn a_super_admin_keeps_the_flag_of_their_own_role() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    let role = role_named(&app, &root, "superadmin").await;
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &root,
            json!({"roleId": role, "isSuperAdmin": false, "features": []}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(
        res.json()["error"],
        "You cannot change your own roles, organization or access"
    );
    let res = app.send(get("/api/directory/tenants", &root)).await;
    assert_eq!(res.status, 200, "still a super admin: {}", res.text());
}
