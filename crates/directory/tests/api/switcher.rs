//! `GET /directory/organization-switcher`: the menu tree, the selection, the
//! tenants of super admins, and no stale data after writes.

use serde_json::{Value, json};
use uuid::Uuid;

use super::support::*;

fn node<'a>(items: &'a Value, id: &str) -> Option<&'a Value> {
    items.as_array()?.iter().find_map(|n| {
        if n["id"] == id {
            Some(n)
        } else {
            node(&n["children"], id)
        }
    })
}

async fn create_org<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    body: Value,
) -> String {
    let res = app
        .send(post_json("/api/directory/organizations", token, body))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    res.json()["id"].as_str().unwrap().to_string()
}

#[actix_web::test]
async fn admins_see_the_tree_and_new_organizations_at_once() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let root = acme.organization_id.to_string();

    let res = app
        .send(get("/api/directory/organization-switcher", &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["tenantId"], acme.tenant_id.to_string());
    assert_eq!(body["canManage"], true);
    assert_eq!(body["isSuperAdmin"], false);
    assert!(
        body.get("tenants").is_none(),
        "tenants are for super admins"
    );
    let top = node(&body["items"], &root).unwrap();
    assert_eq!(
        (top["depth"].clone(), top["selectable"].clone()),
        (json!(0), json!(true))
    );

    // Created a moment ago: listed on the next call, at the right depth.
    let sales = create_org(&app, &admin, json!({"name": "Sales", "parentId": root})).await;
    let emea = create_org(&app, &admin, json!({"name": "EMEA", "parentId": sales})).await;
    let res = app
        .send(get("/api/directory/organization-switcher", &admin))
        .await;
    let items = &res.json()["items"];
    let sales_node = node(items, &sales).unwrap();
    assert_eq!(sales_node["depth"], 1);
    assert_eq!(sales_node["name"], "Sales");
    assert_eq!(node(&sales_node["children"], &emea).unwrap()["depth"], 2);

    // The selection (header or cookie) is reported when it is selectable.
    let res = app
        .send(
            get("/api/directory/organization-switcher", &admin)
                .insert_header(("x-om-selected-org", sales.clone())),
        )
        .await;
    assert_eq!(res.json()["selectedId"], json!(sales));
    let res = app
        .send(
            get("/api/directory/organization-switcher", &admin)
                .insert_header(("x-om-selected-org", "__all__")),
        )
        .await;
    assert_eq!(res.json()["selectedId"], json!(null));
}

#[actix_web::test]
async fn restricted_users_see_ancestors_as_not_selectable() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let root = acme.organization_id.to_string();
    let sales = create_org(&app, &admin, json!({"name": "Sales", "parentId": root})).await;
    let emea = create_org(&app, &admin, json!({"name": "EMEA", "parentId": sales})).await;
    let us = create_org(&app, &admin, json!({"name": "US", "parentId": root})).await;
    let sales_id: Uuid = sales.parse().unwrap();
    let user = user_with_features(
        &app.db,
        &acme,
        "seller@acme.com",
        &["directory.organizations.view"],
        Some(vec![sales_id]),
        Some(sales_id),
    )
    .await;
    let token = token_for(&app.db, user).await;
    let res = app
        .send(get("/api/directory/organization-switcher", &token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["canManage"], false);
    assert_eq!(body["canViewAllOrganizations"], false);
    assert_eq!(body["selectedId"], json!(sales), "home organization");
    assert_eq!(node(&body["items"], &root).unwrap()["selectable"], false);
    assert_eq!(node(&body["items"], &sales).unwrap()["selectable"], true);
    assert_eq!(node(&body["items"], &emea).unwrap()["selectable"], true);
    assert!(
        node(&body["items"], &us).is_none(),
        "outside the allowed subtree"
    );
}

#[actix_web::test]
async fn super_admins_get_every_tenant_including_new_ones() {
    let app = start().await;
    let (acme, globex) = two_tenants(&app.db).await;
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(post_json(
            "/api/directory/tenants",
            &root,
            json!({"name": "Initech"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let initech = res.json()["id"].as_str().unwrap().to_string();

    let res = app
        .send(get("/api/directory/organization-switcher", &root))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["isSuperAdmin"], true);
    assert_eq!(body["canViewAllOrganizations"], true);
    let tenants: Vec<String> = body["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    for id in [
        acme.tenant_id.to_string(),
        globex.tenant_id.to_string(),
        initech,
    ] {
        assert!(tenants.contains(&id), "{id} missing from {tenants:?}");
    }
    assert!(body["tenants"][0]["isActive"].is_boolean());
    // The organizations shown are the selected tenant's only.
    assert!(node(&body["items"], &acme.organization_id.to_string()).is_some());
    assert!(node(&body["items"], &globex.organization_id.to_string()).is_none());

    assert_eq!(
        app.send(actix_web::test::TestRequest::get().uri("/api/directory/organization-switcher"))
            .await
            .status,
        401
    );
}
