//! `DELETE /api_keys/keys?id=`: soft delete, 404 for anything out of reach,
//! the action log.

use serde_json::json;
use uuid::Uuid;

use super::support::*;

#[actix_web::test]
async fn deletes_a_key_softly_and_logs_it() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let key = create_key(&app, &admin, json!({"name": "doomed"})).await;
    let id = key["id"].as_str().unwrap();
    let res = app.send(delete(&format!("{KEYS}?id={id}"), &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"success": true}));
    assert!(res.header("x-om-operation").is_none(), "not undoable");
    assert_eq!(app.send(get(KEYS, &admin)).await.json()["total"], 0);
    assert_eq!(live_keys(&app.db).await, 0);

    // Still in the table (soft), and in the action log without secrets.
    let mut conn = app.db.conn().await.unwrap();
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use stoa_api_keys::schema::api_keys;
    let rows: i64 = api_keys::table
        .filter(api_keys::id.eq(id.parse::<Uuid>().unwrap()))
        .filter(api_keys::deleted_at.is_not_null())
        .count()
        .get_result(&mut *conn)
        .await
        .unwrap();
    assert_eq!(rows, 1);
    let logs = action_logs(&app.db, "api_keys.keys.delete").await;
    assert_eq!(logs.len(), 1);
    let (actor, resource, before, after, undo) = &logs[0];
    assert_eq!(*actor, Some(acme.admin));
    assert_eq!(resource.as_deref(), Some(id));
    assert!(undo.is_none(), "deleting a key is not undoable");
    let (before, after) = (before.clone().unwrap(), after.clone().unwrap());
    assert_eq!(
        (&before["deleted"], &after["deleted"]),
        (&json!(false), &json!(true))
    );
    assert_eq!(before["name"], "doomed");
    let secret = key["secret"].as_str().unwrap();
    let hash = stoa_api_keys::secret::hash(secret);
    for snapshot in [before, after] {
        let text = snapshot.to_string();
        assert!(!text.contains(&secret[13..]) && !text.contains(&hash));
    }

    // Gone is gone.
    let res = app.send(delete(&format!("{KEYS}?id={id}"), &admin)).await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), json!({"error": "Not found"}));
}

#[actix_web::test]
async fn a_missing_or_malformed_id_is_400() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    for path in [
        KEYS.to_string(),
        format!("{KEYS}?id="),
        format!("{KEYS}?id=abc"),
        format!("{KEYS}?id=123"),
    ] {
        let res = app.send(delete(&path, &admin)).await;
        assert_eq!(res.status, 400, "{path}");
        assert_eq!(res.json(), json!({"error": "ID is required"}), "{path}");
    }
}

#[actix_web::test]
async fn unknown_foreign_and_out_of_scope_keys_are_404_alike() {
    let (app, _) = start().await;
    let (acme, globex) = two_tenants(&app.db).await;
    let root = acme.organization_id;
    let east = organization(&app.db, acme.tenant_id, root, "East").await;
    let west = organization(&app.db, acme.tenant_id, root, "West").await;
    let acme_admin = token_for(&app.db, acme.admin).await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    let reader = role(
        &app.db,
        globex.tenant_id,
        "reader",
        &["api_keys.view"],
        None,
    )
    .await;
    let foreign = create_key(
        &app,
        &globex_admin,
        json!({"name": "globex", "roles": [reader]}),
    )
    .await;
    let west_key = create_key(
        &app,
        &acme_admin,
        json!({"name": "west", "organizationId": west}),
    )
    .await;
    let restricted = user_with_features(
        &app.db,
        &acme,
        "east@acme.com",
        &["api_keys.*"],
        Some(vec![east]),
        Some(east),
    )
    .await;
    let token = token_for(&app.db, restricted).await;

    for (who, token, id) in [
        ("unknown", &acme_admin, Uuid::new_v4().to_string()),
        (
            "foreign tenant",
            &acme_admin,
            foreign["id"].as_str().unwrap().to_string(),
        ),
        (
            "out of scope",
            &token,
            west_key["id"].as_str().unwrap().to_string(),
        ),
    ] {
        let res = app.send(delete(&format!("{KEYS}?id={id}"), token)).await;
        assert_eq!(res.status, 404, "{who}: {}", res.text());
        assert_eq!(res.json(), json!({"error": "Not found"}), "{who}");
    }
    // Nothing was deleted: the foreign key still works.
    assert_eq!(live_keys(&app.db).await, 2);
    let res = app
        .send(get(KEYS, foreign["secret"].as_str().unwrap()))
        .await;
    assert_eq!(res.status, 200);
    // The restricted user deletes what is in its scope.
    let east_key = create_key(&app, &token, json!({"name": "east"})).await;
    let res = app
        .send(delete(
            &format!("{KEYS}?id={}", east_key["id"].as_str().unwrap()),
            &token,
        ))
        .await;
    assert_eq!(res.status, 200);
}

#[actix_web::test]
async fn a_key_may_delete_itself_and_is_then_refused() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let manager = role(&app.db, acme.tenant_id, "manager", &["api_keys.*"], None).await;
    let key = create_key(&app, &admin, json!({"name": "self", "roles": [manager]})).await;
    let secret = key["secret"].as_str().unwrap();
    let id = key["id"].as_str().unwrap();
    let res = app.send(delete(&format!("{KEYS}?id={id}"), secret)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let logs = action_logs(&app.db, "api_keys.keys.delete").await;
    assert_eq!(logs[0].0, Some(id.parse().unwrap()), "the key is the actor");
    assert_unauthorized(&app.send(get(KEYS, secret)).await, "deleted itself");
}
