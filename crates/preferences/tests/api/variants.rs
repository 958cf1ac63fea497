//! Sidebar variants: automatic names, duplicates, the active flag, partial
//! updates, soft deletes, per-locale lists, other users and tenants.

use serde_json::{Value, json};
use stoa_auth::testing::{token_for, user_with_features};
use stoa_testkit::requests::delete;
use uuid::Uuid;

use super::sidebar::{in_lang, logged};
use super::support::*;

const VARIANTS: &str = "/api/auth/sidebar/variants";

fn at(id: &Value) -> String {
    format!("{VARIANTS}/{}", id.as_str().unwrap())
}

async fn create<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    body: Value,
) -> Value {
    let res = app.send(post_json(VARIANTS, token, body.clone())).await;
    assert_eq!(res.status, 200, "{body}: {}", res.text());
    assert_eq!(res.json()["locale"], "en");
    res.json()["variant"].clone()
}

async fn names<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
) -> Vec<(String, bool)> {
    let res = app.send(get(VARIANTS, token)).await;
    assert_eq!(res.status, 200);
    res.json()["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["isActive"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[actix_web::test]
async fn variants_get_automatic_names_and_unique_ones() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app.send(get(VARIANTS, &admin)).await;
    assert_eq!(res.json(), json!({"locale": "en", "variants": []}));

    let first = create(&app, &admin, json!({})).await;
    assert_eq!(first["name"], "My preferences");
    assert_eq!(first["isActive"], false);
    assert_eq!(first["settings"]["version"], 2);
    assert!(first["createdAt"].is_string());
    let second = create(&app, &admin, json!({"name": "   "})).await;
    assert_eq!(second["name"], "My preferences 2");
    let work = create(
        &app,
        &admin,
        json!({"name": "  Work ", "settings": {"hiddenItems": ["/backend/roles"]}}),
    )
    .await;
    assert_eq!(work["name"], "Work");
    assert_eq!(work["settings"]["hiddenItems"], json!(["/backend/roles"]));

    for name in ["work", "My Preferences"] {
        let res = app
            .send(post_json(VARIANTS, &admin, json!({"name": name})))
            .await;
        assert_eq!(res.status, 409, "{name}");
        assert_eq!(res.json()["code"], "duplicate_name");
        assert!(
            res.json()["error"]
                .as_str()
                .unwrap()
                .contains("already exists")
        );
    }

    // The lowest free number is reused after a delete.
    let res = app.send(delete(&at(&first["id"]), &admin)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!({"ok": true}));
    assert_eq!(
        create(&app, &admin, json!({})).await["name"],
        "My preferences"
    );
    assert_eq!(
        create(&app, &admin, json!({})).await["name"],
        "My preferences 3"
    );

    // Live variants, oldest first.
    let list: Vec<String> = names(&app, &admin).await.into_iter().map(|n| n.0).collect();
    assert_eq!(
        list,
        vec![
            "My preferences 2",
            "Work",
            "My preferences",
            "My preferences 3"
        ]
    );

    for body in [
        json!({"name": "x".repeat(121)}),
        json!({"name": 5}),
        json!({"settings": {"groupOrder": (0..201).map(|i| i.to_string()).collect::<Vec<_>>()}}),
        json!({"isActive": "yes"}),
    ] {
        let res = app.send(post_json(VARIANTS, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
    }
    assert_eq!(names(&app, &admin).await.len(), 4);
    assert_eq!(
        logged(&app.db, "auth.sidebar.variants.create").await.len(),
        5
    );
    assert_eq!(
        logged(&app.db, "auth.sidebar.variants.delete").await.len(),
        1
    );
}

#[actix_web::test]
async fn one_variant_is_active_and_updates_are_partial() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let a = create(
        &app,
        &admin,
        json!({"name": "A", "isActive": true, "settings": {"hiddenItems": ["/a"]}}),
    )
    .await;
    assert_eq!(a["isActive"], true);
    let b = create(&app, &admin, json!({"name": "B", "isActive": true})).await;
    assert_eq!(
        names(&app, &admin).await,
        vec![("A".into(), false), ("B".into(), true)]
    );

    // Only the name changes; settings stay.
    let res = app
        .send(put_json(&at(&a["id"]), &admin, json!({"name": " Alpha "})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let alpha = res.json()["variant"].clone();
    assert_eq!(alpha["name"], "Alpha");
    assert_eq!(alpha["settings"]["hiddenItems"], json!(["/a"]));
    assert_eq!(alpha["isActive"], false);
    assert_eq!(res.json()["locale"], "en");
    // Only the settings change; the name stays. Activating deactivates B.
    let res = app
        .send(put_json(
            &at(&a["id"]),
            &admin,
            json!({"settings": {"groupOrder": ["auth"]}, "isActive": true}),
        ))
        .await;
    let alpha = res.json()["variant"].clone();
    assert_eq!(alpha["name"], "Alpha");
    assert_eq!(alpha["settings"]["groupOrder"], json!(["auth"]));
    assert_eq!(alpha["settings"]["hiddenItems"], json!([]));
    assert_eq!(
        names(&app, &admin).await,
        vec![("Alpha".into(), true), ("B".into(), false)]
    );
    let res = app.send(get(&at(&a["id"]), &admin)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["variant"], alpha);

    // Renaming onto another live name conflicts; onto its own name does not.
    let res = app
        .send(put_json(&at(&b["id"]), &admin, json!({"name": "alpha"})))
        .await;
    assert_eq!(res.status, 409);
    assert_eq!(res.json()["code"], "duplicate_name");
    let res = app
        .send(put_json(&at(&a["id"]), &admin, json!({"name": "ALPHA"})))
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(put_json(&at(&a["id"]), &admin, json!({"name": "  "})))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .send(put_json(
            &at(&a["id"]),
            &admin,
            json!({"settings": {"hiddenItems": [""]}}),
        ))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .send(put_json(
            &format!("{VARIANTS}/not-a-uuid"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 400);

    // Deleted variants are gone for every verb.
    let res = app.send(delete(&at(&b["id"]), &admin)).await;
    assert_eq!(res.status, 200);
    for res in [
        app.send(get(&at(&b["id"]), &admin)).await,
        app.send(put_json(&at(&b["id"]), &admin, json!({"name": "B2"})))
            .await,
        app.send(delete(&at(&b["id"]), &admin)).await,
    ] {
        assert_eq!(res.status, 404);
        assert_eq!(res.json(), json!({"error": "Variant not found"}));
    }
    // A deleted name is free again.
    assert_eq!(
        create(&app, &admin, json!({"name": "B"})).await["name"],
        "B"
    );
    assert_eq!(
        logged(&app.db, "auth.sidebar.variants.update").await.len(),
        3
    );
}

#[actix_web::test]
async fn variants_belong_to_their_user_locale_and_tenant() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let globex = stoa_auth::testing::seed_tenant(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let other = user_with_features(&app.db, &acme, "other@acme.com", &["auth.*"], None, None).await;
    let other = token_for(&app.db, other).await;
    let foreign = token_for(&app.db, globex.admin).await;
    let mine = create(&app, &admin, json!({"name": "Mine"})).await;

    for token in [&other, &foreign] {
        assert!(names(&app, token).await.is_empty());
        for res in [
            app.send(get(&at(&mine["id"]), token)).await,
            app.send(put_json(&at(&mine["id"]), token, json!({"name": "Taken"})))
                .await,
            app.send(delete(&at(&mine["id"]), token)).await,
        ] {
            assert_eq!(res.status, 404);
        }
        // The same name is free for someone else.
        assert_eq!(
            create(&app, token, json!({"name": "Mine"})).await["name"],
            "Mine"
        );
    }

    // Another locale has its own list and names.
    let res = app.send(in_lang(get(VARIANTS, &admin), "pl")).await;
    assert_eq!(res.json(), json!({"locale": "pl", "variants": []}));
    let res = app.send(in_lang(get(&at(&mine["id"]), &admin), "pl")).await;
    assert_eq!(res.status, 404);
    let res = app
        .send(in_lang(
            post_json(VARIANTS, &admin, json!({"name": "Mine"})),
            "pl",
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["locale"], "pl");

    assert_eq!(names(&app, &admin).await, vec![("Mine".to_string(), false)]);
    let res = app.send(get(&at(&mine["id"]), &admin)).await;
    assert_eq!(res.json()["variant"]["name"], "Mine");
    let missing = format!("{VARIANTS}/{}", Uuid::new_v4());
    assert_eq!(app.send(get(&missing, &admin)).await.status, 404);
}

#[actix_web::test]
async fn variant_writes_emit_events_in_their_envelope() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let variant = create(&app, &admin, json!({"name": "Compact"})).await;
    let res = app
        .send(put_json(
            &at(&variant["id"]),
            &admin,
            json!({"name": "Dense"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app.send(delete(&at(&variant["id"]), &admin)).await;
    assert!(res.status.is_success(), "{}", res.text());
    for (verb, command) in [
        ("created", "create"),
        ("updated", "update"),
        ("deleted", "delete"),
    ] {
        let events =
            stoa_testkit::outbox_events_named(&app.db, &format!("auth.sidebar_variant.{verb}"))
                .await;
        assert_eq!(events.len(), 1, "{verb}");
        assert_eq!(
            events[0]["commandId"],
            format!("auth.sidebar.variants.{command}")
        );
        assert_eq!(events[0]["tenantId"], json!(acme.tenant_id));
        assert_eq!(events[0]["actor"]["userId"], json!(acme.admin));
        assert_eq!(events[0]["payload"], json!({"id": variant["id"]}));
        assert_eq!(events[0]["resourceId"], variant["id"]);
    }
}
