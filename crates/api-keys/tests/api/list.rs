//! `GET /api_keys/keys`: shape, paging, search, tenant and organization scope.

use serde_json::{Value, json};

use super::support::*;

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn lists_keys_newest_first_without_secrets() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = role(&app.db, acme.tenant_id, "Reader", &["api_keys.view"], None).await;
    let first = create_key(
        &app,
        &admin,
        json!({"name": "first", "description": "the first", "roles": [reader]}),
    )
    .await;
    let second = create_key(&app, &admin, json!({"name": "second"})).await;
    let res = app.send(get(KEYS, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let list = res.json();
    assert_eq!(names(&list), ["second", "first"]);
    assert_eq!(
        (
            &list["total"],
            &list["page"],
            &list["pageSize"],
            &list["totalPages"]
        ),
        (&json!(2), &json!(1), &json!(20), &json!(1))
    );
    let item = &list["items"][1];
    let mut keys: Vec<&String> = item.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "createdAt",
            "description",
            "expiresAt",
            "id",
            "keyPrefix",
            "lastUsedAt",
            "name",
            "organizationId",
            "organizationName",
            "roles"
        ]
    );
    assert_eq!(item["id"], first["id"]);
    assert_eq!(item["description"], "the first");
    assert_eq!(item["keyPrefix"], first["keyPrefix"]);
    assert_eq!(item["organizationId"], json!(acme.organization_id));
    assert_eq!(item["organizationName"], "Acme Corp");
    assert_eq!(item["roles"], json!([{"id": reader, "name": "Reader"}]));
    assert_eq!(item["lastUsedAt"], Value::Null);
    assert_eq!(item["expiresAt"], Value::Null);
    for created in [&first, &second] {
        let secret = created["secret"].as_str().unwrap();
        let (_, body) = secret.split_once('.').unwrap();
        assert!(!res.text().contains(body));
        assert!(!res.text().contains(&stoa_api_keys::secret::hash(secret)));
    }
    assert!(!res.text().contains("secret") && !res.text().contains("hash"));

    // A deleted role shows with a null name.
    sql(
        &app.db,
        &format!("UPDATE roles SET deleted_at = now() WHERE id = '{reader}'"),
    )
    .await;
    let list = app.send(get(KEYS, &admin)).await.json();
    assert_eq!(
        list["items"][1]["roles"],
        json!([{"id": reader, "name": null}])
    );
}

#[actix_web::test]
async fn pages_and_bounds() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let empty = app.send(get(KEYS, &admin)).await.json();
    assert_eq!(
        empty,
        json!({"items": [], "total": 0, "page": 1, "pageSize": 20, "totalPages": 0, "totalCapped": false})
    );
    for n in 0..5 {
        create_key(&app, &admin, json!({"name": format!("key {n}")})).await;
    }
    let page = app
        .send(get(&format!("{KEYS}?page=2&pageSize=2"), &admin))
        .await
        .json();
    assert_eq!(names(&page), ["key 2", "key 1"]);
    assert_eq!(
        (&page["total"], &page["totalPages"]),
        (&json!(5), &json!(3))
    );
    let beyond = app
        .send(get(&format!("{KEYS}?page=9&pageSize=2"), &admin))
        .await
        .json();
    assert_eq!(beyond["items"], json!([]));
    assert_eq!(beyond["total"], 5);
    let all = app
        .send(get(&format!("{KEYS}?pageSize=200"), &admin))
        .await
        .json();
    assert_eq!(all["items"].as_array().unwrap().len(), 5);
    for (query, field) in [
        ("pageSize=0", "pageSize"),
        ("pageSize=201", "pageSize"),
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=x", "page"),
        ("pageSize=1.5", "pageSize"),
    ] {
        let res = app.send(get(&format!("{KEYS}?{query}"), &admin)).await;
        assert_eq!(res.status, 400, "{query}: {}", res.text());
        assert!(
            res.json()["error"].as_str().unwrap().contains(field),
            "{query}"
        );
    }
    let res = app
        .send(get(&format!("{KEYS}?search={}", "x".repeat(201)), &admin))
        .await;
    assert_eq!(res.status, 400);
}

