//! Every route: 401 anonymous, 403 without its feature, and API keys never
//! acting as device owners.

use actix_web::test::TestRequest;
use serde_json::{Value, json};

use super::support::*;

/// (method, path, body, feature); `{id}` is replaced by a real device id.
fn routes() -> Vec<(&'static str, &'static str, Option<Value>, &'static str)> {
    let reg = json!({"deviceId": "probe", "platform": "ios"});
    vec![
        ("GET", "/api/devices", None, "devices.view"),
        ("POST", "/api/devices", Some(reg.clone()), "devices.manage"),
        (
            "PUT",
            "/api/devices/{id}",
            Some(json!({})),
            "devices.manage",
        ),
        ("DELETE", "/api/devices/{id}", None, "devices.manage"),
        ("GET", "/api/devices/admin/devices", None, "devices.admin"),
        (
            "POST",
            "/api/devices/admin/devices",
            Some(json!({"userId": "{user}", "deviceId": "probe", "platform": "ios"})),
            "devices.admin",
        ),
        (
            "GET",
            "/api/devices/admin/devices/{id}",
            None,
            "devices.admin",
        ),
        (
            "PUT",
            "/api/devices/admin/devices/{id}",
            Some(json!({})),
            "devices.admin",
        ),
        (
            "DELETE",
            "/api/devices/admin/devices/{id}",
            None,
            "devices.admin",
        ),
    ]
}

fn request(method: &str, path: &str, body: Option<&Value>) -> TestRequest {
    let req = match method {
        "GET" => TestRequest::get(),
        "POST" => TestRequest::post(),
        "PUT" => TestRequest::put(),
        _ => TestRequest::delete(),
    }
    .uri(path);
    match body {
        Some(body) => req.set_json(body),
        None => req,
    }
}

fn fill(path: &str, body: Option<&Value>, id: &str, user: &str) -> (String, Option<Value>) {
    let body = body.map(|b| serde_json::from_str(&b.to_string().replace("{user}", user)).unwrap());
    (path.replace("{id}", id), body)
}

#[actix_web::test]
async fn every_route_needs_a_caller_and_its_feature() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (device, _) = register(&app, &employee, json!({"deviceId": "d", "platform": "ios"})).await;
    let (id, user) = (device.to_string(), acme.employee.to_string());

    for (i, (method, path, body, feature)) in routes().into_iter().enumerate() {
        let (path, body) = fill(path, body.as_ref(), &id, &user);
        let res = app.send(request(method, &path, body.as_ref())).await;
        assert_eq!(res.status, 401, "{method} {path} anonymous");
        assert_eq!(res.json()["error"], "Unauthorized");

        // Every device feature except the one the route needs.
        let others: Vec<&str> = ALL.iter().copied().filter(|f| *f != feature).collect();
        let user = user_with_features(
            &app.db,
            &acme,
            &format!("u{i}@acme.com"),
            &others,
            None,
            None,
        )
        .await;
        let token = token_for(&app.db, user).await;
        let res = app
            .send(stoa_testkit::requests::bearer(
                request(method, &path, body.as_ref()),
                &token,
            ))
            .await;
        assert_eq!(
            res.status,
            403,
            "{method} {path} without {feature}: {}",
            res.text()
        );
        assert_eq!(res.json()["requiredFeatures"], json!([feature]));
    }
    // Nothing changed.
    let item = own_device(&app, &employee, device).await.unwrap();
    assert_eq!(item["device_id"], "d");
    assert_eq!(
        app.send(get("/api/devices", &employee)).await.json()["total"],
        1
    );
}

#[actix_web::test]
async fn api_keys_never_act_as_device_owners() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (device, _) = register(&app, &employee, json!({"deviceId": "d", "platform": "ios"})).await;
    let (id, user) = (device.to_string(), acme.employee.to_string());
    let alone = acme.tenant_id.to_string();
    let as_user = format!("{}:{}", acme.tenant_id, acme.employee);

    for key in [&alone, &as_user] {
        for (method, path, body, _) in routes() {
            let (path, body) = fill(path, body.as_ref(), &id, &user);
            let res = app
                .send(with_key(request(method, &path, body.as_ref()), key))
                .await;
            let admin_read = method == "GET" && path.contains("/admin/");
            if admin_read {
                // Reading is not acting: a key holding devices.admin may list.
                assert_eq!(res.status, 200, "{method} {path}: {}", res.text());
            } else {
                assert_eq!(
                    res.status,
                    401,
                    "{method} {path} with key {key}: {}",
                    res.text()
                );
                assert_eq!(res.json(), json!({"error": "Unauthorized"}));
            }
        }
    }
    let item = own_device(&app, &employee, device).await.unwrap();
    assert_eq!(item["device_id"], "d");
    assert_eq!(
        app.send(get("/api/devices", &employee)).await.json()["total"],
        1
    );
}
