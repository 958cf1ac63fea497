use serde_json::{Value, json};
use uuid::Uuid;

use super::support::*;

async fn create<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    body: Value,
) -> Uuid {
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            token,
            body.clone(),
        ))
        .await;
    assert_eq!(res.status, 201, "{body}: {}", res.text());
    res.json()["id"].as_str().unwrap().parse().unwrap()
}

#[actix_web::test]
async fn organizations_form_a_tree_with_three_views() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let root = acme.organization_id;
    let sales = create(&app, &admin, json!({"name": "Sales", "parentId": root})).await;
    let emea = create(&app, &admin, json!({"name": "EMEA", "parentId": sales})).await;
    let ops = create(
        &app,
        &admin,
        json!({"name": "Ops", "parentId": root, "isActive": false}),
    )
    .await;

    let res = app
        .send(get(
            "/api/directory/organizations?tenantId=all&view=options",
            &admin,
        ))
        .await;
    assert_eq!(res.status, 400, "tenantId=all is for super admins");

    let res = app.send(get("/api/directory/organizations", &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let names: Vec<String> = res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, vec!["Acme Corp", "EMEA", "Ops", "Sales"]);
    let options = res.json();
    let emea_opt = options["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "EMEA")
        .unwrap()
        .clone();
    assert_eq!(emea_opt["depth"], 2);
    assert_eq!(emea_opt["treePath"], format!("{root}/{sales}/{emea}"));
    assert_eq!(emea_opt["parentId"], sales.to_string());

    let res = app
        .send(get("/api/directory/organizations?view=tree", &admin))
        .await;
    let tree = res.json();
    assert_eq!(tree["items"].as_array().unwrap().len(), 1);
    let top = &tree["items"][0];
    assert_eq!(top["childIds"], json!([ops, sales]));
    assert_eq!(top["descendantIds"].as_array().unwrap().len(), 3);
    assert_eq!(
        top["children"][1]["children"][0]["pathLabel"],
        "Acme Corp / Sales / EMEA"
    );

    let res = app
        .send(get(
            "/api/directory/organizations?view=manage&status=active&search=emea",
            &admin,
        ))
        .await;
    let manage = res.json();
    assert_eq!(manage["total"], 1);
    let item = &manage["items"][0];
    assert_eq!(item["parentName"], "Sales");
    assert_eq!(item["rootId"], root.to_string());
    assert_eq!(item["ancestorIds"], json!([root, sales]));
    assert_eq!(item["slug"], "emea");
    let res = app
        .send(get(
            "/api/directory/organizations?view=manage&status=inactive",
            &admin,
        ))
        .await;
    assert_eq!(res.json()["items"][0]["id"], ops.to_string());
    let res = app
        .send(get(
            "/api/directory/organizations?view=manage&pageSize=2&page=2",
            &admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 4);
    assert_eq!(res.json()["items"].as_array().unwrap().len(), 2);
    assert_eq!(res.json()["totalPages"], 2);
    let res = app
        .send(get(
            &format!("/api/directory/organizations?ids={sales},{ops}"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["items"].as_array().unwrap().len(), 2);
}

#[actix_web::test]
async fn slugs_default_to_the_name_and_collisions_get_a_suffix() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let a = create(&app, &admin, json!({"name": "Field Team"})).await;
    let b = create(&app, &admin, json!({"name": "Field  Team!"})).await;
    let c = create(&app, &admin, json!({"name": "Other", "slug": "field-team"})).await;
    let res = app
        .send(get("/api/directory/organizations?view=manage", &admin))
        .await;
    let slug_of = |id: Uuid| {
        res.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == id.to_string())
            .unwrap()["slug"]
            .clone()
    };
    assert_eq!(
        (slug_of(a), slug_of(b), slug_of(c)),
        (
            json!("field-team"),
            json!("field-team-1"),
            json!("field-team-2")
        )
    );
}

#[actix_web::test]
async fn updates_keep_omitted_fields_and_refuse_cycles() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let root = acme.organization_id;
    let sales = create(&app, &admin, json!({"name": "Sales", "parentId": root})).await;
    let emea = create(&app, &admin, json!({"name": "EMEA", "parentId": sales})).await;

    // Renaming keeps the parent (the reference would make it a root).
    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": sales, "name": "Sales & Marketing"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(get(
            &format!("/api/directory/organizations?view=manage&ids={sales}"),
            &admin,
        ))
        .await;
    let item = res.json()["items"][0].clone();
    assert_eq!(item["parentId"], root.to_string());
    assert_eq!(item["childIds"], json!([emea]));
    assert_eq!(item["name"], "Sales & Marketing");

    for (body, error) in [
        (
            json!({"id": sales, "parentId": sales}),
            "An organization cannot be its own parent or be moved under its own descendant",
        ),
        (
            json!({"id": sales, "parentId": emea}),
            "An organization cannot be its own parent or be moved under its own descendant",
        ),
        (
            json!({"id": sales, "parentId": Uuid::new_v4()}),
            "Parent not found",
        ),
        (
            json!({"id": emea, "childIds": [sales]}),
            "Invalid child assignment",
        ),
        (
            json!({"id": sales, "childIds": [sales]}),
            "Invalid child assignment",
        ),
        (
            json!({"id": sales, "slug": "Bad Slug"}),
            "slug: may contain only a-z, 0-9, '-' and '_' (at most 150)",
        ),
        (
            json!({"id": sales, "logoUrl": "javascript:alert(1)"}),
            "logoUrl: must be an http(s) URL or an /api/attachments/ path",
        ),
    ] {
        let res = app
            .send(put_json(
                "/api/directory/organizations",
                &admin,
                body.clone(),
            ))
            .await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        assert_eq!(res.json()["error"], error, "{body}");
    }
    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": Uuid::new_v4(), "name": "x"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), json!({"error": "Not found"}));

    // Moving a subtree updates every descendant's path.
    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": sales, "parentId": null}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(get(
            &format!("/api/directory/organizations?view=manage&ids={emea}"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["items"][0]["ancestorIds"], json!([sales]));
    assert_eq!(res.json()["items"][0]["depth"], 1);
}

