//! Feature checks, the feature catalog, ACL caching and locale endpoints.

use actix_web::test::TestRequest;
use serde_json::json;
use stoa_auth::testing::{set_user_acl, token_for, user_with_features};

use super::support::*;

#[actix_web::test]
async fn feature_check_applies_wildcards_and_super_admin() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let wanted = json!({"features": ["auth.users.list", "directory.tenants.view"]});

    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json("/api/auth/feature-check", &admin, wanted.clone()))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(
        res.json(),
        json!({"ok": false, "granted": ["auth.users.list"], "userId": acme.admin})
    );

    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(post_json("/api/auth/feature-check", &root, wanted.clone()))
        .await;
    assert_eq!(res.json()["ok"], true);
    assert_eq!(res.json()["granted"], wanted["features"]);

    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(post_json(
            "/api/auth/feature-check",
            &employee,
            wanted.clone(),
        ))
        .await;
    assert_eq!(res.json()["granted"], json!([]));

    let dir =
        user_with_features(&app.db, &acme, "dir@acme.com", &["directory.*"], None, None).await;
    let dir = token_for(&app.db, dir).await;
    let res = app
        .send(post_json(
            "/api/auth/feature-check",
            &dir,
            json!({"features": ["directory.tenants.manage", "directory", "directoryx.view"]}),
        ))
        .await;
    assert_eq!(
        res.json()["granted"],
        json!(["directory.tenants.manage", "directory"])
    );

    let res = app
        .send(post_json(
            "/api/auth/feature-check",
            &dir,
            json!({"features": []}),
        ))
        .await;
    assert_eq!(
        res.json(),
        json!({"ok": true, "granted": [], "userId": res.json()["userId"]})
    );
}

#[actix_web::test]
async fn feature_check_rejects_bad_requests() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let token = token_for(&app.db, acme.admin).await;
    let many: Vec<String> = (0..51).map(|i| format!("a.b{i}")).collect();
    for body in [
        json!({}),
        json!({"features": "auth.users.list"}),
        json!({"features": [1, 2]}),
        json!({"features": many}),
        json!({"features": ["x".repeat(129)]}),
        json!({"features": [""]}),
    ] {
        let res = app
            .send(post_json("/api/auth/feature-check", &token, body.clone()))
            .await;
        assert_eq!(res.status, 400, "{body}");
        assert_eq!(res.json(), json!({"ok": false, "error": "Invalid request"}));
    }
    let res = app
        .send(
            TestRequest::post()
                .uri("/api/auth/feature-check")
                .set_json(json!({"features": []})),
        )
        .await;
    assert_eq!(res.status, 401);
}

#[actix_web::test]
async fn feature_catalog_needs_acl_manage() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app.send(get("/api/auth/features", &admin)).await;
    assert_eq!(res.status, 200);
    let body = res.json();
    let ids: Vec<&str> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"auth.acl.manage") && ids.contains(&"directory.tenants.view"));
    let mut sorted = body["items"].as_array().unwrap().clone();
    sorted.sort_by_key(|f| {
        (
            f["module"].as_str().unwrap().to_string(),
            f["id"].as_str().unwrap().to_string(),
        )
    });
    assert_eq!(&sorted, body["items"].as_array().unwrap());
    assert!(
        body["modules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "auth")
    );
    assert_eq!(body["items"][0].as_object().unwrap().len(), 3);

    let employee = token_for(&app.db, acme.employee).await;
    let res = app.send(get("/api/auth/features", &employee)).await;
    assert_eq!(res.status, 403);
    assert_eq!(
        res.json(),
        json!({"error": "Forbidden", "requiredFeatures": ["auth.acl.manage"]})
    );
}

#[actix_web::test]
async fn acl_changes_take_effect_on_the_next_request() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let employee = token_for(&app.db, acme.employee).await;
    let check = json!({"features": ["auth.acl.manage"]});
    let res = app
        .send(post_json(
            "/api/auth/feature-check",
            &employee,
            check.clone(),
        ))
        .await;
    assert_eq!(res.json()["ok"], false);
    // A user ACL replaces the role ACLs; the cache notices through the version counter.
    set_user_acl(
        &app.db,
        acme.employee,
        acme.tenant_id,
        &["auth.acl.manage"],
        false,
    )
    .await;
    let res = app
        .send(post_json(
            "/api/auth/feature-check",
            &employee,
            check.clone(),
        ))
        .await;
    assert_eq!(res.json()["ok"], true);
    set_user_acl(&app.db, acme.employee, acme.tenant_id, &[], false).await;
    let res = app
        .send(post_json("/api/auth/feature-check", &employee, check))
        .await;
    assert_eq!(res.json()["ok"], false);
}

#[actix_web::test]
async fn locale_redirects_only_to_local_paths() {
    let app = start().await;
    let res = app.get("/api/auth/locale?locale=pl&redirect=/deals").await;
    assert_eq!(res.status, 302);
    assert_eq!(res.header("location"), Some("/deals"));
    assert_eq!(cookie(&res, "locale").as_deref(), Some("pl"));
    for target in [
        "https://evil.com/",
        "//evil.com",
        "/%5Cevil.com",
        "http:/evil",
        "evil.com",
    ] {
        let res = app
            .get(&format!("/api/auth/locale?locale=en&redirect={target}"))
            .await;
        assert_eq!(res.status, 302);
        assert_eq!(res.header("location"), Some("/"), "{target}");
    }
    let res = app.get("/api/auth/locale?locale=xx").await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json(), json!({"error": "Invalid locale"}));
    assert_eq!(app.get("/api/auth/locale").await.status, 400);

    let res = app
        .post_json("/api/auth/locale", &json!({"locale": "de"}))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!({"ok": true}));
    assert_eq!(cookie(&res, "locale").as_deref(), Some("de"));
    assert_eq!(
        app.post_json("/api/auth/locale", &json!({"locale": "fr"}))
            .await
            .status,
        400
    );
    let res = app
        .send(
            TestRequest::post()
                .uri("/api/auth/locale")
                .insert_header(("content-type", "application/json"))
                .set_payload("{"),
        )
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json(), json!({"error": "Bad request"}));
}

#[actix_web::test]
async fn a_request_with_a_cached_acl_makes_one_database_round_trip() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let token = token_for(&app.db, acme.admin).await;
    let features: Vec<String> = (0..20).map(|i| format!("auth.feature{i}")).collect();
    let check = json!({ "features": features });
    // The first request resolves and caches the ACL.
    let res = app
        .send(post_json("/api/auth/feature-check", &token, check.clone()))
        .await;
    assert_eq!(res.status, 200);
    for _ in 0..3 {
        let before = stoa_core::db::thread_queries();
        let res = app
            .send(post_json("/api/auth/feature-check", &token, check.clone()))
            .await;
        assert_eq!(res.status, 200);
        assert_eq!(res.json()["ok"], true);
        assert_eq!(
            stoa_core::db::thread_queries() - before,
            1,
            "one round trip per cached request"
        );
        let before = stoa_core::db::thread_queries();
        let res = app.send(get("/api/auth/profile", &token)).await;
        assert_eq!(res.status, 200);
        assert_eq!(stoa_core::db::thread_queries() - before, 1, "profile");
    }
}
