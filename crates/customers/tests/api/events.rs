//! Domain events of deal writes, with tenant and organization in the payload.

use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn deal_writes_emit_their_events() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let sales = pipeline(&app, &admin, "Sales").await;
    let lead = stage(&app, &admin, sales, "Lead").await;
    let won = stage(&app, &admin, sales, "Won").await;
    let id = deal(
        &app,
        &admin,
        json!({"title": "Evented", "pipelineStageId": lead}),
    )
    .await;
    let res = app
        .send(put_json(
            &format!("{DEALS}/{id}"),
            &admin,
            json!({"pipelineStageId": won, "status": "won"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(
        app.send(delete(&format!("{DEALS}/{id}"), &admin))
            .await
            .status,
        200
    );

    let events = stoa_testkit::outbox_events(&app.db).await;
    let named = |name: &str| -> Vec<serde_json::Value> {
        events
            .iter()
            .filter(|e| e["name"] == name)
            .cloned()
            .collect()
    };
    for name in [
        "customers.deal.created",
        "customers.deal.updated",
        "customers.deal.stage_changed",
        "customers.deal.won",
        "customers.deal.deleted",
    ] {
        let found = named(name);
        assert_eq!(found.len(), 1, "{name}: {events:?}");
        let payload = &found[0]["payload"];
        assert_eq!(payload["id"], id.to_string(), "{name}");
        assert_eq!(payload["tenantId"], acme.tenant_id.to_string(), "{name}");
        assert_eq!(
            payload["organizationId"],
            acme.organization_id.to_string(),
            "{name}"
        );
    }
    let moved = &named("customers.deal.stage_changed")[0]["payload"];
    assert_eq!(moved["fromStageId"], lead.to_string());
    assert_eq!(moved["toStageId"], won.to_string());
    assert!(named("customers.deal.lost").is_empty());
}