#[actix_web::test]
async fn delete_reparents_children_and_create_validates() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let root = acme.organization_id;
    let sales = create(&app, &admin, json!({"name": "Sales", "parentId": root})).await;
    let emea = create(&app, &admin, json!({"name": "EMEA", "parentId": sales})).await;
    let res = app
        .send(delete(
            &format!("/api/directory/organizations?id={sales}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(get(
            &format!("/api/directory/organizations?view=manage&ids={emea}"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["items"][0]["parentId"], root.to_string());
    let res = app
        .send(delete(
            &format!("/api/directory/organizations?id={sales}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 404);

    for body in [
        json!({"name": ""}),
        json!({"name": "x", "parentId": "nope"}),
        json!({"name": "x", "slug": "UP PER"}),
        json!({"name": "x", "logoUrl": "ftp://x"}),
        json!({"name": "x", "cf_bogus": true}),
    ] {
        let res = app
            .send(post_json(
                "/api/directory/organizations",
                &admin,
                body.clone(),
            ))
            .await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
    }
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &admin,
            json!({"name": "x", "parentId": Uuid::new_v4()}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json(), json!({"error": "Parent not found"}));
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &admin,
            json!({"name": "x", "childIds": [Uuid::new_v4()]}),
        ))
        .await;
    assert_eq!(res.json(), json!({"error": "Invalid child assignment"}));
}

#[actix_web::test]
async fn organizations_need_features() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    assert_eq!(app.get("/api/directory/organizations").await.status, 401);
    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(get("/api/directory/organizations", &employee))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(
        res.json(),
        json!({"error": "Forbidden", "requiredFeatures": ["directory.organizations.view"]})
    );
    let viewer = user_with_features(
        &app.db,
        &acme,
        "v@acme.com",
        &["directory.organizations.view"],
        None,
        None,
    )
    .await;
    let viewer = token_for(&app.db, viewer).await;
    assert_eq!(
        app.send(get("/api/directory/organizations", &viewer))
            .await
            .status,
        200
    );
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &viewer,
            json!({"name": "x"}),
        ))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(
        res.json()["requiredFeatures"],
        json!(["directory.organizations.manage"])
    );
}
