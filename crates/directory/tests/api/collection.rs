//! Collection-style deletes with the id in the body (`DELETE
//! /directory/organizations {id}`), as Open Mercato clients send them for
//! roles and users too; `?id=` keeps working.

use serde_json::json;
use stoa_testkit::requests::delete_with_body;

use super::support::*;

#[actix_web::test]
async fn organizations_and_tenants_delete_with_the_id_in_the_body() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &admin,
            json!({"name": "Sales", "parentId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let sales = res.json()["id"].as_str().unwrap().to_string();
    let res = app
        .send(delete_with_body(
            "/api/directory/organizations",
            &admin,
            json!({"id": sales}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(res.header("x-om-operation").is_some());
    // Gone: deleting it again (either form) is 404.
    let res = app
        .send(delete(
            &format!("/api/directory/organizations?id={sales}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 404, "{}", res.text());
    let res = app
        .send(delete("/api/directory/organizations", &admin))
        .await;
    assert_eq!(res.status, 400);

    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(post_json(
            "/api/directory/tenants",
            &root,
            json!({"name": "Initech"}),
        ))
        .await;
    let tenant = res.json()["id"].as_str().unwrap().to_string();
    let res = app
        .send(delete_with_body(
            "/api/directory/tenants",
            &root,
            json!({"id": tenant}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(delete_with_body(
            "/api/directory/tenants",
            &root,
            json!({"id": tenant}),
        ))
        .await;
    assert_eq!(res.status, 404);
}
