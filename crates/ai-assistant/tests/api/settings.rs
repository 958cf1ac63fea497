//! Settings: runtime overrides with their typed codes, stored provider keys
//! (encrypted, never returned), the tenant allowlist.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::json;

use super::support::*;

const SETTINGS: &str = "/api/ai_assistant/settings";

#[actix_web::test]
async fn settings_check_every_typed_code() {
    let app = start_with(config(&[
        ("OPENAI_API_KEY", "k"),
        ("OM_AI_AVAILABLE_PROVIDERS", "openai,anthropic"),
        ("OM_AI_AVAILABLE_MODELS_OPENAI", "gpt-4o"),
        ("AI_RUNTIME_BASEURL_ALLOWLIST", "llm.example.com"),
    ]))
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    for (body, code) in [
        (
            json!({"baseURL": "https://evil.example.org/v1"}),
            "baseurl_not_allowlisted",
        ),
        (json!({"providerId": "ollama"}), "provider_not_allowlisted"),
        (
            json!({"providerId": "openai", "modelId": "gpt-5"}),
            "model_not_allowlisted",
        ),
        (
            json!({"allowedOverrideProviders": ["openai"]}),
            "agent_required",
        ),
        (
            json!({"agentId": "customers.deal_analyzer", "allowedOverrideProviders": ["nope"]}),
            "provider_unknown",
        ),
    ] {
        let res = app.send(put_json(SETTINGS, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        assert_eq!(res.json()["code"], code, "{body}");
    }
    let res = app
        .send(put_json(
            SETTINGS,
            &admin,
            json!({"providerId": "openai", "modelId": "gpt-4o", "baseURL": "https://llm.example.com/v1", "apiKey": "sk-tenant-secret"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(!res.text().contains("sk-tenant-secret"));
    assert_eq!(res.json()["apiKeyConfigured"], true);
    assert_eq!(res.json()["modelId"], "gpt-4o");
    let res = app.send(get(SETTINGS, &admin)).await;
    assert_eq!(res.status, 200);
    assert!(!res.text().contains("sk-tenant-secret"));
    assert_eq!(res.json()["tenantOverride"]["providerId"], "openai");

    let mut conn = app.db.conn().await.unwrap();
    let stored: Option<String> = stoa_ai_assistant::schema::ai_agent_runtime_overrides::table
        .select(stoa_ai_assistant::schema::ai_agent_runtime_overrides::api_key_encrypted)
        .first(&mut *conn)
        .await
        .unwrap();
    let stored = stored.unwrap();
    assert!(stored.starts_with("enc:v2:"), "{stored}");
    assert!(!stored.contains("sk-tenant-secret"));

    let res = app.send(delete(SETTINGS, &admin)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["cleared"], true);
    let res = app.send(delete(SETTINGS, &admin)).await;
    assert_eq!(res.json()["cleared"], false);

    let employee = token_for(&app.db, acme.employee).await;
    assert_eq!(
        app.send(put_json(SETTINGS, &employee, json!({})))
            .await
            .status,
        403
    );
    assert_eq!(app.send(get(SETTINGS, &employee)).await.status, 200);
}

#[actix_web::test]
async fn the_tenant_allowlist_stays_inside_the_environments() {
    let app = start_with(config(&[
        ("OPENAI_API_KEY", "k"),
        ("OM_AI_AVAILABLE_PROVIDERS", "openai"),
        ("OM_AI_AVAILABLE_MODELS_OPENAI", "gpt-4o,gpt-5"),
    ]))
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let url = format!("{SETTINGS}/allowlist");
    let res = app
        .send(put_json(
            &url,
            &admin,
            json!({"allowedProviders": ["anthropic"]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["code"], "provider_not_in_env_allowlist");
    let res = app
        .send(put_json(&url, &admin, json!({"allowedProviders": ["openai"], "allowedModelsByProvider": {"openai": ["gpt-3"]}})))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["code"], "model_not_in_env_allowlist");
    let res = app
        .send(put_json(&url, &admin, json!({"allowedProviders": ["openai"], "allowedModelsByProvider": {"openai": ["gpt-5"]}})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(get(
            "/api/ai_assistant/ai/agents/customers.deal_analyzer/models",
            &admin,
        ))
        .await;
    let models: Vec<String> = res.json()["providers"][0]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["gpt-5"]);
    let res = app.send(delete(&url, &admin)).await;
    assert_eq!(res.json()["cleared"], true);
}
