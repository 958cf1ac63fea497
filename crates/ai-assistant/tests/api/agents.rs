//! Agents, their models, overrides (mutation policy, prompt, loop) and health.

use serde_json::json;

use super::support::*;

const AGENTS: &str = "/api/ai_assistant/ai/agents";

#[actix_web::test]
async fn agents_are_listed_by_the_callers_features() {
    let app = start_with(config(&[("OPENAI_API_KEY", "k")])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app.send(get(AGENTS, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    let ids: Vec<&str> = body["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "catalog.catalog_assistant",
            "catalog.merchandising_assistant",
            "customers.account_assistant",
            "customers.deal_analyzer",
            "customers.deal_analyzer_tool_loop"
        ]
    );
    assert_eq!(body["aiConfigured"], true);
    let analyzer = &body["agents"][3];
    assert_eq!(analyzer["mutationPolicy"], "confirm-required");
    assert_eq!(analyzer["maxSteps"], 12);
    let stage = analyzer["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "customers.update_deal_stage")
        .unwrap();
    assert_eq!(stage["isMutation"], true);
    assert_eq!(stage["registered"], true);

    let viewer = user_with_features(
        &app.db,
        &acme,
        "v@acme.com",
        &["ai_assistant.view", "catalog.products.view"],
        None,
        None,
    )
    .await;
    let viewer = token_for(&app.db, viewer).await;
    let res = app.send(get(AGENTS, &viewer)).await;
    let ids: Vec<String> = res.json()["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    // `catalog.catalog_assistant` also needs `catalog.categories.view`.
    assert_eq!(ids, ["catalog.merchandising_assistant"]);

    let nobody = user_with_features(
        &app.db,
        &acme,
        "n@acme.com",
        &["catalog.products.view"],
        None,
        None,
    )
    .await;
    let nobody = token_for(&app.db, nobody).await;
    assert_eq!(app.send(get(AGENTS, &nobody)).await.status, 403);
}

#[actix_web::test]
async fn models_list_configured_providers_within_the_allowlists() {
    let app = start_with(config(&[
        ("OPENAI_API_KEY", "k"),
        ("OM_AI_AVAILABLE_MODELS_OPENAI", "gpt-4o,gpt-5-mini"),
    ]))
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(get(
            &format!("{AGENTS}/customers.deal_analyzer/models"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["defaultProviderId"], "openai");
    assert_eq!(body["defaultModelId"], "gpt-5-mini");
    assert_eq!(body["degraded"], false);
    assert_eq!(body["providers"].as_array().unwrap().len(), 1);
    let models: Vec<&str> = body["providers"][0]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["gpt-5-mini", "gpt-4o"]);

    assert_eq!(
        app.send(get(&format!("{AGENTS}/Bad-Id/models"), &admin))
            .await
            .status,
        400
    );
    let res = app
        .send(get(&format!("{AGENTS}/customers.nope/models"), &admin))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["code"], "agent_unknown");
    let viewer = user_with_features(
        &app.db,
        &acme,
        "v@acme.com",
        &["ai_assistant.view"],
        None,
        None,
    )
    .await;
    let viewer = token_for(&app.db, viewer).await;
    let res = app
        .send(get(
            &format!("{AGENTS}/customers.deal_analyzer/models"),
            &viewer,
        ))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["code"], "agent_features_denied");
}

#[actix_web::test]
async fn mutation_policy_never_escalates_and_read_only_blocks_the_gate() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let url = |a: &str| format!("{AGENTS}/{a}/mutation-policy");

    let res = app
        .send(post_json(
            &url("catalog.catalog_assistant"),
            &admin,
            json!({"mutationPolicy": "confirm-required"}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["code"], "escalation_not_allowed");
    assert_eq!(res.json()["codeDeclared"], "read-only");

    let (deal, _, won) = deal_with_stages(&app, &admin).await;
    let action = propose(&app, &admin, deal, won).await;

    for agent in [
        "customers.deal_analyzer",
        "customers.account_assistant",
        "customers.deal_analyzer_tool_loop",
    ] {
        let res = app
            .send(post_json(
                &url(agent),
                &admin,
                json!({"mutationPolicy": "read-only", "notes": "freeze"}),
            ))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
    }
    let res = app.send(get(&url("customers.deal_analyzer"), &admin)).await;
    assert_eq!(res.json()["codeDeclared"], "confirm-required");
    assert_eq!(res.json()["override"]["mutationPolicy"], "read-only");

    // No agent may propose the tool now, and a pending one cannot be confirmed.
    let res = propose_res(&app, &admin, deal, won).await;
    assert_eq!(res.status, 403, "{}", res.text());
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            json!({"toolName": "customers.update_deal_stage", "agentId": "customers.deal_analyzer", "args": {"dealId": deal, "toPipelineStageId": won}}),
        ))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(res.json()["code"], "mutation_blocked_by_policy");
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["code"], "read_only_agent");

    let res = app
        .send(delete(&url("customers.deal_analyzer"), &admin))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["cleared"], true);
    let res = app
        .send(delete(&url("customers.deal_analyzer"), &admin))
        .await;
    assert_eq!(res.json()["cleared"], false);

    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(post_json(
            &url("customers.deal_analyzer"),
            &employee,
            json!({"mutationPolicy": "read-only"}),
        ))
        .await;
    assert_eq!(res.status, 403);
}

