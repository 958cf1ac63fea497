//! `POST /devices`: upsert, revive, defaults, validation, races.

use diesel_async::{AsyncConnection, RunQueryDsl};
use serde_json::json;
use stoa_devices::DevicesError;
use stoa_devices::dto::PushToken;
use stoa_devices::model::Platform;
use stoa_devices::secrets::seal;
use stoa_devices::service::{self, Registration};

use super::support::*;

const TOKEN: &str = "apns-token-0123456789abcdef-XYZ12345";

#[actix_web::test]
async fn registers_refreshes_and_revives() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;

    let res = app
        .send(
            post_json(
                "/api/devices",
                &employee,
                json!({"deviceId": "  phone-1 ", "platform": "ios", "clientAppVersion": "1.0.0",
                       "osVersion": "17.1", "pushToken": TOKEN, "pushProvider": "apns"}),
            )
            .insert_header(("accept-language", "fr-FR, de-AT;q=0.9, en;q=0.5")),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let body = res.json();
    let id = body["id"].as_str().unwrap().to_string();
    assert_eq!(body["deviceId"], "phone-1");
    assert_eq!(body["revived"], false);
    let op = operation(&res);
    assert_eq!(op["commandId"], "devices.user_devices.register");
    assert_eq!(op["resourceKind"], "devices.user_device");
    assert_eq!(op["resourceId"], id.as_str());
    assert!(op["undoToken"].is_string());

    let item = own_device(&app, &employee, id.parse().unwrap())
        .await
        .unwrap();
    assert_eq!(item["tenant_id"], acme.tenant_id.to_string());
    assert_eq!(item["organization_id"], acme.organization_id.to_string());
    assert_eq!(item["user_id"], acme.employee.to_string());
    assert_eq!(item["platform"], "ios");
    assert_eq!(item["client_app_version"], "1.0.0");
    assert_eq!(item["locale"], "de", "best match of Accept-Language");
    assert_eq!(item["push_provider"], "apns");
    assert!(item["push_token_updated_at"].is_string());
    assert!(
        item.get("push_token").is_none(),
        "the token is never returned"
    );
    assert!(!res.text().contains(TOKEN));
    assert_eq!(
        stored(&app.db, id.parse().unwrap()).await,
        (Some(TOKEN.into()), Some("apns".into()), false)
    );

    // Again: the same row is refreshed. Absent fields keep their values, null
    // clears, a register without a token keeps the stored one.
    let first_seen = ts(&item["last_seen_at"]);
    let res = app
        .send(post_json(
            "/api/devices",
            &employee,
            json!({"deviceId": "phone-1", "platform": "android", "osVersion": null, "pushToken": null}),
        ))
        .await;
    assert_eq!(res.status, 201);
    assert_eq!(
        res.json(),
        json!({"id": id, "deviceId": "phone-1", "revived": false})
    );
    let item = own_device(&app, &employee, id.parse().unwrap())
        .await
        .unwrap();
    assert_eq!(item["platform"], "android");
    assert_eq!(item["os_version"], json!(null));
    assert_eq!(item["client_app_version"], "1.0.0");
    assert_eq!(item["locale"], "de");
    assert!(ts(&item["last_seen_at"]) >= first_seen);
    assert_eq!(
        stored(&app.db, id.parse().unwrap()).await,
        (Some(TOKEN.into()), Some("apns".into()), false)
    );

    // Deactivated, then registered again: the same row comes back.
    let res = app
        .send(delete(&format!("/api/devices/{id}"), &employee))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!({"ok": true}));
    assert!(
        own_device(&app, &employee, id.parse().unwrap())
            .await
            .is_none()
    );
    let res = app
        .send(post_json(
            "/api/devices",
            &employee,
            json!({"deviceId": "phone-1", "platform": "android", "pushToken": "fcm-new-token-987654321", "pushProvider": "fcm"}),
        ))
        .await;
    assert_eq!(res.status, 201);
    assert_eq!(
        res.json(),
        json!({"id": id, "deviceId": "phone-1", "revived": true})
    );
    assert_eq!(
        stored(&app.db, id.parse().unwrap()).await,
        (
            Some("fcm-new-token-987654321".into()),
            Some("fcm".into()),
            false
        )
    );

    // Another device id is another device; without Accept-Language no locale.
    let (other, _) = register(
        &app,
        &employee,
        json!({"deviceId": "browser", "platform": "web"}),
    )
    .await;
    assert_ne!(other.to_string(), id);
    let item = own_device(&app, &employee, other).await.unwrap();
    assert_eq!(item["locale"], json!(null));
    assert_eq!(item["push_provider"], json!(null));
    assert_eq!(stored(&app.db, other).await, (None, None, false));
}

#[actix_web::test]
async fn explicit_locale_wins_and_the_selected_organization_is_used() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let sales = child_org(&app.db, &acme, "Sales").await;
    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(
            post_json(
                "/api/devices",
                &employee,
                json!({"deviceId": "tablet", "platform": "ios", "locale": "pt-BR"}),
            )
            .insert_header(("accept-language", "de"))
            .insert_header(("x-om-selected-org", sales.to_string())),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let id = res.json()["id"].as_str().unwrap().parse().unwrap();
    // Listed from the home organization too (its subtree contains Sales).
    let item = own_device(&app, &employee, id).await.unwrap();
    assert_eq!(item["locale"], "pt-BR");
    assert_eq!(item["organization_id"], sales.to_string());
    // The same device id in another organization is another device.
    let (home, _) = register(
        &app,
        &employee,
        json!({"deviceId": "tablet", "platform": "ios"}),
    )
    .await;
    assert_ne!(home, id);
}

