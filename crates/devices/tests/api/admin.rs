//! `/devices/admin/devices`: across the users of the own tenant only, inside
//! the caller's organizations; tenant isolation of every route.

use serde_json::json;
use uuid::Uuid;

use super::support::*;

#[actix_web::test]
async fn admins_work_across_the_users_of_their_tenant() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let admin = token_for(&app.db, acme.admin).await;
    let (phone, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "locale": "en", "pushToken": "secret-token-00000001"}),
    )
    .await;
    register(
        &app,
        &admin,
        json!({"deviceId": "laptop", "platform": "web"}),
    )
    .await;

    let res = app.send(get("/api/devices/admin/devices", &admin)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["total"], 2);
    let res = app
        .send(get(
            &format!(
                "/api/devices/admin/devices?userId={}&platform=ios",
                acme.employee
            ),
            &admin,
        ))
        .await
        .json();
    assert_eq!(res["total"], 1);
    assert_eq!(res["items"][0]["id"], phone.to_string());

    let res = app
        .send(get(&format!("/api/devices/admin/devices/{phone}"), &admin))
        .await;
    assert_eq!(res.status, 200);
    let item = &res.json()["item"];
    assert_eq!(item["user_id"], acme.employee.to_string());
    assert_eq!(item["device_id"], "phone");
    assert!(!res.text().contains("secret-token"));

    let res = app
        .send(put_json(
            &format!("/api/devices/admin/devices/{phone}"),
            &admin,
            json!({"osVersion": "18", "locale": null}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "id": phone}));
    assert!(res.header("x-om-operation").is_some());
    let mine = own_device(&app, &employee, phone).await.unwrap();
    assert_eq!(
        (&mine["os_version"], &mine["locale"]),
        (&json!("18"), &json!(null))
    );

    // Registering for a user: the device is the user's, in the user's organization.
    let res = app
        .send(post_json(
            "/api/devices/admin/devices",
            &admin,
            json!({"userId": acme.employee, "deviceId": "watch", "platform": "android"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.json()["revived"], false);
    assert_eq!(
        operation(&res)["commandId"],
        "devices.user_devices.register"
    );
    let watch: Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();
    let item = own_device(&app, &employee, watch).await.unwrap();
    assert_eq!(item["user_id"], acme.employee.to_string());
    assert_eq!(item["organization_id"], acme.organization_id.to_string());

    let res = app
        .send(delete(
            &format!("/api/devices/admin/devices/{phone}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!({"ok": true}));
    assert!(own_device(&app, &employee, phone).await.is_none());
    let res = app
        .send(get(&format!("/api/devices/admin/devices/{phone}"), &admin))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), json!({"error": "Device not found"}));
    // Registering it again for the user revives it.
    let res = app
        .send(post_json(
            "/api/devices/admin/devices",
            &admin,
            json!({"userId": acme.employee, "deviceId": "phone", "platform": "ios"}),
        ))
        .await;
    assert_eq!(
        res.json(),
        json!({"id": phone, "deviceId": "phone", "revived": true})
    );

    // Bad input.
    for (body, status, error) in [
        (
            json!({"userId": Uuid::new_v4(), "deviceId": "x", "platform": "ios"}),
            400,
            "Target user not found in this tenant",
        ),
        (
            json!({"deviceId": "x", "platform": "ios"}),
            400,
            "Invalid device payload",
        ),
        (
            json!({"userId": "nope", "deviceId": "x", "platform": "ios"}),
            400,
            "Invalid device payload",
        ),
        (
            json!({"userId": acme.employee, "deviceId": "x", "platform": "ios", "x": 1}),
            400,
            "Invalid device payload",
        ),
    ] {
        let res = app
            .send(post_json(
                "/api/devices/admin/devices",
                &admin,
                body.clone(),
            ))
            .await;
        assert_eq!(res.status, status, "{body}: {}", res.text());
        assert_eq!(res.json()["error"], error);
    }
    for path in [
        "/api/devices/admin/devices/nope".to_string(),
        format!("/api/devices/admin/devices/{}", Uuid::new_v4()),
    ] {
        let bad = path.ends_with("nope");
        let res = app.send(get(&path, &admin)).await;
        assert_eq!(res.status, if bad { 400 } else { 404 }, "{path}");
        let res = app.send(put_json(&path, &admin, json!({}))).await;
        assert_eq!(res.status, if bad { 400 } else { 404 }, "{path}");
        let res = app.send(delete(&path, &admin)).await;
        assert_eq!(res.status, if bad { 400 } else { 404 }, "{path}");
    }
}

#[actix_web::test]
async fn tenants_never_see_or_touch_each_others_devices() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let acme_employee = token_for(&app.db, acme.employee).await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    let globex_employee = token_for(&app.db, globex.employee).await;
    let (phone, _) = register(
        &app,
        &acme_employee,
        json!({"deviceId": "phone", "platform": "ios", "osVersion": "17"}),
    )
    .await;
    register(
        &app,
        &globex_employee,
        json!({"deviceId": "phone", "platform": "ios"}),
    )
    .await;

    let res = app
        .send(get("/api/devices/admin/devices", &globex_admin))
        .await
        .json();
    assert_eq!(res["total"], 1);
    assert_eq!(res["items"][0]["tenant_id"], globex.tenant_id.to_string());
    let res = app
        .send(get(
            &format!(
                "/api/devices/admin/devices?ids={phone}&userId={}",
                acme.employee
            ),
            &globex_admin,
        ))
        .await
        .json();
    assert_eq!(res["total"], 0);
    let res = app
        .send(get(
            &format!("/api/devices?ids={phone}&userId={}", acme.employee),
            &globex_admin,
        ))
        .await
        .json();
    assert_eq!(res["total"], 0);

    let admin_path = format!("/api/devices/admin/devices/{phone}");
    let own_path = format!("/api/devices/{phone}");
    for res in [
        app.send(get(&admin_path, &globex_admin)).await,
        app.send(put_json(
            &admin_path,
            &globex_admin,
            json!({"osVersion": "x"}),
        ))
        .await,
        app.send(delete(&admin_path, &globex_admin)).await,
        app.send(put_json(
            &own_path,
            &globex_admin,
            json!({"osVersion": "x"}),
        ))
        .await,
        app.send(delete(&own_path, &globex_employee)).await,
    ] {
        assert_eq!(res.status, 404, "{}", res.text());
        assert_eq!(res.json(), json!({"error": "Device not found"}));
    }
    // Nor register a device for a user of another tenant.
    let res = app
        .send(post_json(
            "/api/devices/admin/devices",
            &globex_admin,
            json!({"userId": acme.employee, "deviceId": "intruder", "platform": "web"}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.json(),
        json!({"error": "Target user not found in this tenant"})
    );
    let item = own_device(&app, &acme_employee, phone).await.unwrap();
    assert_eq!(item["os_version"], "17");
    assert_eq!(
        app.send(get("/api/devices", &acme_employee)).await.json()["total"],
        1
    );
}

#[actix_web::test]
async fn admins_are_limited_to_their_organizations() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let sales = child_org(&app.db, &acme, "Sales").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    // A device admin whose home is Sales sees Sales only.
    let sales_admin =
        user_with_features(&app.db, &acme, "lead@acme.com", &ALL, None, Some(sales)).await;
    let sales_token = token_for(&app.db, sales_admin).await;
    let sales_rep =
        user_with_features(&app.db, &acme, "rep@acme.com", &ALL[..2], None, Some(sales)).await;

    let (root_phone, _) =
        register(&app, &employee, json!({"deviceId": "p", "platform": "ios"})).await;
    let res = app
        .send(post_json(
            "/api/devices/admin/devices",
            &admin,
            json!({"userId": sales_rep, "deviceId": "rep-phone", "platform": "ios"}),
        ))
        .await;
    assert_eq!(res.status, 201);
    let rep_phone: Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();

    let res = app
        .send(get("/api/devices/admin/devices", &sales_token))
        .await
        .json();
    assert_eq!(res["total"], 1);
    assert_eq!(res["items"][0]["id"], rep_phone.to_string());
    assert_eq!(res["items"][0]["organization_id"], sales.to_string());
    let res = app
        .send(get("/api/devices/admin/devices", &admin))
        .await
        .json();
    assert_eq!(res["total"], 2, "the root's subtree holds both");

    let outside = format!("/api/devices/admin/devices/{root_phone}");
    for res in [
        app.send(get(&outside, &sales_token)).await,
        app.send(put_json(&outside, &sales_token, json!({}))).await,
        app.send(delete(&outside, &sales_token)).await,
    ] {
        assert_eq!(res.status, 403, "{}", res.text());
        assert_eq!(res.json(), json!({"error": "Access denied"}));
    }
    let res = app
        .send(post_json(
            "/api/devices/admin/devices",
            &sales_token,
            json!({"userId": acme.employee, "deviceId": "x", "platform": "ios"}),
        ))
        .await;
    assert_eq!(
        res.status, 403,
        "the employee's organization is outside Sales"
    );
    assert_eq!(res.json(), json!({"error": "Access denied"}));
    let res = app
        .send(get(
            &format!("/api/devices/admin/devices/{rep_phone}"),
            &sales_token,
        ))
        .await;
    assert_eq!(res.status, 200);
    assert!(!stored(&app.db, root_phone).await.2);
}
