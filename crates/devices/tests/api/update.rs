//! `PUT /devices/{id}` and `DELETE /devices/{id}`: tri-state updates, push
//! tokens, ownership, bad ids.

use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn updates_are_tri_state_and_push_tokens_can_be_cleared() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "clientAppVersion": "1.0", "osVersion": "17",
               "locale": "en", "pushToken": "first-token-abcdefgh", "pushProvider": "apns"}),
    )
    .await;
    let before = own_device(&app, &employee, id).await.unwrap();

    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({"osVersion": "18"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "id": id}));
    assert_eq!(operation(&res)["commandId"], "devices.user_devices.update");
    let item = own_device(&app, &employee, id).await.unwrap();
    assert_eq!(item["os_version"], "18");
    assert_eq!(item["client_app_version"], "1.0", "absent keeps");
    assert_eq!(item["locale"], "en");
    assert_eq!(
        item["push_token_updated_at"],
        before["push_token_updated_at"]
    );
    assert!(ts(&item["last_seen_at"]) >= ts(&before["last_seen_at"]));

    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({"clientAppVersion": null, "locale": "pl"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let item = own_device(&app, &employee, id).await.unwrap();
    assert_eq!(item["client_app_version"], json!(null), "null clears");
    assert_eq!(item["locale"], "pl");

    // The OS revoked push permission: the token goes, the time is stamped.
    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({"pushToken": null}),
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(
        stored(&app.db, id).await,
        (None, Some("apns".into()), false)
    );
    let item = own_device(&app, &employee, id).await.unwrap();
    assert!(ts(&item["push_token_updated_at"]) > ts(&before["push_token_updated_at"]));

    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({"pushToken": "second-token-12345678", "pushProvider": "fcm"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(
        stored(&app.db, id).await,
        (
            Some("second-token-12345678".into()),
            Some("fcm".into()),
            false
        )
    );
    assert!(!res.text().contains("second-token"));

    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({"lastSeenAt": "2020-01-02T03:04:05Z"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let item = own_device(&app, &employee, id).await.unwrap();
    assert_eq!(item["last_seen_at"], "2020-01-02T03:04:05.000Z");
    // An empty update is a "seen now".
    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let item = own_device(&app, &employee, id).await.unwrap();
    assert!(ts(&item["last_seen_at"]).year() > 2021);

    // Bad bodies change nothing.
    for (body, field) in [
        (json!({"lastSeenAt": null}), "lastSeenAt"),
        (json!({"lastSeenAt": "yesterday"}), "lastSeenAt"),
        (json!({"platform": "web"}), "platform"),
        (json!({"deviceId": "other"}), "deviceId"),
        (json!({"locale": "e"}), "locale"),
        (json!({"pushToken": ""}), "pushToken"),
        (json!({"osVersion": 17}), "osVersion"),
    ] {
        let res = app
            .send(put_json(
                &format!("/api/devices/{id}"),
                &employee,
                body.clone(),
            ))
            .await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        assert_eq!(res.json()["error"], "Invalid device payload");
        assert!(res.json()["details"].to_string().contains(field));
    }
    let after = own_device(&app, &employee, id).await.unwrap();
    assert_eq!(after, item);
}

#[actix_web::test]
async fn bad_and_unknown_ids() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    for path in ["/api/devices/not-a-uuid", "/api/devices/123"] {
        let res = app.send(put_json(path, &employee, json!({}))).await;
        assert_eq!(res.status, 400);
        assert_eq!(res.json()["error"], "Invalid device id");
        assert_eq!(
            res.json()["details"]["fieldErrors"]["id"],
            json!(["Invalid uuid"])
        );
        let res = app.send(delete(path, &employee)).await;
        assert_eq!(res.status, 400);
        assert_eq!(res.json()["error"], "Invalid device id");
    }
    let unknown = uuid::Uuid::new_v4();
    let res = app
        .send(put_json(
            &format!("/api/devices/{unknown}"),
            &employee,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), json!({"error": "Device not found"}));
    let res = app
        .send(delete(&format!("/api/devices/{unknown}"), &employee))
        .await;
    assert_eq!(res.status, 404);

    // A deactivated device is gone for updates and deletes.
    let (id, _) = register(&app, &employee, json!({"deviceId": "d", "platform": "web"})).await;
    assert_eq!(
        app.send(delete(&format!("/api/devices/{id}"), &employee))
            .await
            .status,
        200
    );
    assert!(stored(&app.db, id).await.2);
    let res = app
        .send(delete(&format!("/api/devices/{id}"), &employee))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 404);
}

#[actix_web::test]
async fn only_the_owner_changes_a_device() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let colleague = user_with_features(
        &app.db,
        &acme,
        "colleague@acme.com",
        &["devices.view", "devices.manage"],
        None,
        None,
    )
    .await;
    let colleague = token_for(&app.db, colleague).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "osVersion": "17"}),
    )
    .await;
    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &colleague,
            json!({"osVersion": "1"}),
        ))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json(), json!({"error": "Access denied"}));
    let res = app
        .send(delete(&format!("/api/devices/{id}"), &colleague))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json(), json!({"error": "Access denied"}));
    assert!(own_device(&app, &colleague, id).await.is_none());
    let item = own_device(&app, &employee, id).await.unwrap();
    assert_eq!(item["os_version"], "17");
    assert!(!stored(&app.db, id).await.2);
    // The same device id registered by the colleague is the colleague's own device.
    let (theirs, _) = register(
        &app,
        &colleague,
        json!({"deviceId": "phone", "platform": "ios"}),
    )
    .await;
    assert_ne!(theirs, id);
}
