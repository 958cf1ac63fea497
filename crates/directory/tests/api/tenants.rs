use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn super_admin_manages_tenants() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let root = token_for(&app.db, acme.superadmin).await;

    let res = app.send(get("/api/directory/tenants", &root)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["total"], 2);
    assert_eq!(
        (
            body["page"].clone(),
            body["pageSize"].clone(),
            body["totalPages"].clone()
        ),
        (json!(1), json!(50), json!(1))
    );
    assert_eq!(body["items"][0]["name"], "Acme Corp");
    for key in ["id", "name", "isActive", "createdAt", "updatedAt"] {
        assert!(body["items"][0].get(key).is_some(), "{key}");
    }

    let res = app
        .send(post_json(
            "/api/directory/tenants",
            &root,
            json!({"name": "Initech", "isActive": false}),
        ))
        .await;
    assert_eq!(res.status, 201);
    let id = res.json()["id"].as_str().unwrap().to_string();
    let res = app
        .send(get(
            "/api/directory/tenants?search=init&isActive=false",
            &root,
        ))
        .await;
    assert_eq!(res.json()["items"][0]["id"], id.as_str());
    assert_eq!(res.json()["total"], 1);

    let res = app
        .send(put_json(
            "/api/directory/tenants",
            &root,
            json!({"id": id, "name": "Initrode"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!({"ok": true}));
    let res = app
        .send(get(&format!("/api/directory/tenants?id={id}"), &root))
        .await;
    assert_eq!(res.json()["items"][0]["name"], "Initrode");
    assert_eq!(
        res.json()["items"][0]["isActive"],
        false,
        "omitted isActive keeps its value"
    );

    let res = app
        .send(get(
            "/api/directory/tenants?sortField=name&sortDir=desc&pageSize=1&page=2",
            &root,
        ))
        .await;
    assert_eq!(res.json()["items"][0]["name"], "Globex");
    assert_eq!(res.json()["totalPages"], 3);

    let res = app
        .send(delete(&format!("/api/directory/tenants?id={id}"), &root))
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(delete(&format!("/api/directory/tenants?id={id}"), &root))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), json!({"error": "Tenant not found"}));
    let res = app
        .send(put_json(
            "/api/directory/tenants",
            &root,
            json!({"id": id, "name": "X"}),
        ))
        .await;
    assert_eq!(res.status, 404);
}

#[actix_web::test]
async fn tenant_endpoints_validate_input() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let root = token_for(&app.db, acme.superadmin).await;
    for (path, body) in [
        ("/api/directory/tenants", json!({"name": ""})),
        ("/api/directory/tenants", json!({"name": "x".repeat(201)})),
        ("/api/directory/tenants", json!({"name": 5})),
        (
            "/api/directory/tenants",
            json!({"name": "ok", "cf_extra": 1}),
        ),
    ] {
        let res = app.send(post_json(path, &root, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
    }
    for query in [
        "pageSize=1000",
        "page=0",
        "sortField=evil",
        "id=not-a-uuid",
        "isActive=maybe",
    ] {
        let res = app
            .send(get(&format!("/api/directory/tenants?{query}"), &root))
            .await;
        assert_eq!(res.status, 400, "{query}");
    }
    let res = app
        .send(delete("/api/directory/tenants?id=nope", &root))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .send(get(
            "/api/directory/tenants?search=%27%3B%20DROP%20TABLE%20tenants%3B--",
            &root,
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["total"], 0);
}

#[actix_web::test]
async fn tenants_need_super_admin_and_a_credential() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    assert_eq!(app.get("/api/directory/tenants").await.status, 401);
    let admin = token_for(&app.db, acme.admin).await;
    let res = app.send(get("/api/directory/tenants", &admin)).await;
    assert_eq!(res.status, 403);
    assert_eq!(
        res.json()["requiredFeatures"],
        json!(["directory.tenants.view"])
    );
    // Even with the feature granted, only a super admin manages tenants.
    let granted =
        user_with_features(&app.db, &acme, "t@acme.com", &["directory.*"], None, None).await;
    let granted = token_for(&app.db, granted).await;
    let res = app
        .send(post_json(
            "/api/directory/tenants",
            &granted,
            json!({"name": "Sneaky"}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app.send(get("/api/directory/tenants", &granted)).await;
    assert_eq!(res.status, 403);
}
