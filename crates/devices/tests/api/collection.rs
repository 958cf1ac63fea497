//! The collection forms Open Mercato clients use: `PUT /devices {id, ...}`,
//! `DELETE /devices?id=` and the same under `/devices/admin/devices`, with
//! the behaviour of the `/{id}` forms (same checks, same undo tokens).

use serde_json::json;
use stoa_testkit::requests::delete_with_body;

use super::support::*;

#[actix_web::test]
async fn own_devices_update_and_deactivate_at_the_collection_path() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "osVersion": "17", "locale": "en"}),
    )
    .await;

    let res = app
        .send(put_json(
            "/api/devices",
            &employee,
            json!({"id": id, "osVersion": "18", "locale": null}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "id": id}));
    assert_eq!(operation(&res)["commandId"], "devices.user_devices.update");
    let item = own_device(&app, &employee, id).await.unwrap();
    assert_eq!(
        (item["os_version"].clone(), item["locale"].clone()),
        (json!("18"), json!(null))
    );

    let res = app
        .send(delete(&format!("/api/devices?id={id}"), &employee))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true}));
    assert_eq!(
        operation(&res)["commandId"],
        "devices.user_devices.deactivate"
    );
    assert!(own_device(&app, &employee, id).await.is_none());

    // The id of a delete may come in the body too.
    let (other, _) = register(
        &app,
        &employee,
        json!({"deviceId": "tablet", "platform": "android"}),
    )
    .await;
    let res = app
        .send(delete_with_body(
            "/api/devices",
            &employee,
            json!({"id": other}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(own_device(&app, &employee, other).await.is_none());
}

#[actix_web::test]
async fn collection_forms_answer_like_the_path_forms() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let admin = token_for(&app.db, acme.admin).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios"}),
    )
    .await;

    for (path, body) in [
        ("/api/devices", json!({"osVersion": "1"})),
        ("/api/devices", json!({"id": "nope", "osVersion": "1"})),
    ] {
        let res = app.send(put_json(path, &employee, body.clone())).await;
        assert_eq!(res.status, 400, "{body}");
        assert_eq!(res.json()["error"], "Invalid device id");
    }
    let res = app.send(delete("/api/devices", &employee)).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Invalid device id");
    // Payload checks are the path form's (unknown fields stay refused).
    let res = app
        .send(put_json(
            "/api/devices",
            &employee,
            json!({"id": id, "bogus": 1}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    // Another user's device: 403, as on /devices/{id}.
    let res = app
        .send(put_json(
            "/api/devices",
            &admin,
            json!({"id": id, "osVersion": "2"}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    let res = app
        .send(delete(&format!("/api/devices?id={id}"), &admin))
        .await;
    assert_eq!(res.status, 403);

    // The admin forms.
    let res = app
        .send(put_json(
            "/api/devices/admin/devices",
            &admin,
            json!({"id": id, "clientAppVersion": "9.9"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(get(&format!("/api/devices/admin/devices/{id}"), &admin))
        .await;
    assert_eq!(res.json()["item"]["client_app_version"], "9.9");
    // An employee lacks devices.admin.
    let res = app
        .send(put_json(
            "/api/devices/admin/devices",
            &employee,
            json!({"id": id}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app
        .send(delete(
            &format!("/api/devices/admin/devices?id={id}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(get(&format!("/api/devices/admin/devices/{id}"), &admin))
        .await;
    assert_eq!(res.status, 404);

    // Undo through the audit log works on what the collection form did.
    let (again, _) = register(
        &app,
        &employee,
        json!({"deviceId": "watch", "platform": "ios"}),
    )
    .await;
    let res = app
        .send(delete(&format!("/api/devices?id={again}"), &employee))
        .await;
    let token = operation(&res)["undoToken"].as_str().unwrap().to_string();
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/undo",
            &employee,
            json!({"undoToken": token}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(own_device(&app, &employee, again).await.is_some());
}