#[actix_web::test]
async fn prompt_overrides_refuse_reserved_keys_and_keep_ten_versions() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let url = format!("{AGENTS}/customers.deal_analyzer/prompt-override");
    let res = app
        .send(post_json(
            &url,
            &admin,
            json!({"sections": {"role": "x", " ReadOnly ": "false"}}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["code"], "reserved_key");
    assert_eq!(res.json()["reservedKeys"], json!([" ReadOnly "]));
    for n in 1..=11 {
        let res = app
            .send(post_json(
                &url,
                &admin,
                json!({"sections": {"role": format!("v{n}")}}),
            ))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
        assert_eq!(res.json()["version"], n);
    }
    let res = app.send(get(&url, &admin)).await;
    assert_eq!(res.status, 200);
    let body = res.json();
    assert_eq!(body["override"]["version"], 11);
    let versions: Vec<i64> = body["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, (2..=11).rev().collect::<Vec<_>>());

    let other = seed(&app.db, "Globex", "globex.com").await;
    let other = token_for(&app.db, other.admin).await;
    let res = app.send(get(&url, &other)).await;
    assert_eq!(res.json()["versions"], json!([]));
}

#[actix_web::test]
async fn loop_overrides_are_validated_stored_and_cleared() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let url = format!("{AGENTS}/customers.deal_analyzer/loop-override");
    let res = app.send(get(&url, &admin)).await;
    assert_eq!(res.json()["override"], json!(null));
    let res = app
        .send(put_json(
            &url,
            &admin,
            json!({"loopActiveToolsJson": ["catalog.update_product"]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["code"], "invalid_loop_override");
    let res = app
        .send(put_json(
            &url,
            &admin,
            json!({"loopStopWhenJson": [{"kind": "custom"}]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .send(put_json(&url, &admin, json!({"loopMaxSteps": 0})))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .send(put_json(
            &url,
            &admin,
            json!({"loopMaxSteps": 5, "loopStopWhenJson": [{"kind": "stepCount", "count": 2}], "loopActiveToolsJson": ["customers.get_deal"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["override"]["loopMaxSteps"], 5);
    let res = app.send(get(&url, &admin)).await;
    assert_eq!(
        res.json()["override"]["loopActiveToolsJson"],
        json!(["customers.get_deal"])
    );
    let res = app.send(delete(&url, &admin)).await;
    assert_eq!(res.json()["cleared"], true);
    let res = app.send(get(&url, &admin)).await;
    assert_eq!(res.json()["override"], json!(null));
}

#[actix_web::test]
async fn health_says_whether_a_provider_is_configured() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app.send(get("/api/ai_assistant/health", &admin)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["status"], "error");
}

#[actix_web::test]
async fn run_object_refuses_chat_agents_after_the_gate() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let url = "/api/ai_assistant/ai/run-object";
    let messages = json!([{"role": "user", "content": "hi"}]);
    let res = app
        .send(post_json(
            url,
            &admin,
            json!({"agent": "customers.deal_analyzer", "messages": messages}),
        ))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert_eq!(res.json()["code"], "execution_mode_not_supported");
    let res = app
        .send(post_json(
            url,
            &admin,
            json!({"agent": "customers.nope", "messages": messages}),
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(post_json(
            url,
            &admin,
            json!({"agent": "customers.deal_analyzer", "messages": []}),
        ))
        .await;
    assert_eq!(res.status, 400);
}