#[actix_web::test]
async fn bad_bodies_are_400_and_change_nothing() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let long = |n: usize| "x".repeat(n);
    let cases = [
        (json!({"platform": "ios"}), "deviceId"),
        (json!({"deviceId": "   ", "platform": "ios"}), "deviceId"),
        (
            json!({"deviceId": long(256), "platform": "ios"}),
            "deviceId",
        ),
        (json!({"deviceId": 5, "platform": "ios"}), "deviceId"),
        (json!({"deviceId": "d"}), "platform"),
        (json!({"deviceId": "d", "platform": "windows"}), "platform"),
        (
            json!({"deviceId": "d", "platform": "ios", "clientAppVersion": long(65)}),
            "clientAppVersion",
        ),
        (
            json!({"deviceId": "d", "platform": "ios", "osVersion": long(65)}),
            "osVersion",
        ),
        (
            json!({"deviceId": "d", "platform": "ios", "locale": "x"}),
            "locale",
        ),
        (
            json!({"deviceId": "d", "platform": "ios", "locale": long(36)}),
            "locale",
        ),
        (
            json!({"deviceId": "d", "platform": "ios", "pushToken": ""}),
            "pushToken",
        ),
        (
            json!({"deviceId": "d", "platform": "ios", "pushToken": long(4097)}),
            "pushToken",
        ),
        (
            json!({"deviceId": "d", "platform": "ios", "pushProvider": ""}),
            "pushProvider",
        ),
        (
            json!({"deviceId": "d", "platform": "ios", "pushProvider": long(33)}),
            "pushProvider",
        ),
        (
            json!({"deviceId": "d", "platform": "ios", "userId": acme.admin}),
            "userId",
        ),
        (
            json!({"deviceId": "d", "platform": "ios", "extra": true}),
            "extra",
        ),
        (json!(["d"]), ""),
    ];
    for (body, field) in cases {
        let res = app
            .send(post_json("/api/devices", &employee, body.clone()))
            .await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        let err = res.json();
        assert_eq!(err["error"], "Invalid device payload", "{body}");
        assert!(err["details"].to_string().contains(field), "{body}: {err}");
        assert!(err["issues"].is_array(), "{err}");
    }
    for raw in ["", "{", "not json"] {
        let res = app
            .send(
                actix_web::test::TestRequest::post()
                    .uri("/api/devices")
                    .insert_header(("authorization", format!("Bearer {employee}")))
                    .insert_header(("content-type", "application/json"))
                    .set_payload(raw),
            )
            .await;
        assert_eq!(res.status, 400, "{raw:?}");
        assert_eq!(res.json()["error"], "Invalid device payload");
    }
    // The longest values allowed are fine.
    register(
        &app,
        &employee,
        json!({"deviceId": long(255), "platform": "web", "clientAppVersion": long(64),
               "osVersion": "", "locale": long(35), "pushToken": long(4096), "pushProvider": long(32)}),
    )
    .await;
    let res = app.send(get("/api/devices", &employee)).await;
    assert_eq!(res.json()["total"], 1, "only the valid registration stored");
}

fn registration(acme: &Tenant) -> Registration {
    Registration {
        tenant_id: acme.tenant_id,
        organization_id: Some(acme.organization_id),
        user_id: acme.employee,
        device_id: "raced".into(),
        platform: Platform::Ios,
        client_app_version: None,
        os_version: None,
        locale: None,
        default_locale: None,
        push_token: Some(
            seal(
                &keys(),
                &PushToken::new("t0123456789"),
                acme.tenant_id,
                &stoa_devices::secrets::record_key(acme.employee, "raced"),
            )
            .unwrap(),
        ),
        push_provider: None,
    }
}

/// Two first registrations of one device race: the loser waits on the
/// winner's uncommitted row and answers 409, not 500.
#[actix_web::test]
async fn a_concurrent_duplicate_registration_is_a_conflict() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let mut first = app.db.conn().await.unwrap();
    let mut second = app.db.conn().await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Pid {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        pid: i32,
    }
    let second_pid = diesel::sql_query("SELECT pg_backend_pid() AS pid")
        .get_result::<Pid>(&mut *second)
        .await
        .unwrap()
        .pid;
    diesel::sql_query("BEGIN")
        .execute(&mut *first)
        .await
        .unwrap();
    service::register_now(&mut first, &registration(&acme))
        .await
        .unwrap();
    let loser = async {
        let reg = registration(&acme);
        second
            .transaction::<_, DevicesError, _>(async |conn| service::register_now(conn, &reg).await)
            .await
    };
    let winner = async {
        // Commit only once the loser is blocked on the winner's row.
        #[derive(diesel::QueryableByName)]
        struct Waiting {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        loop {
            let w = diesel::sql_query(format!(
                "SELECT count(*) AS n FROM pg_locks WHERE pid = {second_pid} AND NOT granted"
            ))
            .get_result::<Waiting>(&mut *first)
            .await
            .unwrap();
            if w.n > 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        diesel::sql_query("COMMIT")
            .execute(&mut *first)
            .await
            .unwrap();
    };
    let (lost, ()) = tokio::join!(loser, winner);
    assert!(
        matches!(lost, Err(DevicesError::AlreadyRegistered)),
        "{lost:?}"
    );
    let app_error: stoa_core::AppError = DevicesError::AlreadyRegistered.into();
    assert_eq!(app_error.status().as_u16(), 409);
    assert_eq!(
        app_error.body(),
        json!({"error": "This device is already registered"})
    );
    // Once committed, registering again simply refreshes the device.
    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(post_json(
            "/api/devices",
            &employee,
            json!({"deviceId": "raced", "platform": "ios"}),
        ))
        .await;
    assert_eq!(res.status, 201);
    assert_eq!(res.json()["revived"], false);
    assert_eq!(
        app.send(get("/api/devices", &employee)).await.json()["total"],
        1
    );
}
