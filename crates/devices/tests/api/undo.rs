//! Undo and redo of the three device commands through the audit-log
//! endpoints, and what the action log and the outbox hold.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_core::db::Db;
use time::OffsetDateTime;
use uuid::Uuid;

use super::support::*;

async fn deleted_at(db: &Db, id: Uuid) -> Option<OffsetDateTime> {
    use stoa_devices::schema::user_devices::dsl as d;
    let mut conn = db.conn().await.unwrap();
    d::user_devices
        .filter(d::id.eq(id))
        .select(d::deleted_at)
        .first(&mut *conn)
        .await
        .unwrap()
}

fn without(mut item: Value, keys: &[&str]) -> Value {
    for key in keys {
        item.as_object_mut().unwrap().remove(*key);
    }
    item
}

#[actix_web::test]
async fn undoing_a_new_registration_deactivates_the_device_and_redo_restores_it() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, op) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios"}),
    )
    .await;
    let res = undo(&app, &employee, &op).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "logId": op["id"]}));
    assert!(own_device(&app, &employee, id).await.is_none());
    assert!(stored(&app.db, id).await.2, "soft-deleted, not gone");
    // The token is spent.
    assert_eq!(undo(&app, &employee, &op).await.status, 400);

    // Redo (admins hold audit_logs.redo_self) brings the same device back.
    let admin = token_for(&app.db, acme.admin).await;
    let (laptop, op) = register(
        &app,
        &admin,
        json!({"deviceId": "laptop", "platform": "web", "osVersion": "14"}),
    )
    .await;
    let before = own_device(&app, &admin, laptop).await.unwrap();
    assert_eq!(undo(&app, &admin, &op).await.status, 200);
    assert!(own_device(&app, &admin, laptop).await.is_none());
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/redo",
            &admin,
            json!({"logId": op["id"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let redone = operation(&res);
    assert_eq!(redone["commandId"], "devices.user_devices.register");
    let after = own_device(&app, &admin, laptop).await.unwrap();
    assert_eq!(without_updated_at(after), without_updated_at(before));
    // And the redo is undoable again.
    assert_eq!(undo(&app, &admin, &redone).await.status, 200);
    assert!(own_device(&app, &admin, laptop).await.is_none());
}

#[actix_web::test]
async fn undoing_a_refresh_restores_the_previous_metadata_but_not_push_credentials() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "clientAppVersion": "1.0", "osVersion": "17",
               "locale": "en", "pushToken": "token-one-11111111", "pushProvider": "apns"}),
    )
    .await;
    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({"lastSeenAt": "2026-03-04T05:06:07.123456Z"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let before = own_device(&app, &employee, id).await.unwrap();

    let (again, op) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "android", "clientAppVersion": "2.0", "osVersion": null,
               "locale": "pl", "pushToken": "token-two-22222222", "pushProvider": "fcm"}),
    )
    .await;
    assert_eq!(again, id);
    let res = undo(&app, &employee, &op).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let after = own_device(&app, &employee, id).await.unwrap();
    let push = ["updated_at", "push_provider", "push_token_updated_at"];
    assert_eq!(without(after.clone(), &push), without(before, &push));
    // Undo restores times as the log keeps them: to the millisecond.
    assert_eq!(after["last_seen_at"], "2026-03-04T05:06:07.123Z");
    // Push credentials are never restored (the log never held the token).
    assert_eq!(
        stored(&app.db, id).await,
        (Some("token-two-22222222".into()), Some("fcm".into()), false)
    );
}

