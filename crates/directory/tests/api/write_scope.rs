//! Writes are checked against the caller's allowed organizations, never the
//! selection: selecting an organization narrows what lists show. A tenant
//! admin at home in one branch could create an organization at the root but
//! then got 404 editing it; a restricted admin still cannot reach outside
//! its organizations whatever it selects.

use serde_json::json;
use uuid::Uuid;

use super::support::*;

const ORGS: &str = "/api/directory/organizations";

async fn name_of(db: &stoa_core::db::Db, id: Uuid) -> String {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use stoa_directory::schema::organizations;
    let mut conn = db.conn().await.unwrap();
    organizations::table
        .find(id)
        .select(organizations::name)
        .first(&mut *conn)
        .await
        .unwrap()
}

#[actix_web::test]
async fn an_admin_edits_what_it_created_wherever_its_home_is() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            ORGS,
            &admin,
            json!({"name": "Branch", "parentId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let branch: Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();
    let manage = [
        "directory.organizations.view",
        "directory.organizations.manage",
    ];
    // Unrestricted, at home in the branch (its default selection).
    let lead =
        user_with_features(&app.db, &acme, "lead@acme.com", &manage, None, Some(branch)).await;
    let lead = token_for(&app.db, lead).await;

    let res = app
        .send(post_json(ORGS, &lead, json!({"name": "New HQ"})))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let created: Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();
    // Before the fix: 404, the selection (the branch) did not show it.
    let res = app
        .send(put_json(ORGS, &lead, json!({"id": created, "name": "HQ"})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(name_of(&app.db, created).await, "HQ");
    let res = app
        .send(put_json(
            ORGS,
            &lead,
            json!({"id": acme.organization_id, "name": "Acme Group"}),
        ))
        .await;
    assert_eq!(
        res.status,
        200,
        "the tenant's root is in its scope too: {}",
        res.text()
    );

    // A restricted admin of the branch, selecting it or anything else,
    // still reaches only the branch.
    let restricted = user_with_features(
        &app.db,
        &acme,
        "branch-admin@acme.com",
        &manage,
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let restricted = token_for(&app.db, restricted).await;
    for target in [created, acme.organization_id] {
        let res = app
            .send(put_json(
                ORGS,
                &restricted,
                json!({"id": target, "name": "Pwned"}),
            ))
            .await;
        assert_eq!(res.status, 404, "{}", res.text());
        let res = app
            .send(delete(&format!("{ORGS}?id={target}"), &restricted))
            .await;
        assert_eq!(res.status, 404, "{}", res.text());
    }
    assert_eq!(name_of(&app.db, created).await, "HQ");
    assert_eq!(name_of(&app.db, acme.organization_id).await, "Acme Group");
    let res = app
        .send(put_json(
            ORGS,
            &restricted,
            json!({"id": branch, "name": "Branch East"}),
        ))
        .await;
    assert_eq!(res.status, 200, "inside its organizations: {}", res.text());

    // The creator deletes what it created.
    let res = app
        .send(delete(&format!("{ORGS}?id={created}"), &lead))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}
