//! One timestamp format (issue 50): every timestamp of every JSON body is
//! UTC with three fraction digits and `Z` (`2026-01-01T00:00:00.000Z`), as
//! the reference writes them. Seeds records of several modules through the
//! API, then walks the answers of their list and read endpoints.

use std::sync::Arc;

use serde_json::{Value, json};
use stoa_auth::AuthConfig;
use stoa_auth::testing::{seed_tenant_with, token_for};
use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;
use stoa_testkit::requests::{bearer, get, post_json};
use stoa_testkit::{Multipart, assert_timestamps, is_canonical_timestamp};

/// Every module, mounted as the server mounts them.
fn everything(db: &Db) -> ApiConfigurator {
    let configurators = stoa_server::configurators(
        &stoa_server::test_services(db).unwrap(),
        AuthConfig::for_tests(),
    )
    .unwrap();
    Arc::new(move |cfg| {
        for configure in &configurators {
            configure(cfg);
        }
    })
}

fn created(what: &str, res: &stoa_testkit::TestResponse) -> Value {
    assert!(
        res.status.is_success(),
        "{what}: {} {}",
        res.status,
        res.text()
    );
    let body = res.json();
    assert_timestamps(what, &body);
    body
}

#[actix_web::test]
async fn every_timestamp_of_the_modules_answers_has_three_fraction_digits_and_z() {
    let app = stoa_testkit::app().module_with(everything).start().await;
    let registry = stoa_server::registry().unwrap();
    let acme = seed_tenant_with(&app.db, &registry, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.superadmin).await;

    // Records of several modules, written through the API.
    let deal = created(
        "deal",
        &app.send(post_json(
            "/api/customers/deals",
            &admin,
            json!({"title": "Big order", "expectedCloseAt": "2026-12-31",
                   "ownerUserId": acme.admin}),
        ))
        .await,
    );
    let deal_id = deal["id"].as_str().unwrap().to_string();
    created(
        "rule",
        &app.send(post_json(
            "/api/business_rules/rules",
            &admin,
            json!({"ruleId": "stamps", "ruleName": "Stamps", "ruleType": "ACTION",
                   "entityType": "customers.deal", "eventType": "updated",
                   "conditionExpression": {"field": "title", "operator": "=", "value": "x"},
                   "successActions": [{"type": "LOG", "config": {"message": "m"}}],
                   "effectiveFrom": "2026-01-01", "effectiveTo": "2099-01-01T00:00:00Z"}),
        ))
        .await,
    );
    created(
        "product",
        &app.send(post_json(
            "/api/catalog/products",
            &admin,
            json!({"title": "Oak desk"}),
        ))
        .await,
    );
    created(
        "API key",
        &app.send(post_json(
            "/api/api_keys/keys",
            &admin,
            json!({"name": "k"}),
        ))
        .await,
    );
    created(
        "conversation",
        &app.send(post_json(
            "/api/ai_assistant/ai/conversations",
            &admin,
            json!({"agentId": "customers.deal_analyzer", "conversationId": "c-1", "title": "First"}),
        ))
        .await,
    );
    let upload = Multipart::new()
        .text("entityId", "customers:customer_deal")
        .text("recordId", &deal_id)
        .file("file", "notes.txt", "text/plain", b"hello");
    created(
        "attachment",
        &app.send(bearer(upload.post("/api/attachments"), &admin))
            .await,
    );
    let job = created(
        "bulk owner job",
        &app.send(post_json(
            "/api/customers/deals/bulk-update-owner",
            &admin,
            json!({"ids": [deal_id], "ownerUserId": acme.employee}),
        ))
        .await,
    );
    let job_id = job["progressJobId"].as_str().unwrap().to_string();

    let reads = [
        "/api/auth/profile".to_string(),
        "/api/auth/users".to_string(),
        "/api/auth/roles".to_string(),
        "/api/customers/deals".to_string(),
        format!("/api/customers/deals/{deal_id}"),
        "/api/customers/pipelines".to_string(),
        "/api/business_rules/rules".to_string(),
        "/api/catalog/products".to_string(),
        "/api/api_keys/keys".to_string(),
        "/api/audit_logs/audit-logs/actions".to_string(),
        "/api/audit_logs/audit-logs/access".to_string(),
        format!("/api/attachments?entityId=customers:customer_deal&recordId={deal_id}"),
        "/api/attachments/library".to_string(),
        "/api/ai_assistant/ai/conversations".to_string(),
        "/api/ai_assistant/ai/conversations/c-1".to_string(),
        "/api/progress/jobs?includeCompleted=true".to_string(),
        format!("/api/progress/jobs/{job_id}"),
        "/api/directory/tenants".to_string(),
        "/api/directory/organizations?view=manage".to_string(),
        "/api/auth/sidebar/preferences".to_string(),
    ];
    let mut seen = 0;
    for path in &reads {
        let res = app.send(get(path, &admin)).await;
        assert_eq!(res.status, 200, "{path}: {}", res.text());
        let body = res.json();
        assert_timestamps(path, &body);
        seen += count_timestamps(&body);
    }
    // The walk saw the timestamps it checks (createdAt of every item, the
    // action log's snapshots, ...), not only empty lists.
    assert!(seen > 50, "only {seen} timestamps seen");
    let deal = app
        .send(get(&format!("/api/customers/deals/{deal_id}"), &admin))
        .await
        .json();
    assert_eq!(deal["deal"]["expectedCloseAt"], "2026-12-31T00:00:00.000Z");
    let actions = app
        .send(get("/api/audit_logs/audit-logs/actions", &admin))
        .await
        .json();
    let snapshots = actions["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["snapshotAfter"].is_object())
        .count();
    assert!(snapshots > 0, "{actions}");
}

fn count_timestamps(body: &Value) -> usize {
    match body {
        Value::String(s) => usize::from(is_canonical_timestamp(s)),
        Value::Array(items) => items.iter().map(count_timestamps).sum(),
        Value::Object(map) => map.values().map(count_timestamps).sum(),
        _ => 0,
    }
}