#[actix_web::test]
async fn undoing_a_revival_deactivates_the_device_again() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "osVersion": "17"}),
    )
    .await;
    assert_eq!(
        app.send(delete(&format!("/api/devices/{id}"), &employee))
            .await
            .status,
        200
    );
    let deactivated = deleted_at(&app.db, id).await;
    assert!(deactivated.is_some());
    let res = app
        .send(post_json(
            "/api/devices",
            &employee,
            json!({"deviceId": "phone", "platform": "web", "osVersion": "18"}),
        ))
        .await;
    assert_eq!(res.json()["revived"], true);
    let op = operation(&res);
    assert_eq!(undo(&app, &employee, &op).await.status, 200);
    // The same deactivation, as the log keeps it: to the millisecond.
    assert_eq!(
        deleted_at(&app.db, id).await,
        deactivated.map(stoa_core::serde_util::timestamp::truncate),
        "the same deactivation"
    );
    // Registering once more revives it with the restored metadata as a base.
    let res = app
        .send(post_json(
            "/api/devices",
            &employee,
            json!({"deviceId": "phone", "platform": "ios"}),
        ))
        .await;
    assert_eq!(res.json()["revived"], true);
    let item = own_device(&app, &employee, id).await.unwrap();
    assert_eq!(item["os_version"], "17");
}

#[actix_web::test]
async fn undoing_an_update_restores_the_exact_previous_metadata() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "clientAppVersion": "1.0", "osVersion": "17", "locale": "en"}),
    )
    .await;
    let before = own_device(&app, &employee, id).await.unwrap();
    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({"clientAppVersion": "2.0", "osVersion": null, "locale": "de", "lastSeenAt": "2020-01-01T00:00:00Z"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let op = operation(&res);
    assert_eq!(undo(&app, &employee, &op).await.status, 200);
    let after = own_device(&app, &employee, id).await.unwrap();
    assert_eq!(without_updated_at(after), without_updated_at(before));
}

#[actix_web::test]
async fn undoing_a_deactivation_revives_the_device_unless_it_came_back_meanwhile() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "locale": "ko"}),
    )
    .await;
    let before = own_device(&app, &employee, id).await.unwrap();
    let res = app
        .send(delete(&format!("/api/devices/{id}"), &employee))
        .await;
    let op = operation(&res);
    assert_eq!(op["commandId"], "devices.user_devices.deactivate");
    assert_eq!(undo(&app, &employee, &op).await.status, 200);
    let after = own_device(&app, &employee, id).await.unwrap();
    assert_eq!(without_updated_at(after), without_updated_at(before));

    // A live twin (the same device, registered again some other way) blocks
    // the revival: 409, and nothing changes.
    let res = app
        .send(delete(&format!("/api/devices/{id}"), &employee))
        .await;
    let op = operation(&res);
    {
        use stoa_devices::schema::user_devices::dsl as d;
        let mut conn = app.db.conn().await.unwrap();
        diesel::insert_into(d::user_devices)
            .values((
                d::tenant_id.eq(acme.tenant_id),
                d::organization_id.eq(Some(acme.organization_id)),
                d::user_id.eq(acme.employee),
                d::device_id.eq("phone"),
                d::platform.eq("ios"),
            ))
            .execute(&mut *conn)
            .await
            .unwrap();
    }
    let res = undo(&app, &employee, &op).await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({"error": "This device is already registered"})
    );
    assert!(stored(&app.db, id).await.2);
    assert!(own_device(&app, &employee, id).await.is_none());
}

