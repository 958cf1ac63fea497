//! Organization slugs: lower-cased like the reference, refused outside `a-z 0-9 - _`.

use super::support::*;
use serde_json::json;

async fn slug_of<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    id: &str,
) -> serde_json::Value {
    let res = app
        .send(get(
            &format!("/api/directory/organizations?view=manage&ids={id}"),
            token,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["items"][0]["slug"].clone()
}

#[actix_web::test]
async fn upper_case_slugs_are_lower_cased_and_accepted() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &admin,
            json!({"name": "Sales EU", "slug": "Sales-EU_2", "parentId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let id = res.json()["id"].as_str().unwrap().to_string();
    assert_eq!(slug_of(&app, &admin, &id).await, json!("sales-eu_2"));

    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": id, "slug": "EMEA"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(slug_of(&app, &admin, &id).await, json!("emea"));
    // The public lookup finds it by the stored (lower-case) slug.
    let res = app
        .send(
            actix_web::test::TestRequest::get()
                .uri("/api/directory/organizations/lookup?slug=emea"),
        )
        .await;
    assert_eq!(res.json()["organization"]["id"], json!(id));
}

#[actix_web::test]
async fn spaces_and_other_characters_are_still_refused() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    for slug in ["Sales EU", "sales.eu", "ventes-é", "a/b", "", "x!"] {
        let res = app
            .send(post_json(
                "/api/directory/organizations",
                &admin,
                json!({"name": "x", "slug": slug}),
            ))
            .await;
        assert_eq!(res.status, 400, "{slug:?}: {}", res.text());
        let res = app
            .send(put_json(
                "/api/directory/organizations",
                &admin,
                json!({"id": acme.organization_id, "slug": slug}),
            ))
            .await;
        assert_eq!(res.status, 400, "{slug:?}: {}", res.text());
    }
}
