//! The product list: filters, search, sorts, keyset cursors, capped totals
//! and its statement count.

use serde_json::{Value, json};

use super::support::*;

fn titles(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["title"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn filters_search_and_sorts_narrow_and_order_the_list() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let branch = child_org(&app.db, &acme, "Branch").await;
    create(
        &app,
        &admin,
        json!({"title": "Banana", "sku": "B-2", "priceAmount": "2", "priceCurrency": "EUR"}),
    )
    .await;
    create(
        &app,
        &admin,
        json!({"title": "Apple", "sku": "A-1", "isActive": false}),
    )
    .await;
    create(&app, &admin, json!({"title": "Cherry", "productType": "bundle", "organizationId": branch, "priceAmount": "3", "priceCurrency": "USD"})).await;
    let (hundred, _) = create(&app, &admin, json!({"title": "100% juice", "sku": "J_1"})).await;

    let list = |query: &str| {
        let app = &app;
        let admin = admin.clone();
        let query = query.to_string();
        async move {
            let res = app.send(get(&format!("{PRODUCTS}?{query}"), &admin)).await;
            assert_eq!(res.status, 200, "{query}: {}", res.text());
            res.json()
        }
    };
    // Default: newest first.
    assert_eq!(
        titles(&list("").await),
        ["100% juice", "Cherry", "Apple", "Banana"]
    );
    assert_eq!(list("").await["total"], 4);
    assert_eq!(
        titles(&list("sortField=title").await),
        ["100% juice", "Apple", "Banana", "Cherry"]
    );
    assert_eq!(
        titles(&list("sortField=sku").await),
        ["Apple", "Banana", "100% juice", "Cherry"]
    );
    assert_eq!(
        titles(&list("sortField=sku&sortDir=desc").await),
        ["Cherry", "100% juice", "Banana", "Apple"]
    );
    assert_eq!(titles(&list("search=AN").await), ["Banana"]);
    assert_eq!(titles(&list("search=a-1").await), ["Apple"]);
    // `%` and `_` are literal in a search.
    assert_eq!(titles(&list("search=100%25").await), ["100% juice"]);
    assert_eq!(titles(&list("search=_").await), ["100% juice"]);
    assert_eq!(titles(&list("isActive=false").await), ["Apple"]);
    assert_eq!(titles(&list("productType=bundle").await), ["Cherry"]);
    assert_eq!(titles(&list("priceCurrency=usd").await), ["Cherry"]);
    assert_eq!(
        titles(&list(&format!("organizationId={branch}")).await),
        ["Cherry"]
    );
    assert_eq!(
        titles(&list(&format!("id={hundred}")).await),
        ["100% juice"]
    );
    let first = list("sortField=title").await;
    assert_eq!(first["items"][2]["price_amount"], "2");
    assert_eq!(first["items"][2]["price_currency"], "EUR");
    // Bad queries: 400 naming the parameter (input errors in the
    // reference's list shape A).
    for bad in [
        "pageSize=0",
        "pageSize=101",
        "sortField=price",
        "isActive=maybe",
        "productType=x",
        "id=nope",
    ] {
        let res = app.send(get(&format!("{PRODUCTS}?{bad}"), &admin)).await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
        let param = bad.split('=').next().unwrap();
        assert!(res.text().contains(param), "{bad}: {}", res.text());
        if !bad.starts_with("pageSize") {
            assert_eq!(res.json()["error"], "Invalid input", "{bad}");
        }
    }
}

#[actix_web::test]
async fn the_list_is_one_statement_with_a_capped_total_and_keyset_cursors() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    insert_products(&app.db, &acme, acme.organization_id, "Item", 1005).await;
    // Some products without SKU, to page across NULLs.
    sql(
        &app.db,
        "UPDATE catalog_products SET sku = NULL WHERE title LIKE 'Item-0001%'",
    )
    .await;

    // Warm the ACL cache: a list is then the session check and one statement.
    app.send(get(&format!("{PRODUCTS}?pageSize=1"), &admin))
        .await;
    let (n, body) = app
        .statements(&format!("{PRODUCTS}?pageSize=50"), &admin)
        .await;
    assert_eq!(n, 2, "product list statements");
    assert_eq!(body["items"].as_array().unwrap().len(), 50);
    assert_eq!(
        (&body["total"], &body["totalCapped"]),
        (&json!(1000), &json!(true))
    );
    assert!(body["nextCursor"].is_string());
    let (n, body) = app
        .statements(&format!("{PRODUCTS}?includeTotal=true&search=item"), &admin)
        .await;
    assert_eq!(
        (n, &body["total"], &body["totalCapped"]),
        (2, &json!(1005), &json!(false))
    );

    // Every order pages by cursor through every product exactly once, in
    // the order page paging shows.
    for order in [
        "sortField=title",
        "sortField=title&sortDir=desc",
        "sortField=sku",
        "sortField=sku&sortDir=desc",
        "sortField=createdAt",
        "sortField=updatedAt&sortDir=desc",
    ] {
        let (_, second) = app
            .statements(&format!("{PRODUCTS}?{order}&pageSize=100&page=2"), &admin)
            .await;
        let (_, first) = app
            .statements(&format!("{PRODUCTS}?{order}&pageSize=100"), &admin)
            .await;
        let mut seen: Vec<String> = titles(&first);
        let mut cursor = first["nextCursor"].as_str().map(String::from);
        let mut pages = 1;
        while let Some(c) = cursor {
            let (n, page) = app
                .statements(
                    &format!("{PRODUCTS}?{order}&pageSize=100&cursor={c}"),
                    &admin,
                )
                .await;
            assert_eq!(n, 2, "{order}: cursor page statements");
            if pages == 1 {
                assert_eq!(titles(&page), titles(&second), "{order}: cursor = page 2");
            }
            seen.extend(titles(&page));
            cursor = page["nextCursor"].as_str().map(String::from);
            pages += 1;
        }
        let unique: std::collections::HashSet<_> = seen.iter().collect();
        assert_eq!(
            (seen.len(), unique.len()),
            (1005, 1005),
            "{order}: every product once"
        );
        // A cursor of one order is refused in another.
        let c = first["nextCursor"].as_str().unwrap();
        let other = if order.contains("title") {
            "sortField=createdAt"
        } else {
            "sortField=title"
        };
        let res = app
            .send(get(&format!("{PRODUCTS}?{other}&cursor={c}"), &admin))
            .await;
        assert_eq!(res.status, 400, "{order} cursor in {other}: {}", res.text());
    }
    // Past the end: the total still comes (a second statement counts it).
    let (n, past) = app
        .statements(&format!("{PRODUCTS}?page=999"), &admin)
        .await;
    assert_eq!((n, &past["total"]), (3, &json!(1005)));
}

