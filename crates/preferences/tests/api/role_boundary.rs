//! The attacker's side of role-scoped preference writes: a tenant admin, a
//! restricted admin and a caller holding only `auth.sidebar.manage` try to
//! rewrite the navigation (labels, order, hidden pages) of roles above them.
//! A role's preference is written only by a caller who could grant the role.

use serde_json::{Value, json};
use stoa_auth::testing::{token_for, user_with_features};
use stoa_testkit::requests::delete;

use super::sidebar::role_id;
use super::support::*;

const PREFS: &str = "/api/auth/sidebar/preferences";

/// The role's stored settings, as a super admin reads them.
async fn role_settings<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    root: &str,
    role: uuid::Uuid,
) -> Value {
    let res = app.send(get(&format!("{PREFS}?roleId={role}"), root)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["settings"].clone()
}

#[actix_web::test]
async fn only_callers_who_could_grant_a_role_write_its_navigation() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let root = token_for(&app.db, acme.superadmin).await;
    let admin = token_for(&app.db, acme.admin).await;
    let superadmin_role = role_id(&app.db, acme.tenant_id, "superadmin").await;
    let admin_role = role_id(&app.db, acme.tenant_id, "admin").await;
    // Restricted to the tenant's organization: every admin role reaches all.
    let branch = user_with_features(
        &app.db,
        &acme,
        "branch@acme.com",
        &["auth.*"],
        Some(vec![acme.organization_id]),
        None,
    )
    .await;
    let branch = token_for(&app.db, branch).await;
    let sidebar_only = user_with_features(
        &app.db,
        &acme,
        "sidebar@acme.com",
        &["auth.sidebar.manage"],
        None,
        None,
    )
    .await;
    let sidebar_only = token_for(&app.db, sidebar_only).await;

    // The super admin labels both roles; nobody below may change that.
    let labels = json!({"itemLabels": {"/backend/users": "Users"}});
    for role in [superadmin_role, admin_role] {
        let res = app
            .send(put_json(
                PREFS,
                &root,
                json!({"scope": {"type": "role", "roleId": role}, "settings": labels}),
            ))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
    }
    let before = (
        role_settings(&app, &root, superadmin_role).await,
        role_settings(&app, &root, admin_role).await,
    );
    let forged = json!({"itemLabels": {"/backend/users": "Click here to verify your account"}});
    let attempts = [
        ("tenant admin", &admin, superadmin_role),
        ("restricted admin", &branch, admin_role),
        ("restricted admin", &branch, superadmin_role),
        ("sidebar manager", &sidebar_only, admin_role),
    ];
    for (who, token, role) in attempts {
        let scoped = put_json(
            PREFS,
            token,
            json!({"scope": {"type": "role", "roleId": role}, "settings": forged}),
        );
        let copied = put_json(
            PREFS,
            token,
            json!({"settings": forged, "applyToRoles": [role]}),
        );
        let cleared = put_json(
            PREFS,
            token,
            json!({"settings": {}, "clearRoleIds": [role]}),
        );
        let deleted = delete(&format!("{PREFS}?roleId={role}"), token);
        for (how, req) in [
            ("scope", scoped),
            ("applyToRoles", copied),
            ("clearRoleIds", cleared),
            ("delete", deleted),
        ] {
            let res = app.send(req).await;
            assert_eq!(res.status, 403, "{who} via {how} on {role}: {}", res.text());
        }
    }
    let after = (
        role_settings(&app, &root, superadmin_role).await,
        role_settings(&app, &root, admin_role).await,
    );
    assert_eq!(before, after, "no role's navigation changed");

    // The legitimate paths: an admin labels its own role, a restricted admin
    // a role inside its organizations, the super admin the super-admin role.
    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"scope": {"type": "role", "roleId": admin_role}, "settings": forged}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let own = role_id(&app.db, acme.tenant_id, "role-branch@acme.com").await;
    let res = app
        .send(put_json(
            PREFS,
            &branch,
            json!({"settings": labels, "applyToRoles": [own]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(delete(&format!("{PREFS}?roleId={superadmin_role}"), &root))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}

/// Issue 49: a role the tenant's administrator made for the whole tenant
/// (reaching every organization, granting nothing yet) is a tenant-wide
/// record. An administrator restricted to a sibling organization does not
/// write its navigation by any route (403 `organization_out_of_scope`), and
/// its stored navigation is unchanged; a role of the sibling organization
/// stays writable to it.
#[actix_web::test]
async fn restricted_admins_leave_tenant_wide_roles_navigation_alone() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &root,
            json!({"name": "Sibling", "parentId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let sibling: uuid::Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &root,
            json!({"name": "Tenant clerks"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let clerks: uuid::Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();
    let labels = json!({"itemLabels": {"/backend/users": "Users"}});
    let res = app
        .send(put_json(
            PREFS,
            &root,
            json!({"scope": {"type": "role", "roleId": clerks}, "settings": labels}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let before = role_settings(&app, &root, clerks).await;
    let restricted = user_with_features(
        &app.db,
        &acme,
        "sibling@acme.com",
        &["*"],
        Some(vec![sibling]),
        Some(sibling),
    )
    .await;
    let restricted = token_for(&app.db, restricted).await;
    let forged = json!({"itemLabels": {"/backend/users": "Verify your account here"}});
    for (how, req) in [
        (
            "scope",
            put_json(
                PREFS,
                &restricted,
                json!({"scope": {"type": "role", "roleId": clerks}, "settings": forged}),
            ),
        ),
        (
            "applyToRoles",
            put_json(
                PREFS,
                &restricted,
                json!({"settings": forged, "applyToRoles": [clerks]}),
            ),
        ),
        (
            "clearRoleIds",
            put_json(
                PREFS,
                &restricted,
                json!({"settings": {}, "clearRoleIds": [clerks]}),
            ),
        ),
        (
            "delete",
            delete(&format!("{PREFS}?roleId={clerks}"), &restricted),
        ),
    ] {
        let res = app.send(req).await;
        assert_eq!(res.status, 403, "{how}: {}", res.text());
        assert_eq!(res.json()["code"], "organization_out_of_scope", "{how}");
    }
    assert_eq!(role_settings(&app, &root, clerks).await, before);

    // A role it made reaches the sibling organization: writable.
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &restricted,
            json!({"name": "Sibling clerks"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let own = res.json()["id"].as_str().unwrap().to_string();
    let res = app
        .send(put_json(
            PREFS,
            &restricted,
            json!({"scope": {"type": "role", "roleId": own}, "settings": forged}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}
