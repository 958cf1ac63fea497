//! Route-by-feature table: every route answers 401 anonymous (and with a bad
//! key), 403 without its feature, and gets past the check with only it.

use actix_web::test::TestRequest;
use serde_json::json;
use uuid::Uuid;

use super::support::*;

/// (method, path, body, feature)
fn routes() -> Vec<(
    &'static str,
    String,
    Option<serde_json::Value>,
    &'static str,
)> {
    vec![
        ("GET", KEYS.to_string(), None, "api_keys.view"),
        (
            "POST",
            KEYS.to_string(),
            Some(json!({"name": "k"})),
            "api_keys.create",
        ),
        (
            "DELETE",
            format!("{KEYS}?id={}", Uuid::new_v4()),
            None,
            "api_keys.delete",
        ),
    ]
}

fn request(method: &str, path: &str, body: &Option<serde_json::Value>) -> TestRequest {
    let req = match method {
        "GET" => TestRequest::get(),
        "POST" => TestRequest::post(),
        _ => TestRequest::delete(),
    }
    .uri(path);
    match body {
        Some(body) => req.set_json(body),
        None => req,
    }
}

#[actix_web::test]
async fn every_route_needs_a_caller_and_its_feature() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let all = ["api_keys.view", "api_keys.create", "api_keys.delete"];
    let bad_key = format!("omk_0123abcd.{}", "0".repeat(48));
    for (n, (method, path, body, feature)) in routes().into_iter().enumerate() {
        let res = app.send(request(method, &path, &body)).await;
        assert_unauthorized(&res, &format!("{method} {path} anonymous"));
        let res = app
            .send(request(method, &path, &body).insert_header(("x-api-key", bad_key.as_str())))
            .await;
        assert_unauthorized(&res, &format!("{method} {path} bad key"));

        let others: Vec<&str> = all.iter().copied().filter(|f| f != &feature).collect();
        let without = user_with_features(
            &app.db,
            &acme,
            &format!("without{n}@acme.com"),
            &others,
            None,
            None,
        )
        .await;
        let token = token_for(&app.db, without).await;
        let res = app
            .send(stoa_testkit::requests::bearer(
                request(method, &path, &body),
                &token,
            ))
            .await;
        assert_eq!(res.status, 403, "{method} {path} without {feature}");
        assert_eq!(
            res.json(),
            json!({"error": "Forbidden", "requiredFeatures": [feature]})
        );

        let only = user_with_features(
            &app.db,
            &acme,
            &format!("only{n}@acme.com"),
            &[feature],
            None,
            None,
        )
        .await;
        let token = token_for(&app.db, only).await;
        let res = app
            .send(stoa_testkit::requests::bearer(
                request(method, &path, &body),
                &token,
            ))
            .await;
        assert!(
            [200, 201, 404].contains(&res.status.as_u16()),
            "{method} {path} with only {feature}: {} {}",
            res.status,
            res.text()
        );
    }
    // The default employee role holds none of them; the admin role all.
    let employee = token_for(&app.db, acme.employee).await;
    assert_eq!(app.send(get(KEYS, &employee)).await.status, 403);
    let admin = token_for(&app.db, acme.admin).await;
    assert_eq!(
        granted(&app, &admin, &all).await,
        all,
        "admin gets api_keys.* by default"
    );
}

#[actix_web::test]
async fn a_key_without_roles_may_do_nothing() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let secret = key_with_roles(&app, &admin, &[]).await;
    for (method, path, body, _) in routes() {
        let res = app
            .send(request(method, &path, &body).insert_header(("x-api-key", secret.as_str())))
            .await;
        assert_eq!(res.status, 403, "{method} {path}");
    }
}

#[test]
fn the_registry_declares_the_features_defaults_and_page() {
    let registry = super::support::registry();
    for id in ["api_keys.view", "api_keys.create", "api_keys.delete"] {
        assert!(registry.get(id).is_some(), "{id}");
    }
    assert!(registry.role_defaults("admin").contains(&"api_keys.*"));
    assert!(!registry.role_defaults("employee").contains(&"api_keys.*"));
    let page = registry
        .nav()
        .iter()
        .find(|n| n.id == "api_keys.keys")
        .expect("nav entry");
    assert_eq!(page.features, ["api_keys.view"]);
}