#[actix_web::test]
async fn search_matches_name_or_prefix_case_insensitively_and_literally() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let deploy = create_key(&app, &admin, json!({"name": "Deploy Bot"})).await;
    create_key(&app, &admin, json!({"name": "100% coverage"})).await;
    create_key(&app, &admin, json!({"name": "1000 coverage"})).await;
    create_key(&app, &admin, json!({"name": "under_score"})).await;
    create_key(&app, &admin, json!({"name": "underXscore"})).await;
    let search = |q: &str| {
        let path = format!("{KEYS}?search={q}");
        let admin = admin.clone();
        let app = &app;
        async move { names(&app.send(get(&path, &admin)).await.json()) }
    };
    assert_eq!(search("deploy").await, ["Deploy Bot"]);
    assert_eq!(search("DEPLOY%20BOT").await, ["Deploy Bot"]);
    assert_eq!(search("100%25").await, ["100% coverage"]);
    assert_eq!(search("under_").await, ["under_score"]);
    let prefix = deploy["keyPrefix"].as_str().unwrap();
    assert_eq!(search(prefix).await, ["Deploy Bot"]);
    assert_eq!(search(&prefix.to_uppercase()).await, ["Deploy Bot"]);
    assert_eq!(search("nothing").await, Vec::<String>::new());
    assert_eq!(search("").await.len(), 5);
}

#[actix_web::test]
async fn a_tenant_sees_only_its_own_keys() {
    let (app, _) = start().await;
    let (acme, globex) = two_tenants(&app.db).await;
    let acme_admin = token_for(&app.db, acme.admin).await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    create_key(&app, &acme_admin, json!({"name": "acme key"})).await;
    create_key(&app, &globex_admin, json!({"name": "globex key"})).await;
    assert_eq!(
        names(&app.send(get(KEYS, &acme_admin)).await.json()),
        ["acme key"]
    );
    let all = app
        .send(get(KEYS, &globex_admin).insert_header(("x-om-selected-org", "__all__")))
        .await
        .json();
    assert_eq!(names(&all), ["globex key"]);
    // A foreign tenant's key lists only its own tenant's keys too.
    let reader = role(
        &app.db,
        globex.tenant_id,
        "reader",
        &["api_keys.view"],
        None,
    )
    .await;
    let secret = key_with_roles(&app, &globex_admin, &[reader]).await;
    let mut seen = names(&app.send(get(KEYS, &secret)).await.json());
    seen.sort();
    assert_eq!(seen, ["globex key", "test key"]);
}

#[actix_web::test]
async fn organization_scope_narrows_the_list() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let root = acme.organization_id;
    let east = organization(&app.db, acme.tenant_id, root, "East").await;
    let east_shop = organization(&app.db, acme.tenant_id, east, "East shop").await;
    let west = organization(&app.db, acme.tenant_id, root, "West").await;
    let superadmin = token_for(&app.db, acme.superadmin).await;
    for (name, org) in [
        ("root", json!(root)),
        ("east", json!(east)),
        ("east shop", json!(east_shop)),
        ("west", json!(west)),
    ] {
        create_key(
            &app,
            &superadmin,
            json!({"name": name, "organizationId": org}),
        )
        .await;
    }
    // A key bound to no organization (as a super admin makes for another tenant).
    let wide = create_key(&app, &superadmin, json!({"name": "tenant-wide"})).await;
    assert_eq!(
        wide["organizationId"],
        json!(root),
        "defaults to the home organization"
    );
    sql(
        &app.db,
        &format!(
            "UPDATE api_keys SET organization_id = NULL WHERE id = '{}'",
            wide["id"].as_str().unwrap()
        ),
    )
    .await;

    let sorted = |list: Value| {
        let mut n = names(&list);
        n.sort();
        n
    };
    let restricted = user_with_features(
        &app.db,
        &acme,
        "east@acme.com",
        &["api_keys.view"],
        Some(vec![east]),
        Some(east),
    )
    .await;
    let token = token_for(&app.db, restricted).await;
    assert_eq!(
        sorted(app.send(get(KEYS, &token)).await.json()),
        ["east", "east shop"]
    );
    let all = app
        .send(get(KEYS, &token).insert_header(("x-om-selected-org", "__all__")))
        .await
        .json();
    assert_eq!(sorted(all), ["east", "east shop"], "restricted: never more");
    let shop = app
        .send(get(KEYS, &token).insert_header(("x-om-selected-org", east_shop.to_string())))
        .await
        .json();
    assert_eq!(sorted(shop), ["east shop"]);
    let res = app
        .send(get(KEYS, &token).insert_header(("x-om-selected-org", west.to_string())))
        .await;
    assert_eq!(res.status, 422);

    // The admin (home: root) sees the root subtree, the selection narrows it,
    // and "all organizations" adds the tenant-wide key.
    let admin = token_for(&app.db, acme.admin).await;
    assert_eq!(
        sorted(app.send(get(KEYS, &admin)).await.json()),
        ["east", "east shop", "root", "west"]
    );
    let west_only = app
        .send(get(KEYS, &admin).insert_header(("x-om-selected-org", west.to_string())))
        .await
        .json();
    assert_eq!(sorted(west_only), ["west"]);
    let all = app
        .send(get(KEYS, &admin).insert_header(("x-om-selected-org", "__all__")))
        .await
        .json();
    assert_eq!(
        sorted(all),
        ["east", "east shop", "root", "tenant-wide", "west"]
    );
    // The super admin sees everything by default.
    assert_eq!(app.send(get(KEYS, &superadmin)).await.json()["total"], 5);
}

