//! Product CRUD through HTTP: both styles, every documented status, the
//! optimistic lock, SKU uniqueness, money input, guards and events.

use serde_json::json;
use stoa_testkit::requests::bearer;

use super::support::*;

#[actix_web::test]
async fn a_product_is_created_read_updated_and_deleted_in_both_styles() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    let (id, res) = create(
        &app,
        &admin,
        json!({"title": "  Oak desk ", "sku": "DESK-1", "handle": "Oak-Desk", "priceAmount": "199.90",
               "priceCurrency": "eur", "productType": "configurable", "description": "Solid oak",
               "unknownKey": "ignored"}),
    )
    .await;
    let op = res.operation().expect("x-om-operation");
    assert_eq!(op.command_id, "catalog.products.create");
    assert_eq!(op.resource_kind.as_deref(), Some("catalog.product"));
    let item = product(&app, &admin, id).await.unwrap();
    assert_eq!(item["title"], "Oak desk");
    assert_eq!(item["sku"], "DESK-1");
    assert_eq!(item["handle"], "oak-desk");
    assert_eq!(item["price_amount"], "199.9");
    assert_eq!(item["price_currency"], "EUR");
    assert_eq!(item["product_type"], "configurable");
    assert_eq!(item["is_active"], true);
    assert_eq!(item["organization_id"], acme.organization_id.to_string());
    assert_eq!(item["tenant_id"], acme.tenant_id.to_string());

    // Path form: tri-state fields (null clears, absent keeps).
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{id}"),
            &admin,
            json!({"title": "Oak desk XL", "description": null, "isActive": false}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true}));
    assert_eq!(
        res.operation().unwrap().command_id,
        "catalog.products.update"
    );
    let item = product(&app, &admin, id).await.unwrap();
    assert_eq!(
        (
            &item["title"],
            &item["description"],
            &item["is_active"],
            &item["sku"]
        ),
        (
            &json!("Oak desk XL"),
            &json!(null),
            &json!(false),
            &json!("DESK-1")
        )
    );

    // Collection form: the id in the body, or in the query.
    let res = app
        .send(put_json(
            PRODUCTS,
            &admin,
            json!({"id": id, "priceAmount": 250}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}?id={id}"),
            &admin,
            json!({"subtitle": "Big"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let item = product(&app, &admin, id).await.unwrap();
    assert_eq!(
        (&item["price_amount"], &item["subtitle"]),
        (&json!("250"), &json!("Big"))
    );

    // Delete: collection form (query), then the path form answers 404.
    let res = app
        .send(delete(&format!("{PRODUCTS}?id={id}"), &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true}));
    assert_eq!(
        res.operation().unwrap().command_id,
        "catalog.products.delete"
    );
    assert_eq!(product(&app, &admin, id).await, None);
    assert_eq!(product_count(&app.db).await, 0, "deleted for good");
    let res = app.send(delete(&format!("{PRODUCTS}/{id}"), &admin)).await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "Product not found");

    // Path delete and body-id delete.
    let (a, _) = create(&app, &admin, json!({"title": "A"})).await;
    let (b, _) = create(&app, &admin, json!({"title": "B"})).await;
    let res = app.send(delete(&format!("{PRODUCTS}/{a}"), &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let req = bearer(
        actix_web::test::TestRequest::delete()
            .uri(PRODUCTS)
            .set_json(json!({"id": b})),
        &admin,
    );
    let res = app.send(req).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(product_count(&app.db).await, 0);
}

#[actix_web::test]
async fn bad_input_is_a_400_naming_the_field_and_changes_nothing() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let cases = [
        (
            json!({"title": "x", "priceAmount": "12,50", "priceCurrency": "EUR"}),
            "priceAmount",
        ),
        (
            json!({"title": "x", "priceAmount": "1.23456", "priceCurrency": "EUR"}),
            "priceAmount",
        ),
        (
            json!({"title": "x", "priceAmount": "123456789012345", "priceCurrency": "EUR"}),
            "priceAmount",
        ),
        (
            json!({"title": "x", "priceAmount": "-1", "priceCurrency": "EUR"}),
            "priceAmount",
        ),
        (json!({"title": "x", "priceAmount": "10"}), "priceCurrency"),
        (
            json!({"title": "x", "priceAmount": "10", "priceCurrency": "EURO"}),
            "priceCurrency",
        ),
        (json!({"title": ""}), "title"),
        (json!({"sku": "A"}), "title"),
        (json!({"title": "x", "sku": "has space"}), "sku"),
        (json!({"title": "x", "handle": "a/b"}), "handle"),
        (
            json!({"title": "x", "productType": "service"}),
            "productType",
        ),
        (
            json!({"title": "x", "organizationId": "nope"}),
            "organizationId",
        ),
        (json!({"title": "x", "cf_color": "red"}), "cf_color"),
    ];
    for (body, field) in cases {
        let res = app.send(post_json(PRODUCTS, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        let json = res.json();
        assert_eq!(json["error"], "Invalid input", "{body}: {json}");
        let named = json["details"]
            .as_array()
            .unwrap()
            .iter()
            .any(|issue| issue["path"][0] == field);
        assert!(named, "{body}: {field} not named in {json}");
    }
    assert_eq!(product_count(&app.db).await, 0);

    let (id, _) = create(&app, &admin, json!({"title": "Lamp"})).await;
    // An amount on a product without a currency (the merged state) is refused.
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{id}"),
            &admin,
            json!({"priceAmount": "5"}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["details"][0]["path"], json!(["priceCurrency"]));
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{id}"),
            &admin,
            json!({"priceAmount": "abc"}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["details"][0]["path"], json!(["priceAmount"]));
    // Malformed and missing ids.
    for path in [format!("{PRODUCTS}/nope"), format!("{PRODUCTS}?id=nope")] {
        let res = app
            .send(put_json(&path, &admin, json!({"title": "y"})))
            .await;
        assert_eq!(res.status, 400, "{path}: {}", res.text());
        let res = app.send(delete(&path, &admin)).await;
        assert_eq!(res.status, 400, "{path}: {}", res.text());
    }
    let res = app.send(get(&format!("{PRODUCTS}/nope"), &admin)).await;
    assert_eq!(res.status, 400);
    let res = app.send(delete(PRODUCTS, &admin)).await;
    assert_eq!(res.status, 400);
    assert!(
        res.json()["error"]
            .as_str()
            .unwrap()
            .contains("Product id is required.")
    );
    let res = app
        .send(put_json(PRODUCTS, &admin, json!({"title": "y"})))
        .await;
    assert_eq!(res.status, 400);
    // An unknown organization (or another tenant's) is 400 naming the field.
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let res = app
        .send(post_json(
            PRODUCTS,
            &admin,
            json!({"title": "x", "organizationId": globex.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["details"][0]["path"], json!(["organizationId"]));
    let item = product(&app, &admin, id).await.unwrap();
    assert_eq!(
        (&item["title"], &item["price_amount"]),
        (&json!("Lamp"), &json!(null))
    );
    assert_eq!(product_count(&app.db).await, 1);
}

#[actix_web::test]
async fn skus_and_handles_are_unique_per_tenant() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let other = token_for(&app.db, globex.admin).await;
    let branch = child_org(&app.db, &acme, "Branch").await;
    create(
        &app,
        &admin,
        json!({"title": "A", "sku": "SKU-1", "handle": "a"}),
    )
    .await;
    // Another organization of the same tenant: still taken.
    let res = app
        .send(post_json(
            PRODUCTS,
            &admin,
            json!({"title": "B", "sku": "SKU-1", "organizationId": branch}),
        ))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(res.json()["code"], "sku_taken");
    let res = app
        .send(post_json(
            PRODUCTS,
            &admin,
            json!({"title": "B", "handle": "A"}),
        ))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(res.json()["code"], "handle_taken");
    // Another tenant may use it.
    create(
        &app,
        &other,
        json!({"title": "A", "sku": "SKU-1", "handle": "a"}),
    )
    .await;
    // An update onto a taken SKU is 409 too, and changes nothing.
    let (b, _) = create(&app, &admin, json!({"title": "B", "sku": "SKU-2"})).await;
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{b}"),
            &admin,
            json!({"sku": "SKU-1"}),
        ))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(product(&app, &admin, b).await.unwrap()["sku"], "SKU-2");
}

#[actix_web::test]
async fn the_optimistic_lock_header_refuses_an_update_over_a_newer_change() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (id, _) = create(&app, &admin, json!({"title": "Chair"})).await;
    let read = product(&app, &admin, id).await.unwrap();
    let seen = read["updated_at"].as_str().unwrap().to_string();
    let with_lock = |title: &str, at: &str| {
        put_json(&format!("{PRODUCTS}/{id}"), &admin, json!({"title": title})).insert_header((
            "x-om-ext-optimistic-lock-expected-updated-at",
            at.to_string(),
        ))
    };
    let res = app.send(with_lock("Chair 2", &seen)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    // The same (now stale) version again: 409, nothing written.
    let res = app.send(with_lock("Chair 3", &seen)).await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(res.json()["code"], "optimistic_lock_conflict");
    let res = app.send(with_lock("Chair 3", "yesterday")).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(product(&app, &admin, id).await.unwrap()["title"], "Chair 2");
}

#[actix_web::test]
async fn callers_without_the_features_are_refused() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (id, _) = create(&app, &admin, json!({"title": "Mug"})).await;
    let viewer = user_with_features(
        &app.db,
        &acme,
        "viewer@acme.com",
        &["catalog.products.view"],
        None,
        None,
    )
    .await;
    let nobody = user_with_features(&app.db, &acme, "nobody@acme.com", &[], None, None).await;
    let viewer = token_for(&app.db, viewer).await;
    let nobody = token_for(&app.db, nobody).await;
    assert!(product(&app, &viewer, id).await.is_some());
    for res in [
        app.send(post_json(PRODUCTS, &viewer, json!({"title": "x"})))
            .await,
        app.send(put_json(
            &format!("{PRODUCTS}/{id}"),
            &viewer,
            json!({"title": "x"}),
        ))
        .await,
        app.send(delete(&format!("{PRODUCTS}/{id}"), &viewer)).await,
        app.send(post_json(
            BULK,
            &viewer,
            json!({"confirm": true, "ids": [id], "scope": "selected"}),
        ))
        .await,
        app.send(get(PRODUCTS, &nobody)).await,
        app.send(get(&format!("{PRODUCTS}/{id}"), &nobody)).await,
    ] {
        assert_eq!(res.status, 403, "{}", res.text());
    }
    let res = app
        .send(actix_web::test::TestRequest::get().uri(PRODUCTS))
        .await;
    assert_eq!(res.status, 401);
    assert_eq!(product(&app, &admin, id).await.unwrap()["title"], "Mug");
    assert_eq!(product_count(&app.db).await, 1);
}

#[actix_web::test]
async fn write_guards_refuse_product_writes_and_nothing_is_stored() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            PRODUCTS,
            &admin,
            json!({"title": "Protected vase"}),
        ))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert_eq!(res.json()["code"], "guard_refused");
    assert_eq!(res.json()["guard"], "test.protected_titles");
    assert_eq!(product_count(&app.db).await, 0);
    let (id, _) = create(&app, &admin, json!({"title": "Vase"})).await;
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{id}"),
            &admin,
            json!({"title": "Protected vase"}),
        ))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert_eq!(product(&app, &admin, id).await.unwrap()["title"], "Vase");
}

