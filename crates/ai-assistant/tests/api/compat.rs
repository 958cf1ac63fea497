//! Issue 50 ("Compatibility, round 3"), the assistant's part: tool inputs
//! as the reference's tool definitions, agents listed by every required
//! feature, prompt overrides in the system prompt, a runtime base URL as
//! the turn's provider, the validation answers, the keys and the settings'
//! effective allowlist and resolved default (against the fake providers).

use std::time::Duration;

use serde_json::{Value, json};
use stoa_testkit::FakeUpstream;
use uuid::Uuid;

use super::chat::{chat_body, openai, text_answer};
use super::support::*;

const AGENTS: &str = "/api/ai_assistant/ai/agents";

fn stage_move(deal: Uuid, args: Value) -> Value {
    let mut args = args;
    args["dealId"] = json!(deal);
    json!({"toolName": "customers.update_deal_stage", "args": args})
}

async fn confirm<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    action: &str,
) -> Value {
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            token,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

// ------------------------------------------------------------ tool inputs

#[actix_web::test]
async fn update_deal_stage_takes_the_reference_input() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, lead, won) = deal_with_stages(&app, &admin).await;

    // `toPipelineStageId`: the card shows the stage's id and label.
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            stage_move(deal, json!({"toPipelineStageId": won})),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["result"]["status"], "pending-confirmation", "{body}");
    assert_eq!(
        body["pendingAction"]["fieldDiff"],
        json!([
            {"field": "pipelineStage", "before": "Lead", "after": "Won"},
            {"field": "pipelineStageId", "before": lead.to_string(), "after": won.to_string()}
        ])
    );
    let action = body["result"]["pendingActionId"].as_str().unwrap();
    let confirmed = confirm(&app, &admin, action).await;
    assert_eq!(confirmed["ok"], true, "{confirmed}");
    assert_eq!(stage_of(&app, &admin, deal).await, won.to_string());

    // `toStage`: a status slug, through the same update command.
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            stage_move(deal, json!({"toStage": "won"})),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(
        body["pendingAction"]["fieldDiff"],
        json!([{"field": "status", "before": "open", "after": "won"}])
    );
    let action = body["result"]["pendingActionId"].as_str().unwrap();
    let confirmed = confirm(&app, &admin, action).await;
    assert_eq!(confirmed["ok"], true, "{confirmed}");
    let res = app
        .send(get(&format!("/api/customers/deals/{deal}"), &admin))
        .await;
    assert_eq!(res.json()["deal"]["status"], "won");

    // Exactly one of the two; the old key is unknown; a stage of another
    // tenant is no stage of this deal.
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    let (_, foreign, _) = deal_with_stages(&app, &globex_admin).await;
    for (args, says) in [
        (
            json!({}),
            "Provide exactly one of toPipelineStageId or toStage.",
        ),
        (
            json!({"toPipelineStageId": lead, "toStage": "won"}),
            "Provide exactly one of toPipelineStageId or toStage.",
        ),
        (json!({"pipelineStageId": lead}), "pipelineStageId"),
        (json!({"toStage": "x".repeat(51)}), "toStage"),
        (json!({"toPipelineStageId": foreign}), "stage"),
    ] {
        let res = app
            .send(post_json(EXECUTE, &admin, stage_move(deal, args.clone())))
            .await;
        assert_eq!(res.status, 400, "{args}: {}", res.text());
        let body = res.json();
        assert_eq!(body["success"], false, "{args}");
        let error = body["error"].as_str().unwrap();
        assert!(error.contains(says), "{args}: {error}");
        if says.starts_with("Provide") {
            assert!(error.contains("toPipelineStageId:"), "{error}");
        }
    }
    assert_eq!(stage_of(&app, &admin, deal).await, won.to_string());

    // The schema the model sees is the reference's.
    let res = app.send(get("/api/ai_assistant/tools", &admin)).await;
    let tools = res.json()["tools"].as_array().unwrap().clone();
    let schema = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["inputSchema"].clone())
            .unwrap()
    };
    let stage = schema("customers.update_deal_stage");
    let keys: Vec<&String> = stage["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["dealId", "toPipelineStageId", "toStage"]);
    assert_eq!(stage["required"], json!(["dealId"]));
    assert!(schema("customers.get_deal")["properties"]["includeRelated"].is_object());
    assert!(schema("catalog.get_product")["properties"]["includeRelated"].is_object());
    let product = schema("catalog.update_product");
    assert!(product["properties"]["price"]["properties"]["currencyCode"].is_object());
    assert!(product["properties"].get("priceAmount").is_none());
}

