//! Push tokens at rest: the column never holds the plaintext, rotation keeps
//! old values readable while new writes use the new key, and rows stored
//! before encryption are migrated.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::json;
use stoa_core::crypto::{KeyRing, PREFIX};
use stoa_devices::dto::PushToken;
use stoa_devices::schema::user_devices::dsl as d;
use stoa_devices::secrets::{find_by_push_token, push_token, reencrypt_push_tokens};
use uuid::Uuid;

use super::support::*;

const TOKEN: &str = "fcm:APA91bH-very-secret-token-0123456789";

async fn raw_columns(
    db: &stoa_core::db::Db,
    id: Uuid,
) -> (Option<String>, Option<String>, Option<String>) {
    let mut conn = db.conn().await.unwrap();
    d::user_devices
        .filter(d::id.eq(id))
        .select((d::push_token, d::push_token_hash, d::push_token_fingerprint))
        .first(&mut *conn)
        .await
        .unwrap()
}

#[actix_web::test]
async fn the_column_never_holds_the_plaintext() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "pushToken": TOKEN, "pushProvider": "fcm"}),
    )
    .await;
    let (raw, hash, fingerprint) = raw_columns(&app.db, id).await;
    let raw = raw.unwrap();
    assert!(raw.starts_with(PREFIX), "{raw}");
    assert!(!raw.contains("very-secret"), "{raw}");
    let (tenant, record) = bound_to(&meta(&app.db, id).await);
    let here = stoa_devices::secrets::binding(tenant, &record);
    assert_eq!(keys().decrypt(&raw, &here).unwrap(), TOKEN);
    assert!(hash.unwrap().starts_with(keys().current_id()));
    assert_eq!(fingerprint.as_deref(), Some("23456789"));
    // Nothing in the whole row, as text, carries the token.
    #[derive(QueryableByName)]
    struct Dump {
        #[diesel(sql_type = diesel::sql_types::Text)]
        text: String,
    }
    let mut conn = app.db.conn().await.unwrap();
    let dump = diesel::sql_query(format!(
        "SELECT row_to_json(t)::text AS text FROM user_devices t WHERE id = '{id}'"
    ))
    .get_result::<Dump>(&mut *conn)
    .await
    .unwrap();
    assert!(!dump.text.contains("very-secret"), "{}", dump.text);

    // The keyed hash finds the device by its token.
    let found = find_by_push_token(&mut conn, &keys(), acme.tenant_id, &PushToken::new(TOKEN))
        .await
        .unwrap();
    assert_eq!(found.map(|r| r.id), Some(id));
    let other = find_by_push_token(&mut conn, &keys(), acme.tenant_id, &PushToken::new("nope"))
        .await
        .unwrap();
    assert!(other.is_none());

    // An update with a new token stores it encrypted too.
    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({"pushToken": "second-secret-token-abcdefgh"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (raw, _, fingerprint) = raw_columns(&app.db, id).await;
    assert!(!raw.unwrap().contains("second-secret"));
    assert_eq!(fingerprint.as_deref(), Some("abcdefgh"));
    assert_eq!(
        stored(&app.db, id).await.0.as_deref(),
        Some("second-secret-token-abcdefgh")
    );
}

#[actix_web::test]
async fn rotation_reads_old_values_and_writes_with_the_new_key() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    // Stored by the test app, under TEST_KEY.
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "pushToken": TOKEN}),
    )
    .await;
    let (old_raw, old_hash, _) = raw_columns(&app.db, id).await;

    // The key is rotated: TEST_KEY moves to the old keys.
    let rotated = Arc::new(KeyRing::new(&[7; 32], &[TEST_KEY]));
    let mut conn = app.db.conn().await.unwrap();
    // Old values still decrypt, and lookups still find the old hash.
    let found = find_by_push_token(&mut conn, &rotated, acme.tenant_id, &PushToken::new(TOKEN))
        .await
        .unwrap();
    assert_eq!(found.map(|r| r.id), Some(id));
    // Reading upgrades the row to the new key.
    let token = push_token(&mut conn, &rotated, acme.tenant_id, id)
        .await
        .unwrap();
    assert_eq!(token.as_ref().map(PushToken::expose), Some(TOKEN));
    let (raw, hash, _) = raw_columns(&app.db, id).await;
    let raw = raw.unwrap();
    assert_ne!(Some(raw.clone()), old_raw);
    assert!(rotated.is_current(&raw));
    assert!(hash.unwrap().starts_with(rotated.current_id()));
    assert_ne!(
        old_hash.unwrap().split(':').next(),
        Some(rotated.current_id())
    );
    // The old ring alone can no longer read it; the new one can.
    let (tenant, record) = bound_to(&meta(&app.db, id).await);
    let here = stoa_devices::secrets::binding(tenant, &record);
    assert!(keys().decrypt(&raw, &here).is_err());
    assert_eq!(rotated.decrypt(&raw, &here).unwrap(), TOKEN);

    // New writes through an app running on the rotated ring use the new key.
    let (second, _) = register(
        &app,
        &employee,
        json!({"deviceId": "tablet", "platform": "android", "pushToken": "tablet-token-12345678"}),
    )
    .await;
    // (The test app still runs on TEST_KEY: the batch re-encrypts it.)
    let rewritten = reencrypt_push_tokens(&mut conn, &rotated, 1).await.unwrap();
    assert_eq!(rewritten, 1, "only the row not yet under the new key");
    let (raw, _, _) = raw_columns(&app.db, second).await;
    assert!(rotated.is_current(&raw.unwrap()));
    assert_eq!(
        reencrypt_push_tokens(&mut conn, &rotated, 10)
            .await
            .unwrap(),
        0
    );
}