#[actix_web::test]
async fn every_write_emits_its_event_with_tenant_and_organization() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let branch = child_org(&app.db, &acme, "Branch").await;
    let (id, _) = create(
        &app,
        &admin,
        json!({"title": "Shelf", "sku": "SH-1", "organizationId": branch}),
    )
    .await;
    app.send(put_json(
        &format!("{PRODUCTS}/{id}"),
        &admin,
        json!({"title": "Shelf 2"}),
    ))
    .await;
    app.send(delete(&format!("{PRODUCTS}/{id}"), &admin)).await;
    let events: Vec<_> = stoa_testkit::outbox_events(&app.db)
        .await
        .into_iter()
        .filter(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("catalog."))
        })
        .collect();
    let names: Vec<_> = events.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "catalog.product.created",
            "catalog.product.updated",
            "catalog.product.deleted"
        ]
    );
    for event in &events {
        assert_eq!(event["tenantId"], acme.tenant_id.to_string(), "{event}");
        // The envelope is the actor's scope; the payload names the product's.
        assert_eq!(
            event["organizationId"],
            acme.organization_id.to_string(),
            "{event}"
        );
        assert_eq!(event["payload"]["id"], id.to_string());
        assert_eq!(event["payload"]["tenantId"], acme.tenant_id.to_string());
        assert_eq!(event["payload"]["organizationId"], branch.to_string());
        assert_eq!(event["resourceKind"], "catalog.product");
        assert_eq!(event["actor"]["userId"], acme.admin.to_string());
    }
    assert_eq!(events[1]["payload"]["title"], "Shelf 2");
}
