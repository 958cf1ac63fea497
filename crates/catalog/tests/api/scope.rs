//! Tenant isolation and organization scope, from the attacker's side.

use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn another_tenants_products_do_not_exist_for_the_caller() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let acme_admin = token_for(&app.db, acme.admin).await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    let (id, _) = create(
        &app,
        &acme_admin,
        json!({"title": "Acme secret", "sku": "S-1"}),
    )
    .await;

    assert_eq!(product(&app, &globex_admin, id).await, None);
    let list = app.send(get(PRODUCTS, &globex_admin)).await.json();
    assert_eq!(list["items"], json!([]));
    let list = app
        .send(get(&format!("{PRODUCTS}?id={id}"), &globex_admin))
        .await
        .json();
    assert_eq!(list["total"], 0);
    for res in [
        app.send(put_json(
            &format!("{PRODUCTS}/{id}"),
            &globex_admin,
            json!({"title": "pwned"}),
        ))
        .await,
        app.send(put_json(
            PRODUCTS,
            &globex_admin,
            json!({"id": id, "title": "pwned"}),
        ))
        .await,
        app.send(delete(&format!("{PRODUCTS}/{id}"), &globex_admin))
            .await,
        app.send(delete(&format!("{PRODUCTS}?id={id}"), &globex_admin))
            .await,
    ] {
        assert_eq!(res.status, 404, "{}", res.text());
    }
    // A bulk delete naming it fails on it, deleting nothing.
    let job_id = bulk_delete(&app, &globex_admin, &[id]).await;
    run_jobs(&app.db).await;
    let job = job(&app, &globex_admin, job_id).await;
    assert_eq!(job["status"], "failed", "{job}");
    assert!(
        job["errorMessage"]
            .as_str()
            .unwrap()
            .contains(&id.to_string()),
        "{job}"
    );
    assert_eq!(
        product(&app, &acme_admin, id).await.unwrap()["title"],
        "Acme secret"
    );
}

#[actix_web::test]
async fn an_admin_limited_to_some_organizations_stays_inside_them() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let east = child_org(&app.db, &acme, "East").await;
    let west = child_org(&app.db, &acme, "West").await;
    let limited = user_with_features(
        &app.db,
        &acme,
        "east@acme.com",
        &["catalog.*", "progress.*", "audit_logs.*"],
        Some(vec![east]),
        Some(east),
    )
    .await;
    let limited = token_for(&app.db, limited).await;
    let (west_product, _) = create(
        &app,
        &admin,
        json!({"title": "West lamp", "organizationId": west}),
    )
    .await;
    let (root_product, _) = create(&app, &admin, json!({"title": "Root lamp"})).await;

    // Creates land in its own organization by default; others are 403.
    let (own, _) = create(&app, &limited, json!({"title": "East lamp"})).await;
    assert_eq!(
        product(&app, &admin, own).await.unwrap()["organization_id"],
        east.to_string()
    );
    for org in [west, acme.organization_id] {
        let res = app
            .send(post_json(
                PRODUCTS,
                &limited,
                json!({"title": "x", "organizationId": org}),
            ))
            .await;
        assert_eq!(res.status, 403, "{}", res.text());
        assert_eq!(res.json()["code"], "organization_out_of_scope");
    }
    // It sees only its organization's products.
    let list = app.send(get(PRODUCTS, &limited)).await.json();
    let titles: Vec<_> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["title"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(titles, ["East lamp"]);
    // Products of other organizations do not exist for it (issue 49): 404
    // as an unknown id, on every by-id read and write, naming neither the
    // product's organization nor anything else of it, and unchanged after.
    let unknown = app
        .send(get(
            &format!("{PRODUCTS}/{}", uuid::Uuid::new_v4()),
            &limited,
        ))
        .await;
    assert_eq!(unknown.status, 404, "{}", unknown.text());
    for target in [west_product, root_product] {
        for res in [
            app.send(get(&format!("{PRODUCTS}/{target}"), &limited))
                .await,
            app.send(put_json(
                &format!("{PRODUCTS}/{target}"),
                &limited,
                json!({"title": "pwned"}),
            ))
            .await,
            app.send(put_json(
                PRODUCTS,
                &limited,
                json!({"id": target, "title": "pwned"}),
            ))
            .await,
            app.send(delete(&format!("{PRODUCTS}/{target}"), &limited))
                .await,
            app.send(delete(&format!("{PRODUCTS}?id={target}"), &limited))
                .await,
        ] {
            assert_eq!(res.status, 404, "{}", res.text());
            assert_eq!(res.json(), unknown.json());
        }
    }
    assert_eq!(
        product(&app, &admin, west_product).await.unwrap()["title"],
        "West lamp"
    );
    assert_eq!(
        product(&app, &admin, root_product).await.unwrap()["title"],
        "Root lamp"
    );
    // Moving its own product out of its organizations: 403.
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{own}"),
            &limited,
            json!({"organizationId": west}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    // An unrestricted admin may move it.
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{own}"),
            &admin,
            json!({"organizationId": west}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        product(&app, &admin, own).await.unwrap()["organization_id"],
        west.to_string()
    );
    // A bulk delete reaching outside stops at the first such product,
    // naming it as not found (not its organization).
    let (east_two, _) = create(&app, &limited, json!({"title": "East two"})).await;
    let job_id = bulk_delete(&app, &limited, &[east_two, west_product]).await;
    run_jobs(&app.db).await;
    let job = job(&app, &limited, job_id).await;
    assert_eq!(job["status"], "failed", "{job}");
    let error = job["errorMessage"].as_str().unwrap();
    assert_eq!(error, format!("Product {west_product} not found"), "{job}");
    assert!(!job.to_string().contains(&west.to_string()), "{job}");
    // Same unit: nothing of it was deleted.
    assert!(product(&app, &admin, east_two).await.is_some());
    assert!(product(&app, &admin, west_product).await.is_some());
    assert!(product(&app, &admin, root_product).await.is_some());
}
