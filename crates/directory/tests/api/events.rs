//! Tenant and organization writes emit their domain events in one envelope.

use serde_json::json;
use stoa_testkit::outbox_events_named;

use super::support::*;

#[actix_web::test]
async fn tenant_and_organization_writes_emit_events() {
    let app = start().await;
    let acme = seed_tenant(&app.db, "Acme Corp", "acme.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(post_json(
            "/api/directory/tenants",
            &root,
            json!({"name": "Initech"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let tenant = res.json()["id"].as_str().unwrap().to_string();
    let res = app
        .send(put_json(
            "/api/directory/tenants",
            &root,
            json!({"id": tenant, "name": "Initrode"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(delete(
            &format!("/api/directory/tenants?id={tenant}"),
            &root,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    for (verb, command) in [
        ("created", "create"),
        ("updated", "update"),
        ("deleted", "delete"),
    ] {
        let events = outbox_events_named(&app.db, &format!("directory.tenant.{verb}")).await;
        assert_eq!(events.len(), 1, "{verb}: {events:?}");
        let event = &events[0];
        assert_eq!(event["tenantId"], json!(tenant), "{verb}");
        assert_eq!(event["resourceKind"], "directory.tenant");
        assert_eq!(event["resourceId"], json!(tenant));
        assert_eq!(event["commandId"], format!("directory.tenants.{command}"));
        assert_eq!(event["actor"]["userId"], json!(acme.superadmin));
        assert_eq!(event["payload"], json!({"id": tenant}));
    }

    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &root,
            json!({"name": "Sales", "parentId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let events = outbox_events_named(&app.db, "directory.organization.created").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["tenantId"], json!(acme.tenant_id));
    assert_eq!(events[0]["commandId"], "directory.organizations.create");
}