#[actix_web::test]
async fn list_is_two_round_trips_with_capped_totals_and_cursors() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = role(&app.db, acme.tenant_id, "Reader", &["api_keys.view"], None).await;
    let gone = role(&app.db, acme.tenant_id, "Gone", &["api_keys.view"], None).await;
    // 1,005 keys a second apart, each with a live and a deleted role.
    sql(
        &app.db,
        &format!(
            "INSERT INTO api_keys (name, tenant_id, organization_id, key_prefix, key_hash, \
             role_ids, created_by, creator_user_id, created_at) \
             SELECT 'bulk' || lpad(g::text, 4, '0'), '{t}', '{o}', \
             'omk_' || lpad(to_hex(g), 8, '0'), repeat('0', 64), \
             ARRAY['{reader}', '{gone}']::uuid[], '{u}', '{u}', \
             timestamptz '2026-01-01 00:00:00.654321+00' + g * interval '1 second' \
             FROM generate_series(1, 1005) g",
            t = acme.tenant_id,
            o = acme.organization_id,
            u = acme.admin,
        ),
    )
    .await;
    sql(
        &app.db,
        &format!("UPDATE roles SET deleted_at = now() WHERE id = '{gone}'"),
    )
    .await;
    // Warm the ACL cache: a list is then the session check and one statement
    // (page, total, role and organization names).
    app.send(get(&format!("{KEYS}?pageSize=1"), &admin)).await;
    let (n, body) = app.statements(&format!("{KEYS}?pageSize=50"), &admin).await;
    assert_eq!(n, 2, "key list statements");
    assert_eq!(body["items"].as_array().unwrap().len(), 50);
    assert_eq!(
        (&body["total"], &body["totalCapped"]),
        (&json!(1000), &json!(true))
    );
    assert_eq!(body["items"][0]["name"], "bulk1005");
    assert_eq!(body["items"][0]["organizationName"], "Acme Corp");
    assert_eq!(
        body["items"][0]["roles"],
        json!([{"id": reader, "name": "Reader"}, {"id": gone, "name": null}])
    );
    assert!(body["nextCursor"].is_string());
    let (n, body) = app
        .statements(&format!("{KEYS}?includeTotal=true"), &admin)
        .await;
    assert_eq!(
        (n, &body["total"], &body["totalCapped"]),
        (2, &json!(1005), &json!(false))
    );

    // Cursors continue exactly where page paging would, to the end.
    let (_, first) = app
        .statements(&format!("{KEYS}?pageSize=200"), &admin)
        .await;
    let (_, second) = app
        .statements(&format!("{KEYS}?pageSize=200&page=2"), &admin)
        .await;
    let cursor = first["nextCursor"].as_str().unwrap().to_string();
    let (n, next) = app
        .statements(&format!("{KEYS}?pageSize=200&cursor={cursor}"), &admin)
        .await;
    assert_eq!(n, 2);
    assert_eq!(names(&next), names(&second));
    assert_eq!((&next["page"], &next["total"]), (&json!(2), &json!(1005)));
    let mut seen = 400;
    let mut cursor = next["nextCursor"].as_str().map(String::from);
    while let Some(c) = cursor {
        let (_, page) = app
            .statements(&format!("{KEYS}?pageSize=200&cursor={c}"), &admin)
            .await;
        seen += names(&page).len();
        cursor = page["nextCursor"].as_str().map(String::from);
    }
    assert_eq!(seen, 1005, "every key once");
    // Past the end: the total still comes (a second statement counts it).
    let (n, past) = app.statements(&format!("{KEYS}?page=999"), &admin).await;
    assert_eq!((n, &past["total"]), (3, &json!(1005)));
    // A damaged or foreign cursor is 400.
    for bad in ["%25%25", "eyJ2IjoxfQ"] {
        let res = app.send(get(&format!("{KEYS}?cursor={bad}"), &admin)).await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
    }
}
