//! `POST /api_keys/keys`: the secret, validation, tenants, organizations,
//! the grant boundary, keys made by keys, and the action log.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_api_keys::schema::api_keys;
use uuid::Uuid;

use super::support::*;

fn rfc3339(at: time::OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

#[actix_web::test]
async fn creates_a_key_and_shows_its_secret_once() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = role(&app.db, acme.tenant_id, "Reader", &["api_keys.view"], None).await;
    let res = app
        .send(post_json(
            KEYS,
            &admin,
            json!({
                "name": "  CI deploys ",
                "description": "used by CI",
                "roles": [reader.to_string(), "reader"],
            }),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    // The secret is in the body: no cache may keep it.
    assert_eq!(res.header("cache-control"), Some("no-store"));
    assert!(
        res.header("x-om-operation").is_none(),
        "not undoable, so no undo token"
    );
    let body = res.json();
    let secret = body["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 61);
    assert!(secret.starts_with("omk_"));
    let (prefix, rest) = secret.split_once('.').unwrap();
    assert_eq!(prefix.len(), 12);
    assert_eq!(rest.len(), 48);
    assert!(
        prefix[4..]
            .chars()
            .chain(rest.chars())
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    let id: Uuid = body["id"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        body,
        json!({
            "id": id,
            "name": "CI deploys",
            "keyPrefix": prefix,
            "secret": secret,
            "tenantId": acme.tenant_id,
            "organizationId": acme.organization_id,
            "roles": [{"id": reader, "name": "Reader"}],
        })
    );

    // Stored: the prefix and the SHA-256 of the secret, never the secret.
    let mut conn = app.db.conn().await.unwrap();
    let (stored_prefix, hash, description, created_by): (String, String, Option<String>, Uuid) =
        api_keys::table
            .filter(api_keys::id.eq(id))
            .select((
                api_keys::key_prefix,
                api_keys::key_hash,
                api_keys::description,
                api_keys::created_by,
            ))
            .first(&mut *conn)
            .await
            .unwrap();
    assert_eq!(stored_prefix, prefix);
    assert_eq!(hash, stoa_api_keys::secret::hash(secret));
    assert_ne!(hash, secret);
    assert_eq!(description.as_deref(), Some("used by CI"));
    assert_eq!(created_by, acme.admin);

    // The action log has the creation, with no secret or hash in it.
    let logs = action_logs(&app.db, "api_keys.keys.create").await;
    assert_eq!(logs.len(), 1);
    let (actor, resource, before, after, undo) = &logs[0];
    assert_eq!(*actor, Some(acme.admin));
    assert_eq!(resource.as_deref(), Some(id.to_string().as_str()));
    assert!(before.is_none());
    assert!(undo.is_none(), "key creation is not undoable");
    let after = after.clone().unwrap();
    assert_eq!(after["keyPrefix"], prefix);
    assert_eq!(after["name"], "CI deploys");
    let text = after.to_string();
    assert!(!text.contains(secret) && !text.contains(rest) && !text.contains(&hash));

    // The secret works, and is never shown again.
    let list = app.send(get(KEYS, &admin)).await;
    assert_eq!(list.status, 200);
    assert!(!list.text().contains(rest) && !list.text().contains(&hash));
    assert_eq!(app.send(get(KEYS, secret)).await.status, 200);
}

#[actix_web::test]
async fn bad_input_is_400_naming_the_field_and_creates_nothing() {
    let (app, _) = start().await;
    let (acme, globex) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let past = rfc3339(time::OffsetDateTime::now_utc() - time::Duration::minutes(1));
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "name"),
        (json!({"name": ""}), "name"),
        (json!({"name": "   "}), "name"),
        (json!({"name": "x".repeat(121)}), "name"),
        (json!({"name": 5}), "name"),
        (
            json!({"name": "k", "description": "d".repeat(1001)}),
            "description",
        ),
        (json!({"name": "k", "roles": "admin"}), "roles"),
        (json!({"name": "k", "roles": [""]}), "roles"),
        (
            json!({"name": "k", "organizationId": "nope"}),
            "organizationId",
        ),
        (json!({"name": "k", "tenantId": "nope"}), "tenantId"),
        (json!({"name": "k", "expiresAt": "next week"}), "expiresAt"),
        (
            json!({"name": "k", "expiresAt": 1_900_000_000}),
            "expiresAt",
        ),
        (json!({"name": "k", "expiresAt": past}), "expiresAt"),
        (json!({"name": "k", "cf_color": "red"}), "cf_color"),
    ];
    for (body, field) in cases {
        let res = app.send(post_json(KEYS, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        // Body errors say `Invalid input` and name the field in `issues`.
        let body = res.json();
        let paths: Vec<String> = body["issues"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                let segments: Vec<String> = i["path"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| s.as_str().map_or_else(|| s.to_string(), String::from))
                    .collect();
                format!("{} {}", segments.join("."), i["message"])
            })
            .collect();
        let error = body["error"].as_str().unwrap().to_string();
        assert!(
            error.contains(field) || paths.iter().any(|p| p.contains(field)),
            "{body}"
        );
    }
    let res = app
        .send(post_json(
            KEYS,
            &admin,
            json!({"name": "k", "roles": ["nope"]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json(), json!({"error": "Role nope not found"}));
    let res = app
        .send(post_json(
            KEYS,
            &admin,
            json!({"name": "k", "roles": [Uuid::new_v4()]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    let foreign = role(&app.db, globex.tenant_id, "Globex role", &[], None).await;
    let res = app
        .send(post_json(
            KEYS,
            &admin,
            json!({"name": "k", "roles": [foreign]}),
        ))
        .await;
    // Row-level security hides the other tenant's role: it reads as unknown
    // (the reference answered with its name, "Role Globex role belongs to
    // another tenant", which told one tenant another's role names).
    assert_eq!(res.status, 400);
    assert_eq!(
        res.json(),
        json!({"error": format!("Role {foreign} not found")})
    );
    let res = app
        .send(
            actix_web::test::TestRequest::post()
                .uri(KEYS)
                .insert_header(("authorization", format!("Bearer {admin}")))
                .insert_header(("content-type", "application/json"))
                .set_payload("{\"name\":"),
        )
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(live_keys(&app.db).await, 0);
    assert!(
        action_logs(&app.db, "api_keys.keys.create")
            .await
            .is_empty()
    );
}

#[actix_web::test]
async fn expiry_is_stored_and_accepts_iso_dates() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let at = time::OffsetDateTime::now_utc() + time::Duration::days(30);
    let at = at.replace_nanosecond(0).unwrap();
    for (name, value, expected) in [
        (
            "rfc3339",
            json!(rfc3339(at)),
            json!(stoa_core::serde_util::timestamp::format(at)),
        ),
        (
            "date",
            json!("2999-01-02"),
            json!("2999-01-02T00:00:00.000Z"),
        ),
        ("null", Value::Null, Value::Null),
        ("empty", json!(""), Value::Null),
    ] {
        create_key(&app, &admin, json!({"name": name, "expiresAt": value})).await;
        let list = app
            .send(get(&format!("{KEYS}?search={name}"), &admin))
            .await
            .json();
        assert_eq!(list["items"][0]["expiresAt"], expected, "{name}");
    }
}

#[actix_web::test]
async fn a_foreign_tenant_is_403_unless_super_admin() {
    let (app, _) = start().await;
    let (acme, globex) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    for tenant in [json!(globex.tenant_id), Value::Null] {
        let res = app
            .send(post_json(
                KEYS,
                &admin,
                json!({"name": "k", "tenantId": tenant}),
            ))
            .await;
        assert_eq!(res.status, 403, "{tenant}");
        assert_eq!(
            res.json(),
            json!({"error": "Not authorized to target this tenant."})
        );
    }
    // Its own tenant, given explicitly, is fine.
    create_key(
        &app,
        &admin,
        json!({"name": "own", "tenantId": acme.tenant_id}),
    )
    .await;

    let superadmin = token_for(&app.db, acme.superadmin).await;
    let body = create_key(
        &app,
        &superadmin,
        json!({"name": "for globex", "tenantId": globex.tenant_id, "roles": ["employee"]}),
    )
    .await;
    assert_eq!(body["tenantId"], json!(globex.tenant_id));
    assert_eq!(body["organizationId"], Value::Null);
    assert_eq!(body["roles"][0]["name"], "employee");
    let globex_admin = token_for(&app.db, globex.admin).await;
    // A key bound to no organization shows when every organization is selected.
    let list = app.send(get(KEYS, &globex_admin)).await.json();
    assert_eq!(list["total"], 0);
    let list = app
        .send(get(KEYS, &globex_admin).insert_header(("x-om-selected-org", "__all__")))
        .await
        .json();
    assert_eq!(list["total"], 1);
    assert_eq!(list["items"][0]["name"], "for globex");

    let res = app
        .send(post_json(
            KEYS,
            &superadmin,
            json!({"name": "k", "tenantId": Uuid::new_v4()}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json(), json!({"error": "Tenant not found"}));
    let res = app
        .send(post_json(
            KEYS,
            &superadmin,
            json!({"name": "k", "tenantId": null}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json(), json!({"error": "Tenant context required"}));
}

#[actix_web::test]
async fn an_organization_outside_the_callers_scope_is_403() {
    let (app, _) = start().await;
    let (acme, globex) = two_tenants(&app.db).await;
    let root = acme.organization_id;
    let east = organization(&app.db, acme.tenant_id, root, "East").await;
    let east_shop = organization(&app.db, acme.tenant_id, east, "East shop").await;
    let west = organization(&app.db, acme.tenant_id, root, "West").await;
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
    for org in [west, root, globex.organization_id] {
        let res = app
            .send(post_json(
                KEYS,
                &token,
                json!({"name": "k", "organizationId": org}),
            ))
            .await;
        assert_eq!(res.status, 403, "{org}");
        assert_eq!(res.json(), json!({"error": "Organization out of scope"}));
    }
    // Inside its subtree, or by default its home organization.
    let body = create_key(
        &app,
        &token,
        json!({"name": "shop", "organizationId": east_shop}),
    )
    .await;
    assert_eq!(body["organizationId"], json!(east_shop));
    let body = create_key(&app, &token, json!({"name": "home"})).await;
    assert_eq!(body["organizationId"], json!(east));
    // The selected organization is the default target.
    let res = app
        .send(
            post_json(KEYS, &token, json!({"name": "selected"}))
                .insert_header(("x-om-selected-org", east_shop.to_string())),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.json()["organizationId"], json!(east_shop));

    // An unrestricted caller may bind any organization of its tenant, but
    // not one of another tenant or none at all.
    let admin = token_for(&app.db, acme.admin).await;
    create_key(
        &app,
        &admin,
        json!({"name": "west", "organizationId": west}),
    )
    .await;
    for org in [globex.organization_id, Uuid::new_v4()] {
        let res = app
            .send(post_json(
                KEYS,
                &admin,
                json!({"name": "k", "organizationId": org}),
            ))
            .await;
        assert_eq!(res.status, 400);
        assert_eq!(res.json(), json!({"error": "Organization not found"}));
    }
}

#[actix_web::test]
async fn a_key_never_carries_more_than_its_creator_holds() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let maker = user_with_features(
        &app.db,
        &acme,
        "maker@acme.com",
        &["api_keys.*", "directory.organizations.view"],
        None,
        None,
    )
    .await;
    let token = token_for(&app.db, maker).await;
    let wider = role(
        &app.db,
        acme.tenant_id,
        "wider",
        &["api_keys.view", "auth.users.list"],
        None,
    )
    .await;
    for roles in [json!(["admin"]), json!(["superadmin"]), json!([wider])] {
        let res = app
            .send(post_json(
                KEYS,
                &token,
                json!({"name": "k", "roles": roles}),
            ))
            .await;
        assert_eq!(res.status, 403, "{roles}: {}", res.text());
        assert_eq!(res.json()["code"], "grant_not_allowed");
    }
    assert_eq!(live_keys(&app.db).await, 0);
    let within = role(
        &app.db,
        acme.tenant_id,
        "within",
        &["api_keys.view", "directory.organizations.view"],
        None,
    )
    .await;
    let body = create_key(&app, &token, json!({"name": "ok", "roles": ["within"]})).await;
    assert_eq!(body["roles"], json!([{"id": within, "name": "within"}]));
}

#[actix_web::test]
async fn a_role_granting_a_feature_no_module_registers_is_403_naming_it() {
    // A super admin's grant of an unknown feature is kept (inert, for a
    // module installed later); anyone else handing it on through a key is
    // refused as for any feature the caller does not hold.
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    role(
        &app.db,
        acme.tenant_id,
        "Sales",
        &["api_keys.view", "sales.*"],
        None,
    )
    .await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            KEYS,
            &admin,
            json!({"name": "k", "roles": ["sales"]}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    let error = res.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(error.contains("sales.*"), "{error}");
    assert_eq!(live_keys(&app.db).await, 0);

    let superadmin = token_for(&app.db, acme.superadmin).await;
    let body = create_key(&app, &superadmin, json!({"name": "k", "roles": ["sales"]})).await;
    assert_eq!(body["roles"][0]["name"], "Sales");
    assert_eq!(live_keys(&app.db).await, 1);
}

#[actix_web::test]
async fn a_key_may_create_keys_within_its_own_grants_and_expiry() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let manager = role(
        &app.db,
        acme.tenant_id,
        "key manager",
        &["api_keys.*"],
        None,
    )
    .await;
    let reader = role(&app.db, acme.tenant_id, "reader", &["api_keys.view"], None).await;
    let parent_expiry = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    let parent = create_key(
        &app,
        &admin,
        json!({"name": "parent", "roles": [manager], "expiresAt": rfc3339(parent_expiry)}),
    )
    .await;
    let parent_secret = parent["secret"].as_str().unwrap();
    let parent_id: Uuid = parent["id"].as_str().unwrap().parse().unwrap();

    // Not beyond its own grants, nor its own expiry.
    let res = app
        .send(post_json(
            KEYS,
            parent_secret,
            json!({"name": "k", "roles": ["admin"]}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let later = rfc3339(parent_expiry + time::Duration::days(1));
    let res = app
        .send(post_json(
            KEYS,
            parent_secret,
            json!({"name": "k", "expiresAt": later}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.json(),
        json!({"error": "expiresAt cannot be later than the expiry of the API key creating this key"})
    );

    let child = create_key(
        &app,
        parent_secret,
        json!({"name": "child", "roles": [reader]}),
    )
    .await;
    let child_secret = child["secret"].as_str().unwrap();
    let child_id: Uuid = child["id"].as_str().unwrap().parse().unwrap();
    assert_eq!(app.send(get(KEYS, child_secret)).await.status, 200);

    let mut conn = app.db.conn().await.unwrap();
    let (created_by, creator, chain, expires): (
        Uuid,
        Uuid,
        Vec<Uuid>,
        Option<time::OffsetDateTime>,
    ) = api_keys::table
        .filter(api_keys::id.eq(child_id))
        .select((
            api_keys::created_by,
            api_keys::creator_user_id,
            api_keys::creator_key_ids,
            api_keys::expires_at,
        ))
        .first(&mut *conn)
        .await
        .unwrap();
    assert_eq!(created_by, parent_id, "the creating key is recorded");
    assert_eq!(creator, acme.admin);
    assert_eq!(chain, vec![parent_id]);
    let expires = expires.expect("inherits the parent's expiry");
    assert!((expires - parent_expiry).abs() < time::Duration::seconds(1));
    // The action log names the key as the actor.
    let logs = action_logs(&app.db, "api_keys.keys.create").await;
    assert_eq!(logs.last().unwrap().0, Some(parent_id));

    // The parent loses api_keys.view: so does the child it made.
    set_role_features(&app.db, manager, &["api_keys.create"]).await;
    assert_eq!(app.send(get(KEYS, child_secret)).await.status, 403);
    set_role_features(&app.db, manager, &["api_keys.*"]).await;
    assert_eq!(app.send(get(KEYS, child_secret)).await.status, 200);

    // Deleting the parent deletes what it made.
    let res = app
        .send(delete(&format!("{KEYS}?id={parent_id}"), &admin))
        .await;
    assert_eq!(res.status, 200);
    assert_unauthorized(&app.send(get(KEYS, child_secret)).await, "child");
    assert_unauthorized(&app.send(get(KEYS, parent_secret)).await, "parent");
}

#[actix_web::test]
async fn chains_of_keys_are_bounded() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let manager = role(
        &app.db,
        acme.tenant_id,
        "key manager",
        &["api_keys.*"],
        None,
    )
    .await;
    let mut secret = key_with_roles(&app, &admin, &[manager]).await;
    for _ in 0..stoa_api_keys::service::MAX_CHAIN {
        secret = key_with_roles(&app, &secret, &[manager]).await;
    }
    let res = app
        .send(post_json(KEYS, &secret, json!({"name": "one too many"})))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["code"], "api_key_chain_too_long");
}
