use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn tenant_lookup_reveals_only_id_and_name() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let res = app
        .get(&format!(
            "/api/directory/tenants/lookup?tenantId={}",
            acme.tenant_id
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(
        res.json(),
        json!({"ok": true, "tenant": {"id": acme.tenant_id, "name": "Acme Corp"}})
    );
    let res = app
        .get(&format!(
            "/api/directory/tenants/lookup?tenant={}",
            acme.tenant_id
        ))
        .await;
    assert_eq!(res.status, 200);
    let res = app.get("/api/directory/tenants/lookup?tenantId=nope").await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.json(),
        json!({"ok": false, "error": "Invalid tenant id."})
    );
    assert_eq!(app.get("/api/directory/tenants/lookup").await.status, 400);
    let res = app
        .get(&format!(
            "/api/directory/tenants/lookup?tenantId={}",
            uuid::Uuid::new_v4()
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(
        res.json(),
        json!({"ok": false, "error": "Tenant not found."})
    );
}

#[actix_web::test]
async fn organization_lookup_by_slug() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let res = app
        .get("/api/directory/organizations/lookup?slug=Acme-Corp")
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(
        res.json(),
        json!({"ok": true, "organization": {"id": acme.organization_id, "name": "Acme Corp", "slug": "acme-corp"}})
    );
    let res = app.get("/api/directory/organizations/lookup?slug=").await;
    assert_eq!(res.json(), json!({"ok": false, "error": "Invalid slug."}));
    let res = app
        .get(&format!(
            "/api/directory/organizations/lookup?slug={}",
            "a".repeat(151)
        ))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .get("/api/directory/organizations/lookup?slug=nope")
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(
        res.json(),
        json!({"ok": false, "error": "Organization not found."})
    );
}