#[actix_web::test]
async fn the_action_log_and_events_never_hold_the_push_token() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "pushToken": "first-secret-ABCDEFGH12345678"}),
    )
    .await;
    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({"pushToken": "second-secret-zyxwvuts87654321"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(
        app.send(delete(&format!("/api/devices/{id}"), &employee))
            .await
            .status,
        200
    );

    let res = app
        .send(get(
            "/api/audit_logs/audit-logs/actions?resourceKind=devices.user_device&sortDir=asc",
            &employee,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let items = res.json()["items"].as_array().unwrap().clone();
    let commands: Vec<&str> = items
        .iter()
        .map(|i| i["commandId"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands,
        [
            "devices.user_devices.register",
            "devices.user_devices.update",
            "devices.user_devices.deactivate"
        ]
    );
    assert_eq!(
        items[0]["snapshotAfter"]["pushTokenFingerprint"],
        "12345678"
    );
    assert_eq!(
        items[1]["snapshotBefore"]["pushTokenFingerprint"],
        "12345678"
    );
    assert_eq!(
        items[1]["snapshotAfter"]["pushTokenFingerprint"],
        "87654321"
    );
    assert_eq!(
        items[1]["changes"]["pushTokenFingerprint"]["to"],
        "87654321"
    );
    assert_eq!(items[2]["snapshotAfter"]["active"], false);
    assert_eq!(items[0]["parentResourceId"], acme.employee.to_string());
    assert!(!res.text().contains("-secret-"));
    // A short token shows at most half of itself.
    let (short, _) = register(
        &app,
        &employee,
        json!({"deviceId": "watch", "platform": "ios", "pushToken": "abcdef"}),
    )
    .await;
    let res = app
        .send(get(
            &format!("/api/audit_logs/audit-logs/actions?resourceId={short}"),
            &employee,
        ))
        .await;
    assert_eq!(
        res.json()["items"][0]["snapshotAfter"]["pushTokenFingerprint"],
        "def"
    );

    #[derive(QueryableByName)]
    struct Dump {
        #[diesel(sql_type = diesel::sql_types::Text)]
        text: String,
    }
    let mut conn = app.db.conn().await.unwrap();
    for table in ["action_logs", "event_outbox"] {
        let dump = diesel::sql_query(format!(
            "SELECT coalesce(string_agg(row_to_json(t)::text, ' '), '') AS text FROM {table} t"
        ))
        .get_result::<Dump>(&mut *conn)
        .await
        .unwrap();
        assert!(
            dump.text.contains(&id.to_string()),
            "{table} holds the device"
        );
        assert!(
            !dump.text.contains("-secret-"),
            "{table} holds a push token"
        );
    }
    #[derive(QueryableByName)]
    struct Name {
        #[diesel(sql_type = diesel::sql_types::Text)]
        name: String,
    }
    let names: Vec<String> = diesel::sql_query("SELECT name FROM event_outbox ORDER BY id")
        .load::<Name>(&mut *conn)
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.name)
        .collect();
    assert_eq!(
        names,
        [
            "devices.user_device.registered",
            "devices.user_device.updated",
            "devices.user_device.deactivated",
            "devices.user_device.registered"
        ]
    );
}

/// Undo is a write: a caller who lost `devices.manage` cannot undo its own
/// registration (403 from the device's `Tracked::authorize`), and a device
/// admin restricted to another organization cannot reach (tenant-wide) an
/// entry about a device outside it (400, the entry is not available to it).
/// Nothing changes.
#[actix_web::test]
async fn undo_authorizes_the_caller_now() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let user = user_with_features(
        &app.db,
        &acme,
        "field@acme.com",
        &["devices.view", "devices.manage", "audit_logs.undo_self"],
        None,
        None,
    )
    .await;
    let token = token_for(&app.db, user).await;
    let (id, op) = register(
        &app,
        &token,
        json!({"deviceId": "phone", "platform": "ios"}),
    )
    .await;
    // Demoted: the override keeps undo but drops devices.manage.
    stoa_auth::testing::set_user_acl(
        &app.db,
        user,
        acme.tenant_id,
        &["devices.view", "audit_logs.undo_self"],
        false,
    )
    .await;
    let res = undo(&app, &token, &op).await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert!(own_device(&app, &token, id).await.is_some(), "still live");

    // A device admin of a branch, undoing tenant-wide: the device is in the
    // root organization, outside its scope.
    let branch = child_org(&app.db, &acme, "Branch").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (other, op) = register(
        &app,
        &employee,
        json!({"deviceId": "tablet", "platform": "android"}),
    )
    .await;
    let admin = user_with_features(
        &app.db,
        &acme,
        "branch-admin@acme.com",
        &["devices.*", "audit_logs.*"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let admin = token_for(&app.db, admin).await;
    let res = undo(&app, &admin, &op).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["error"], "Undo token not available");
    assert!(
        own_device(&app, &employee, other).await.is_some(),
        "still live"
    );
    // The owner still can.
    assert_eq!(undo(&app, &employee, &op).await.status, 200);
    assert!(own_device(&app, &employee, other).await.is_none());
}
