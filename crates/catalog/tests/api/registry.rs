//! What the module declares for others (features, defaults, slots) and the
//! demo-data seeding.

use stoa_acl::slots::FieldKind;

use super::support::*;

#[test]
fn the_module_declares_its_slots_for_dashboards_and_rules() {
    let registry = registry();
    registry.check_slots().unwrap();
    let source = registry.analytics_source("catalog:products").unwrap();
    assert_eq!(source.tenant_column, "p.tenant_id");
    assert_eq!(source.organization_column, Some("p.organization_id"));
    assert!(
        source
            .fields
            .iter()
            .any(|f| f.name == "priceAmount" && f.kind == FieldKind::Number)
    );
    assert!(
        registry
            .widgets()
            .iter()
            .any(|w| w.id == "catalog.dashboard.newProducts")
    );
    let rules = registry.rule_entity("catalog.product").unwrap();
    assert_eq!(
        rules.events,
        [
            "catalog.product.created",
            "catalog.product.updated",
            "catalog.product.deleted"
        ]
    );
}

#[actix_web::test]
async fn demo_products_are_seeded_in_batches_and_twice_without_collisions() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let mut conn = app.db.conn().await.unwrap();
    for _ in 0..2 {
        let n = stoa_catalog::seed::demo_products(
            &mut conn,
            acme.tenant_id,
            acme.organization_id,
            stoa_catalog::seed::BATCH + 7,
            false,
        )
        .await
        .unwrap();
        assert_eq!(n, stoa_catalog::seed::BATCH + 7);
    }
    drop(conn);
    assert_eq!(
        product_count(&app.db).await,
        2 * (stoa_catalog::seed::BATCH + 7)
    );
    // They are ordinary products: listed, with a price and a currency.
    let page = app
        .send(get(&format!("{PRODUCTS}?pageSize=1&sortField=sku"), &admin))
        .await
        .json();
    assert_eq!(page["totalCapped"], true);
    assert!(page["items"][0]["price_amount"].is_string(), "{page}");
    assert!(
        page["items"][0]["sku"]
            .as_str()
            .unwrap()
            .starts_with("DEMO")
    );
}