#[actix_web::test]
async fn the_other_tools_take_the_reference_inputs() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, _, _) = deal_with_stages(&app, &admin).await;
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            json!({"toolName": "customers.get_deal", "args": {"dealId": deal, "includeRelated": true}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["result"]["deal"]["id"], deal.to_string());

    let res = app
        .send(post_json(
            "/api/catalog/products",
            &admin,
            json!({"title": "Chair", "priceAmount": "10.00", "priceCurrency": "EUR"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let product = id_of(&res.json());
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            json!({"toolName": "catalog.get_product", "args": {"productId": product, "includeRelated": false}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    // `price {currencyCode, amount}` and a nullable subtitle, proposed
    // through the merchandising assistant and confirmed.
    let update = |args: Value| {
        let mut args = args;
        args["productId"] = json!(product);
        json!({"toolName": "catalog.update_product", "agentId": "catalog.merchandising_assistant", "args": args})
    };
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            update(json!({"subtitle": null, "price": {"currencyCode": "EUR", "amount": 12.5}})),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    let diff = body["pendingAction"]["fieldDiff"].as_array().unwrap();
    assert!(diff.iter().any(|d| d["field"] == "priceAmount"), "{diff:?}");
    let action = body["result"]["pendingActionId"].as_str().unwrap();
    let confirmed = confirm(&app, &admin, action).await;
    assert_eq!(confirmed["ok"], true, "{confirmed}");
    let res = app
        .send(get(&format!("/api/catalog/products/{product}"), &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let item = &res.json()["item"];
    assert_eq!(item["price_amount"], "12.5", "{item}");

    // A currency the product has no price in, a negative amount, unknown
    // price keys: refused before any proposal.
    for args in [
        json!({"price": {"currencyCode": "USD", "amount": 1}}),
        json!({"price": {"amount": -1}}),
        json!({"price": {"amount": 1, "kind": "x"}}),
        json!({"priceAmount": "1.00"}),
    ] {
        let res = app
            .send(post_json(EXECUTE, &admin, update(args.clone())))
            .await;
        assert_eq!(res.status, 400, "{args}: {}", res.text());
        assert_eq!(res.json()["success"], false);
    }
}

// ---------------------------------------------------------------- agents

#[expect(
    clippy::unwrap_used,
    reason = "a malformed list fails the calling test"
)]
async fn agent_ids<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
) -> Vec<String> {
    let res = app.send(get(AGENTS, token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn agents_are_listed_only_with_every_required_feature() {
    let upstream = FakeUpstream::scripted([text_answer("x")]);
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let user = |email: &'static str, features: &'static [&'static str]| {
        let db = app.db.clone();
        let acme = &acme;
        async move {
            let id = user_with_features(&db, acme, email, features, None, None).await;
            token_for(&db, id).await
        }
    };

    // Deals view only: the deal analyzers, not the account assistant
    // (people and companies view too, features of modules stoa lacks).
    let deals_only = user(
        "deals@acme.com",
        &["ai_assistant.view", "customers.deals.view"],
    )
    .await;
    assert_eq!(
        agent_ids(&app, &deals_only).await,
        [
            "customers.deal_analyzer",
            "customers.deal_analyzer_tool_loop"
        ]
    );
    let res = app
        .send(post_json(
            &format!("{CHAT}?agent=customers.account_assistant"),
            &deals_only,
            chat_body("hi"),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["code"], "agent_features_denied");

    // The three, literally, or through a wildcard.
    let literal = user(
        "literal@acme.com",
        &[
            "ai_assistant.view",
            "customers.people.view",
            "customers.companies.view",
            "customers.deals.view",
        ],
    )
    .await;
    assert!(
        agent_ids(&app, &literal)
            .await
            .contains(&"customers.account_assistant".to_string())
    );
    let wildcard = user("wild@acme.com", &["ai_assistant.view", "customers.*"]).await;
    assert!(
        agent_ids(&app, &wildcard)
            .await
            .contains(&"customers.account_assistant".to_string())
    );

    // The catalog assistant needs categories view beside products view.
    let products = user(
        "products@acme.com",
        &["ai_assistant.view", "catalog.products.view"],
    )
    .await;
    assert_eq!(
        agent_ids(&app, &products).await,
        ["catalog.merchandising_assistant"]
    );
    let res = app
        .send(get(
            &format!("{AGENTS}/catalog.catalog_assistant/models"),
            &products,
        ))
        .await;
    assert_eq!(res.status, 403);
    let both = user(
        "both@acme.com",
        &[
            "ai_assistant.view",
            "catalog.products.view",
            "catalog.categories.view",
        ],
    )
    .await;
    assert_eq!(
        agent_ids(&app, &both).await,
        [
            "catalog.catalog_assistant",
            "catalog.merchandising_assistant"
        ]
    );
    assert_eq!(upstream.hits(), 0);
}

// ------------------------------------------------------- prompt overrides

#[actix_web::test]
async fn prompt_override_sections_are_in_the_next_turns_system_prompt() {
    let upstream = FakeUpstream::scripted([text_answer("one"), text_answer("two")]);
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let system = |n: usize| upstream.requests()[n].json()["messages"][0].clone();

    let chat = |token: String| {
        post_json(
            &format!("{CHAT}?agent=customers.deal_analyzer"),
            &token,
            chat_body("hi"),
        )
    };
    let mut res = app.stream(chat(admin.clone())).await;
    assert_eq!(res.status, 200);
    res.read_to_end(Duration::from_secs(10)).await;
    let before = system(0);
    assert_eq!(before["role"], "system");
    let base = before["content"].as_str().unwrap().to_string();
    assert!(!base.contains("[RESPONSE STYLE]"), "{base}");

    let res = app
        .send(post_json(
            &format!("{AGENTS}/customers.deal_analyzer/prompt-override"),
            &admin,
            json!({"sections": {
                "responseStyle": "Answer in one short sentence.",
                "glossary": "ARR means annual recurring revenue.",
                "role": "You speak for the Acme sales team."
            }}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    let mut res = app.stream(chat(admin.clone())).await;
    assert_eq!(res.status, 200);
    res.read_to_end(Duration::from_secs(10)).await;
    let after = system(1);
    assert_eq!(after["role"], "system");
    let prompt = after["content"].as_str().unwrap();
    // The built-in prompt is the role section; the override adds to it.
    assert!(prompt.starts_with("[ROLE]\nYou analyze deals"), "{prompt}");
    assert!(
        prompt.contains("You speak for the Acme sales team."),
        "{prompt}"
    );
    assert!(
        prompt.contains("[RESPONSE STYLE]\nAnswer in one short sentence."),
        "{prompt}"
    );
    assert!(
        prompt.contains("[GLOSSARY]\nARR means annual recurring revenue."),
        "{prompt}"
    );
    // The runtime's blocks follow (the deal analyzer plans its tasks).
    assert!(prompt.contains("TASK PLAN (RUNTIME)"), "{prompt}");

    // Another tenant's turn keeps the built-in prompt.
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let other = token_for(&app.db, globex.admin).await;
    let upstream_hits = upstream.hits();
    assert_eq!(upstream_hits, 2);
    let res = app
        .send(get(
            &format!("{AGENTS}/customers.deal_analyzer/prompt-override"),
            &other,
        ))
        .await;
    assert_eq!(res.json()["override"], Value::Null);
}

// ------------------------------------------------------ runtime base URL

#[actix_web::test]
async fn a_runtime_base_url_inside_the_allowlist_is_the_turns_provider() {
    let configured = FakeUpstream::scripted([text_answer("from the configured provider")]);
    let runtime = FakeUpstream::scripted([text_answer("from the runtime provider")]);
    let app = start_with_loopback(openai(
        &configured,
        &[("AI_RUNTIME_BASEURL_ALLOWLIST", "127.0.0.1")],
    ))
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let base = runtime.url("/v1");
    let mut res = app
        .stream(post_json(
            &format!("{CHAT}?agent=customers.deal_analyzer&baseUrl={base}"),
            &admin,
            chat_body("hi"),
        ))
        .await;
    assert_eq!(res.status, 200);
    let body = res.read_to_end(Duration::from_secs(10)).await;
    let frames = frames(&body);
    let kinds = types(&frames);
    assert!(!kinds.contains(&"error".to_string()), "{frames:?}");
    let text: String = frames
        .iter()
        .filter_map(|f| serde_json::from_str::<Value>(f).ok())
        .filter(|f| f["type"] == "text-delta")
        .filter_map(|f| f["delta"].as_str().map(String::from))
        .collect();
    assert_eq!(text, "from the runtime provider");
    assert_eq!(runtime.hits(), 1);
    assert_eq!(configured.hits(), 0);
    let sent = &runtime.requests()[0];
    assert_eq!(sent.header("authorization"), Some("Bearer test"));

    // Outside the allowlist: refused before the stream.
    let res = app
        .send(post_json(
            &format!("{CHAT}?agent=customers.deal_analyzer&baseUrl=http://localhost:1/v1"),
            &admin,
            chat_body("hi"),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["code"], "baseurl_not_allowlisted");
}

// ------------------------------------------------------------ validation

#[actix_web::test]
async fn validation_answers_as_the_reference() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    // A conversation of an unknown agent.
    let res = app
        .send(post_json(
            "/api/ai_assistant/ai/conversations",
            &admin,
            json!({"agentId": "customers.nope"}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["code"], "validation_error");
    assert_eq!(res.json()["issues"][0]["path"], json!(["agentId"]));
    let res = app
        .send(post_json(
            "/api/ai_assistant/ai/conversations/import",
            &admin,
            json!({"conversation": {"conversationId": "c1", "agentId": "x.y"}, "messages": []}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["code"], "validation_error");

    // The usage routes need `from` and `to`.
    for url in [
        "/api/ai_assistant/usage/daily",
        "/api/ai_assistant/usage/sessions",
        "/api/ai_assistant/usage/sessions?from=2026-01-01",
        "/api/ai_assistant/usage/daily?to=2026-01-01",
    ] {
        let res = app.send(get(url, &admin)).await;
        assert_eq!(res.status, 400, "{url}: {}", res.text());
        assert_eq!(res.json()["code"], "validation_error", "{url}");
    }
    let res = app
        .send(get(
            "/api/ai_assistant/usage/sessions?from=2026-01-01&to=2026-01-31",
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    // Every validation error of the `/ai/*` routes (and the settings and
    // usage routes) carries the code, extractor refusals included.
    let ai = "/api/ai_assistant/ai";
    for req in [
        post_json(&format!("{ai}/conversations"), &admin, json!({})),
        post_json(
            &format!("{ai}/conversations"),
            &admin,
            json!({"agentId": 5}),
        ),
        get(&format!("{ai}/conversations?limit=abc"), &admin),
        get(&format!("{ai}/conversations?limit=500"), &admin),
        post_json(
            &format!("{ai}/chat?agent=customers.deal_analyzer"),
            &admin,
            json!({"messages": []}),
        ),
        post_json(
            &format!("{ai}/actions/{}/cancel", Uuid::new_v4()),
            &admin,
            json!({"reason": "x", "extra": 1}),
        ),
        put_json(
            &format!("{ai}/agents/customers.deal_analyzer/loop-override"),
            &admin,
            json!({"loopMaxSteps": 0}),
        ),
        get("/api/ai_assistant/usage/sessions/not-a-uuid", &admin),
        put_json(
            "/api/ai_assistant/settings",
            &admin,
            json!({"inputModeration": "x"}),
        ),
    ] {
        let res = app.send(req).await;
        assert_eq!(res.status, 400, "{}", res.text());
        assert_eq!(res.json()["code"], "validation_error", "{}", res.text());
    }

    // An unknown tool, in the reference's words.
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            json!({"toolName": "customers.nope", "args": {}}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.json(),
        json!({"success": false, "error": "Tool \"customers.nope\" not found"})
    );
}

// ------------------------------------------------------------------ keys

#[actix_web::test]
async fn session_keys_need_view_and_mcp_keys_answer_role_ids() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let outsider = user_with_features(
        &app.db,
        &acme,
        "outsider@acme.com",
        &["customers.deals.view"],
        None,
        None,
    )
    .await;
    let outsider = token_for(&app.db, outsider).await;
    let res = app
        .send(post_json(
            "/api/ai_assistant/session-key",
            &outsider,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["requiredFeatures"], json!(["ai_assistant.view"]));
    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(post_json(
            "/api/ai_assistant/session-key",
            &employee,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json("/api/ai_assistant/mcp-key", &admin, json!({})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let admin_role = role_id(&app.db, acme.tenant_id, "admin").await;
    assert_eq!(res.json()["roles"], json!([admin_role.to_string()]));

    // The operations table declares it (the OpenAPI document says so).
    let op = stoa_ai_assistant::operations::OPERATIONS
        .iter()
        .find(|o| o.path == "/ai_assistant/session-key")
        .unwrap();
    assert_eq!(op.access.features(), ["ai_assistant.view"]);
}

// -------------------------------------------------------------- settings

#[actix_web::test]
async fn settings_report_the_effective_allowlist_and_the_resolved_default() {
    let app = start_with(config(&[
        ("OPENAI_API_KEY", "k"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ("ANTHROPIC_API_KEY", "a"),
        ("OM_AI_AVAILABLE_PROVIDERS", "openai,anthropic"),
        ("OM_AI_AVAILABLE_MODELS_OPENAI", "gpt-4o,gpt-5-mini"),
    ]))
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let settings = "/api/ai_assistant/settings";

    let res = app.send(get(settings, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(
        body["effectiveAllowlist"],
        json!({
            "providers": ["openai", "anthropic"],
            "modelsByProvider": {"openai": ["gpt-4o", "gpt-5-mini"]},
            "hasRestrictions": true,
            "tenantOverridesActive": false
        })
    );
    // Nothing pinned: the first configured provider of the registry.
    assert_eq!(
        body["resolvedDefault"],
        json!({
            "providerId": "anthropic",
            "modelId": "claude-haiku-4-5-20251001",
            "baseURL": "https://api.anthropic.com/v1",
            "source": "provider_default"
        })
    );

    // The tenant narrows the allowlist and pins a default.
    let res = app
        .send(put_json(
            &format!("{settings}/allowlist"),
            &admin,
            json!({"allowedProviders": ["openai"], "allowedModelsByProvider": {"openai": ["gpt-4o"]}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(put_json(
            settings,
            &admin,
            json!({"providerId": "openai", "modelId": "gpt-4o"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = app.send(get(settings, &admin)).await.json();
    assert_eq!(
        body["effectiveAllowlist"],
        json!({
            "providers": ["openai"],
            "modelsByProvider": {"openai": ["gpt-4o"]},
            "hasRestrictions": true,
            "tenantOverridesActive": true
        })
    );
    assert_eq!(
        body["resolvedDefault"],
        json!({
            "providerId": "openai",
            "modelId": "gpt-4o",
            "baseURL": "http://127.0.0.1:9/v1",
            "source": "tenant_override"
        })
    );

    // Without any provider: no default.
    let bare = start().await;
    let acme = seed(&bare.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&bare.db, acme.admin).await;
    let body = bare.send(get(settings, &admin)).await.json();
    assert_eq!(body["resolvedDefault"], Value::Null);
    assert_eq!(
        body["effectiveAllowlist"],
        json!({"providers": null, "modelsByProvider": {}, "hasRestrictions": false, "tenantOverridesActive": false})
    );
}
