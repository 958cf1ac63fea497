//! The organization scope under every list shape and every selection
//! (docs/security.md): `[]` is judged by who it then lets act where, and a
//! selection (`__all__` included) only ever narrows what a restricted
//! administrator reads, writes and undoes.

use actix_web::test::TestRequest;
use serde_json::{Value, json};
use stoa_testkit::{AppService, TestApp};
use uuid::Uuid;

use super::support::*;

const PASSWORD: &str = "N3w-Passw0rd!";

fn all(req: TestRequest) -> TestRequest {
    req.insert_header(("x-om-selected-org", "__all__"))
}

async fn role_of(db: &stoa_core::db::Db, user: Uuid) -> Uuid {
    let mut conn = db.conn().await.unwrap();
    stoa_auth::queries::role_ids_of(&mut conn, user)
        .await
        .unwrap()[0]
}

async fn role_acl<S: AppService>(app: &TestApp<S>, token: &str, role: Uuid) -> Value {
    let res = app
        .send(get(&format!("/api/auth/roles/acl?roleId={role}"), token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

/// An administrator whose home is the tenant's root organization (HQ) but
/// whose role limits it to one branch.
struct BranchAdmin {
    user: Uuid,
    token: String,
    branch: Uuid,
}

async fn branch_admin<S: AppService>(app: &TestApp<S>, acme: &Tenant) -> BranchAdmin {
    let branch =
        stoa_auth::testing::organization(&app.db, acme.tenant_id, acme.organization_id, "Branch")
            .await;
    let user = user_with_features(
        &app.db,
        acme,
        "branch-admin@acme.com",
        &["auth.*", "directory.organizations.*", "audit_logs.*"],
        Some(vec![branch]),
        Some(acme.organization_id),
    )
    .await;
    BranchAdmin {
        user,
        token: token_for(&app.db, user).await,
        branch,
    }
}

/// The finding: `"organizations": []` passed the "subset of mine" check but
/// means "each holder's home subtree", so an HQ admin limited to a branch
/// widened itself to the whole tenant and reset the tenant admin's password.
#[actix_web::test]
async fn an_empty_organization_list_never_widens_a_role() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let b = branch_admin(&app, &acme).await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let own_role = role_of(&app.db, b.user).await;

    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &b.token,
            json!({"roleId": own_role, "organizations": []}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["code"], "organization_out_of_scope");
    assert_eq!(
        role_acl(&app, &sa, own_role).await["organizations"],
        json!([b.branch])
    );
    // Still limited: the tenant admin's password is out of reach.
    let token = token_for(&app.db, b.user).await;
    let res = app
        .send(put_json(
            "/api/auth/users",
            &token,
            json!({"id": acme.admin, "password": PASSWORD}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());

    // `[]` is fine where every holder lives inside the branch: a role of the
    // branch admin's own, held by a branch user.
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &b.token,
            json!({"name": "Branch staff"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let staff: Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &b.token,
            json!({"roleId": staff, "features": ["auth.users.list"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(post_json(
            "/api/auth/users",
            &b.token,
            json!({"email": "clerk@acme.com", "password": PASSWORD,
                   "organizationId": b.branch, "roles": [staff]}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let clerk: Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &b.token,
            json!({"roleId": staff, "organizations": []}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    // A user override of `[]` reaches the user's home: inside the branch.
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &b.token,
            json!({"userId": clerk, "features": ["auth.users.list"], "organizations": []}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    // Once an HQ user holds that role, its `[]` reaches HQ: the branch admin
    // may no longer widen what it grants, nor undo its way around that.
    let res = app
        .send(put_json(
            "/api/auth/users",
            &sa,
            json!({"id": acme.employee, "roles": [staff]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &b.token,
            json!({"roleId": staff, "features": ["auth.users.list", "auth.users.edit"]}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(
        role_acl(&app, &sa, staff).await["features"],
        json!(["auth.users.list"])
    );
}

/// The finding: under `__all__` a restricted admin undid an unrestricted
/// admin's narrowing of a user ACL whose scope lies outside the restricted
/// admin's organizations (scope was checked only when it changed).
#[actix_web::test]
async fn under_all_a_restricted_admin_cannot_undo_a_narrowing() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let b = branch_admin(&app, &acme).await;
    let admin = token_for(&app.db, acme.admin).await;
    let other =
        stoa_auth::testing::organization(&app.db, acme.tenant_id, acme.organization_id, "Other")
            .await;
    let user = user_with_features(
        &app.db,
        &acme,
        "branch-user@acme.com",
        &[],
        Some(vec![b.branch]),
        Some(b.branch),
    )
    .await;
    // The tenant admin, working in the branch, grants the user access to
    // another organization, then narrows the features.
    let in_branch =
        |req: TestRequest| req.insert_header(("x-om-selected-org", b.branch.to_string()));
    let path = "/api/auth/users/acl";
    let wide = json!({"userId": user, "features": ["auth.users.list", "auth.users.edit"],
                      "organizations": [other]});
    let res = app.send(in_branch(put_json(path, &admin, wide))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let narrow = json!({"userId": user, "features": ["auth.users.list"]});
    let res = app.send(in_branch(put_json(path, &admin, narrow))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let narrowing = operation(&res);

    let res = app
        .send(all(post_json(
            "/api/audit_logs/audit-logs/actions/undo",
            &b.token,
            json!({"undoToken": narrowing["undoToken"]}),
        )))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    let acl = app
        .send(get(&format!("{path}?userId={user}"), &admin))
        .await
        .json();
    assert_eq!(acl["features"], json!(["auth.users.list"]), "{acl}");

    // The tenant admin's own undo still works.
    let res = app
        .send(in_branch(post_json(
            "/api/audit_logs/audit-logs/actions/undo",
            &admin,
            json!({"undoToken": narrowing["undoToken"]}),
        )))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}

/// The finding: under `__all__` a restricted admin listed every
/// organization's action-log entries, with other organizations' snapshots
/// and undo tokens, and could undo them.
#[actix_web::test]
async fn under_all_the_action_log_shows_only_the_callers_organizations() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let b = branch_admin(&app, &acme).await;
    let admin = token_for(&app.db, acme.admin).await;
    // The tenant admin's entry at HQ (its home organization).
    let (_, hq_entry) = create_org(
        &app,
        &admin,
        json!({"name": "Secret Lab", "parentId": acme.organization_id}),
    )
    .await;
    // The branch admin's own entries: one in the branch, one under `__all__`.
    let (_, own) = create_org(
        &app,
        &b.token,
        json!({"name": "Team", "parentId": b.branch}),
    )
    .await;
    let res = app
        .send(all(post_json(
            "/api/directory/organizations",
            &b.token,
            json!({"name": "Squad", "parentId": b.branch}),
        )))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let own_all = operation(&res);

    for path in [
        "/api/audit_logs/audit-logs/actions",
        "/api/audit_logs/audit-logs/actions?pageSize=100&sortDir=asc",
    ] {
        let res = app.send(all(get(path, &b.token))).await;
        assert_eq!(res.status, 200, "{}", res.text());
        let text = res.text();
        assert!(!text.contains("Secret Lab"), "{path}: {text}");
        let ids: Vec<Value> = res.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].clone())
            .collect();
        assert!(ids.contains(&own["id"]), "{path}: {text}");
        assert!(ids.contains(&own_all["id"]), "{path}: {text}");
        assert!(!ids.contains(&hq_entry["id"]), "{path}: {text}");
    }
    // Naming HQ explicitly does not widen it either.
    let res = app
        .send(all(get(
            &format!(
                "/api/audit_logs/audit-logs/actions?organizationId={}",
                acme.organization_id
            ),
            &b.token,
        )))
        .await;
    assert!(!res.text().contains("Secret Lab"), "{}", res.text());
    // The export follows the list.
    let res = app
        .send(all(get(
            "/api/audit_logs/audit-logs/actions/export",
            &b.token,
        )))
        .await;
    assert_eq!(res.status, 200);
    assert!(!res.text().contains("Secret Lab"), "{}", res.text());
    // And the entry cannot be undone from there.
    let res = app
        .send(all(post_json(
            "/api/audit_logs/audit-logs/actions/undo",
            &b.token,
            json!({"undoToken": hq_entry["undoToken"]}),
        )))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
}