#[actix_web::test]
async fn a_kept_list_is_one_statement_and_never_stale_after_a_write() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let other = token_for(&app.db, globex.admin).await;
    let list = format!("{PRODUCTS}?sortField=title");
    let (id, _) = create(&app, &admin, json!({"title": "Anvil"})).await;
    app.send(get("/api/auth/profile", &admin)).await;

    let (n, first) = app.statements(&list, &admin).await;
    assert_eq!(n, 2, "first read: session check and page");
    let (n, again) = app.statements(&list, &admin).await;
    assert_eq!((n, &again), (1, &first), "kept answer: one statement");
    // Another tenant's write keeps it.
    create(&app, &other, json!({"title": "Globex anvil"})).await;
    let (n, _) = app.statements(&list, &admin).await;
    assert_eq!(n, 1, "other tenants' writes keep the answer");

    // Every kind of write is seen by the next read.
    let (bolt, _) = create(&app, &admin, json!({"title": "Bolt"})).await;
    assert_eq!(
        titles(&app.statements(&list, &admin).await.1),
        ["Anvil", "Bolt"]
    );
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{id}"),
            &admin,
            json!({"title": "Axe"}),
        ))
        .await;
    let renamed = res.operation().unwrap();
    assert_eq!(
        titles(&app.statements(&list, &admin).await.1),
        ["Axe", "Bolt"]
    );
    let res = undo(&app, &admin, renamed.undo_token.as_deref().unwrap()).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        titles(&app.statements(&list, &admin).await.1),
        ["Anvil", "Bolt"]
    );
    app.send(delete(&format!("{PRODUCTS}/{bolt}"), &admin))
        .await;
    assert_eq!(titles(&app.statements(&list, &admin).await.1), ["Anvil"]);
    bulk_delete(&app, &admin, &[id]).await;
    run_jobs(&app.db).await;
    // (A stale kept answer costs its check: three statements this time.)
    let (_, empty) = app.statements(&list, &admin).await;
    assert_eq!(titles(&empty).len(), 0, "the job's deletion is seen");

    // A caller who lost the feature is refused, not served the kept page.
    create(&app, &admin, json!({"title": "Chisel"})).await;
    app.send(get(&list, &admin)).await;
    let (n, kept) = app.statements(&list, &admin).await;
    assert_eq!((n, titles(&kept)), (1, vec!["Chisel".to_string()]));
    sql(
        &app.db,
        &format!(
            "UPDATE role_acls SET features = ARRAY['auth.*'] WHERE role_id IN \
             (SELECT role_id FROM user_roles WHERE user_id = '{}')",
            acme.admin
        ),
    )
    .await;
    let res = app.send(get(&list, &admin)).await;
    assert_eq!(res.status, 403, "{}", res.text());
}