#[actix_web::test]
async fn plaintext_rows_from_before_encryption_are_migrated() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios"}),
    )
    .await;
    let mut conn = app.db.conn().await.unwrap();
    // As a row written before the encryption migration looks.
    diesel::update(d::user_devices.filter(d::id.eq(id)))
        .set(d::push_token.eq("legacy-plain-token-87654321"))
        .execute(&mut *conn)
        .await
        .unwrap();
    // Still usable: the devices API works on it, and a read decrypts it.
    let res = app
        .send(put_json(
            &format!("/api/devices/{id}"),
            &employee,
            json!({"osVersion": "18"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        stored_raw(&app.db, id).await.0.as_deref(),
        Some("legacy-plain-token-87654321")
    );

    assert_eq!(
        reencrypt_push_tokens(&mut conn, &keys(), 100)
            .await
            .unwrap(),
        1
    );
    let (raw, hash, fingerprint) = raw_columns(&app.db, id).await;
    assert!(!raw.clone().unwrap().contains("legacy-plain"));
    assert!(hash.is_some());
    assert_eq!(fingerprint.as_deref(), Some("87654321"));
    assert_eq!(
        stored(&app.db, id).await.0.as_deref(),
        Some("legacy-plain-token-87654321")
    );
    let found = find_by_push_token(
        &mut conn,
        &keys(),
        acme.tenant_id,
        &PushToken::new("legacy-plain-token-87654321"),
    )
    .await
    .unwrap();
    assert_eq!(found.map(|r| r.id), Some(id));
}

/// A token is bound to its device: copied into another device's row (of the
/// same tenant, or another's) it does not decrypt.
#[actix_web::test]
async fn a_token_copied_into_another_row_does_not_decrypt() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let admin = token_for(&app.db, acme.admin).await;
    let (mine, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios", "pushToken": TOKEN}),
    )
    .await;
    let (theirs, _) = register(
        &app,
        &admin,
        json!({"deviceId": "phone", "platform": "ios", "pushToken": "admin-token-12345678"}),
    )
    .await;
    let (raw, hash, _) = raw_columns(&app.db, mine).await;
    let mut conn = app.db.conn().await.unwrap();
    diesel::update(d::user_devices.filter(d::id.eq(theirs)))
        .set((d::push_token.eq(&raw), d::push_token_hash.eq(&hash)))
        .execute(&mut *conn)
        .await
        .unwrap();
    let keys = keys();
    assert!(
        push_token(&mut conn, &keys, acme.tenant_id, theirs)
            .await
            .is_err()
    );
    // The row it came from still reads.
    let token = push_token(&mut conn, &keys, acme.tenant_id, mine)
        .await
        .unwrap();
    assert_eq!(token.as_ref().map(PushToken::expose), Some(TOKEN));
}

/// Once the re-encryption pass has run, a plaintext written into the column
/// behind the module's back is refused, never served as a token.
#[actix_web::test]
async fn after_the_pass_legacy_values_are_refused() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(
        &app,
        &employee,
        json!({"deviceId": "phone", "platform": "ios"}),
    )
    .await;
    let mut conn = app.db.conn().await.unwrap();
    let keys = keys();
    let plant = |value: String| {
        diesel::update(d::user_devices.filter(d::id.eq(id))).set(d::push_token.eq(value))
    };
    // Before the pass: an unbound (`enc:v1:`) value is still read (and upgraded).
    plant(keys.encrypt_legacy("old-unbound-token-1234").unwrap())
        .execute(&mut *conn)
        .await
        .unwrap();
    assert!(keys.accepts_legacy());
    let token = push_token(&mut conn, &keys, acme.tenant_id, id)
        .await
        .unwrap();
    assert_eq!(
        token.as_ref().map(PushToken::expose),
        Some("old-unbound-token-1234")
    );
    assert!(keys.is_current(&raw_columns(&app.db, id).await.0.unwrap()));
    // The pass finds nothing left and closes the door.
    assert_eq!(
        reencrypt_push_tokens(&mut conn, &keys, 100).await.unwrap(),
        0
    );
    assert!(!keys.accepts_legacy());
    plant("planted-plain-token-999".into())
        .execute(&mut *conn)
        .await
        .unwrap();
    assert!(
        push_token(&mut conn, &keys, acme.tenant_id, id)
            .await
            .is_err()
    );
}
