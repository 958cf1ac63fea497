//! Undo and redo of product writes, and what they refuse: a product changed
//! since, a demoted caller, a caller outside the product's organization.

use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn create_update_and_delete_are_undone_and_redone_with_the_same_id() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    let (id, res) = create(
        &app,
        &admin,
        json!({"title": "Desk", "sku": "D-1", "priceAmount": "10.5", "priceCurrency": "EUR"}),
    )
    .await;
    let created = res.operation().unwrap();
    let original = product(&app, &admin, id).await.unwrap();

    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{id}"),
            &admin,
            json!({"title": "Desk 2", "priceAmount": null}),
        ))
        .await;
    let updated = res.operation().unwrap();
    let res = undo(&app, &admin, updated.undo_token.as_deref().unwrap()).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let item = product(&app, &admin, id).await.unwrap();
    assert_eq!(
        (&item["title"], &item["price_amount"]),
        (&json!("Desk"), &json!("10.5"))
    );

    let res = app.send(delete(&format!("{PRODUCTS}/{id}"), &admin)).await;
    let deleted = res.operation().unwrap();
    assert_eq!(product(&app, &admin, id).await, None);
    let res = undo(&app, &admin, deleted.undo_token.as_deref().unwrap()).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let back = product(&app, &admin, id).await.unwrap();
    assert_eq!(
        back["created_at"], original["created_at"],
        "restored as it was"
    );
    assert_eq!(
        (&back["sku"], &back["title"]),
        (&json!("D-1"), &json!("Desk"))
    );
    // Redo deletes it again.
    let res = redo(&app, &admin, &deleted.id.to_string()).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(product(&app, &admin, id).await, None);
    let res = undo(&app, &admin, deleted.undo_token.as_deref().unwrap()).await;
    assert_ne!(res.status, 500, "{}", res.text());

    // Undo of the create removes a product created anew.
    let (other, res) = create(&app, &admin, json!({"title": "Lamp"})).await;
    let res = undo(
        &app,
        &admin,
        res.operation().unwrap().undo_token.as_deref().unwrap(),
    )
    .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(product(&app, &admin, other).await, None);
    let _ = created;
}

#[actix_web::test]
async fn undo_refuses_a_changed_product_and_a_taken_sku() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (id, _) = create(&app, &admin, json!({"title": "Chair", "sku": "C-1"})).await;
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{id}"),
            &admin,
            json!({"title": "Chair 2"}),
        ))
        .await;
    let first = res.operation().unwrap();
    // Someone else changes it after.
    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(put_json(
            &format!("{PRODUCTS}/{id}"),
            &employee,
            json!({"title": "Chair 3"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = undo(&app, &admin, first.undo_token.as_deref().unwrap()).await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(product(&app, &admin, id).await.unwrap()["title"], "Chair 3");

    // A deleted product whose SKU was taken meanwhile cannot come back: 409.
    let res = app.send(delete(&format!("{PRODUCTS}/{id}"), &admin)).await;
    let deleted = res.operation().unwrap();
    create(&app, &admin, json!({"title": "New chair", "sku": "C-1"})).await;
    let res = undo(&app, &admin, deleted.undo_token.as_deref().unwrap()).await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(product(&app, &admin, id).await, None);
}

#[actix_web::test]
async fn a_demoted_caller_cannot_replay_an_old_entry() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let user = user_with_features(
        &app.db,
        &acme,
        "clerk@acme.com",
        &[
            "catalog.products.view",
            "catalog.products.manage",
            "audit_logs.undo_self",
            "audit_logs.view_self",
        ],
        None,
        None,
    )
    .await;
    let clerk = token_for(&app.db, user).await;
    let (id, _) = create(&app, &clerk, json!({"title": "Mug"})).await;
    let res = app.send(delete(&format!("{PRODUCTS}/{id}"), &clerk)).await;
    let deleted = res.operation().unwrap();
    // Demoted: still may undo its own actions, no longer manage products.
    sql(
        &app.db,
        &format!(
            "UPDATE role_acls SET features = ARRAY['catalog.products.view','audit_logs.undo_self'] \
             WHERE role_id IN (SELECT role_id FROM user_roles WHERE user_id = '{user}')"
        ),
    )
    .await;
    let clerk = token_for(&app.db, user).await;
    let res = undo(&app, &clerk, deleted.undo_token.as_deref().unwrap()).await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(product_count(&app.db).await, 0);
}

#[actix_web::test]
async fn undo_checks_the_organization_scope_of_the_caller_now() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let east = child_org(&app.db, &acme, "East").await;
    let west = child_org(&app.db, &acme, "West").await;
    let user = user_with_features(
        &app.db,
        &acme,
        "east@acme.com",
        &["catalog.*", "audit_logs.*"],
        None,
        Some(east),
    )
    .await;
    let token = token_for(&app.db, user).await;
    let (id, _) = create(
        &app,
        &token,
        json!({"title": "Lamp", "organizationId": west}),
    )
    .await;
    let res = app.send(delete(&format!("{PRODUCTS}/{id}"), &token)).await;
    let deleted = res.operation().unwrap();
    // Now limited to East: a West product does not exist for it any more
    // (404, `AuthContext::require_writable`), so it cannot be put back.
    sql(
        &app.db,
        &format!(
            "UPDATE role_acls SET organizations = ARRAY['{east}']::uuid[] \
             WHERE role_id IN (SELECT role_id FROM user_roles WHERE user_id = '{user}')"
        ),
    )
    .await;
    let token = token_for(&app.db, user).await;
    let res = undo(&app, &token, deleted.undo_token.as_deref().unwrap()).await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(product_count(&app.db).await, 0);
}
