//! The approval gate: direct execution proposes, confirm runs the tool as
//! the confirming user through the deals service (audit, undo), cancel,
//! expiry, stale versions, tenant isolation.

use std::time::Duration;

use serde_json::json;
use stoa_testkit::outbox_events;

use super::support::*;

#[actix_web::test]
async fn propose_confirm_changes_the_deal_logs_it_and_undo_restores_it() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, lead, won) = deal_with_stages(&app, &admin).await;

    // Direct execution of a mutation tool only proposes it.
    let res = propose_res(&app, &admin, deal, won).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    let action = body["result"]["pendingActionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(body["pendingAction"]["status"], "pending");
    assert_eq!(
        body["pendingAction"]["toolName"],
        "customers.update_deal_stage"
    );
    assert_eq!(
        body["pendingAction"]["fieldDiff"],
        json!([
            {"field": "pipelineStage", "before": "Lead", "after": "Won"},
            {"field": "pipelineStageId", "before": lead.to_string(), "after": won.to_string()}
        ])
    );
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());

    // The same proposal while pending is the same action.
    let again = propose(&app, &admin, deal, won).await;
    assert_eq!(again.to_string(), action);

    let res = app.send(get(&format!("{ACTIONS}/{action}"), &admin)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["status"], "pending");
    assert!(res.json().get("normalizedInput").is_none());

    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let confirmed = res.json();
    assert_eq!(confirmed["ok"], true, "{confirmed}");
    assert_eq!(confirmed["pendingAction"]["status"], "confirmed");
    assert_eq!(
        confirmed["mutationResult"]["commandName"],
        "customers.deals.update"
    );
    assert_eq!(stage_of(&app, &admin, deal).await, won.to_string());

    let events = outbox_events(&app.db).await;
    assert!(events.iter().any(|e| e["name"] == "ai.action.confirmed"));
    assert!(
        events.iter().any(|e| e["name"] == "customers.deal.updated"),
        "{events:?}"
    );

    // The deal change is in the action log, undoable like the route's.
    let undo_token = confirmed["mutationResult"]["result"]["operation"]["undoToken"]
        .as_str()
        .unwrap()
        .to_string();
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/undo",
            &admin,
            json!({"undoToken": undo_token}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());

    // A repeated confirm replays the result; the tool does not run again.
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["ok"], true);
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());
}

#[actix_web::test]
async fn confirm_reauthorizes_the_confirming_user_now() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, lead, won) = deal_with_stages(&app, &admin).await;
    let seller = user_with_features(
        &app.db,
        &acme,
        "seller@acme.com",
        &[
            "ai_assistant.view",
            "customers.deals.view",
            "customers.deals.manage",
            "customers.pipelines.view",
        ],
        None,
        None,
    )
    .await;
    let seller_token = token_for(&app.db, seller).await;
    let action = propose(&app, &seller_token, deal, won).await;

    // A viewer of the same organization may not confirm it: not its
    // proposal, so not even found.
    let viewer = user_with_features(
        &app.db,
        &acme,
        "viewer@acme.com",
        &["ai_assistant.view", "customers.deals.view"],
        None,
        None,
    )
    .await;
    let viewer_token = token_for(&app.db, viewer).await;
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            &viewer_token,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(res.json()["code"], "pending_action_not_found");

    // The proposer loses the feature before confirming: 403, nothing runs.
    set_user_acl(
        &app.db,
        seller,
        acme.tenant_id,
        &["ai_assistant.view", "customers.deals.view"],
        false,
    )
    .await;
    let seller_token = token_for(&app.db, seller).await;
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            &seller_token,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());
    let res = app
        .send(get(&format!("{ACTIONS}/{action}"), &seller_token))
        .await;
    assert_eq!(res.json()["status"], "pending");

    // Without the assistant feature at all: 403 before anything.
    set_user_acl(
        &app.db,
        seller,
        acme.tenant_id,
        &["customers.deals.view"],
        false,
    )
    .await;
    let seller_token = token_for(&app.db, seller).await;
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            &seller_token,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 403);
}

#[actix_web::test]
async fn cancel_is_emitted_once_and_final() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, lead, won) = deal_with_stages(&app, &admin).await;
    let action = propose(&app, &admin, deal, won).await;

    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/cancel"),
            &admin,
            json!({"nope": 1}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    let long = "x".repeat(501);
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/cancel"),
            &admin,
            json!({"reason": long}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());

    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/cancel"),
            &admin,
            json!({"reason": "not now"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["pendingAction"]["status"], "cancelled");
    assert_eq!(
        res.json()["pendingAction"]["executionResult"]["error"]["message"],
        "not now"
    );
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/cancel"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let cancelled: Vec<_> = outbox_events(&app.db)
        .await
        .into_iter()
        .filter(|e| e["name"] == "ai.action.cancelled")
        .collect();
    assert_eq!(cancelled.len(), 1);

    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 409);
    assert_eq!(res.json()["code"], "invalid_status");
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());
}

#[actix_web::test]
async fn expired_actions_refuse_confirm_and_the_job_expires_them() {
    let app = start_with(config(&[("AI_PENDING_ACTION_TTL_SECONDS", "1")])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, lead, won) = deal_with_stages(&app, &admin).await;
    let action = propose(&app, &admin, deal, won).await;
    let second = {
        let (deal2, _, won2) = deal_with_stages(&app, &admin).await;
        propose(&app, &admin, deal2, won2).await
    };
    tokio::time::sleep(Duration::from_millis(1100)).await;

    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(res.json()["code"], "expired");
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());

    // Cancelling an overdue action expires it (409 expired, with the action).
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/cancel"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 409);
    assert_eq!(res.json()["code"], "expired");
    assert_eq!(res.json()["pendingAction"]["status"], "expired");

    // The recurring job expires the rest, each once.
    let actor = stoa_core::command::Actor {
        source: "system",
        ..Default::default()
    };
    let expired = stoa_ai_assistant::actions::expire_due(&app.db, &actor, 100)
        .await
        .unwrap();
    assert_eq!(expired, 1);
    let res = app.send(get(&format!("{ACTIONS}/{second}"), &admin)).await;
    assert_eq!(res.json()["status"], "expired");
    let again = stoa_ai_assistant::actions::expire_due(&app.db, &actor, 100)
        .await
        .unwrap();
    assert_eq!(again, 0);
    let events: Vec<_> = outbox_events(&app.db)
        .await
        .into_iter()
        .filter(|e| e["name"] == "ai.action.expired")
        .collect();
    assert_eq!(events.len(), 2);
}

#[actix_web::test]
async fn a_record_changed_since_the_proposal_is_412() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, _, won) = deal_with_stages(&app, &admin).await;
    let action = propose(&app, &admin, deal, won).await;
    let res = app
        .send(put_json(
            &format!("/api/customers/deals/{deal}"),
            &admin,
            json!({"title": "Renamed"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 412, "{}", res.text());
    assert_eq!(res.json()["code"], "stale_version");
}

#[actix_web::test]
async fn actions_are_invisible_to_other_tenants() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let other = token_for(&app.db, globex.admin).await;
    let (deal, lead, won) = deal_with_stages(&app, &admin).await;
    let action = propose(&app, &admin, deal, won).await;

    let res = app.send(get(&format!("{ACTIONS}/{action}"), &other)).await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["code"], "pending_action_not_found");
    for verb in ["confirm", "cancel"] {
        let res = app
            .send(post_json(
                &format!("{ACTIONS}/{action}/{verb}"),
                &other,
                json!({}),
            ))
            .await;
        assert_eq!(res.status, 404, "{verb}");
    }
    // Another tenant's deal cannot be proposed either (its service says 404).
    let res = propose_res(&app, &other, deal, won).await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());

    let res = app
        .send(get(&format!("{ACTIONS}/not-a-uuid"), &admin))
        .await;
    assert_eq!(res.status, 404);
}

#[actix_web::test]
async fn direct_execution_runs_reads_and_checks_input() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, _, _) = deal_with_stages(&app, &admin).await;

    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            json!({"toolName": "customers.get_deal", "args": {"dealId": deal}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["success"], true);
    assert_eq!(res.json()["result"]["deal"]["title"], "Big deal");

    let res = app.send(post_json(EXECUTE, &admin, json!({}))).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "toolName is required");
    let res = app
        .send(post_json(EXECUTE, &admin, json!({"toolName": "nope.tool"})))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["success"], false);
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            json!({"toolName": "customers.get_deal", "args": {"dealId": "x", "extra": 1}}),
        ))
        .await;
    assert_eq!(res.status, 400);
    let error = res.json()["error"].as_str().unwrap().to_string();
    assert!(
        error.starts_with("Invalid input: dealId: invalid uuid; extra: unrecognized key"),
        "{error}"
    );

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
        .send(post_json(
            EXECUTE,
            &viewer,
            json!({"toolName": "customers.get_deal", "args": {"dealId": deal}}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app.send(get("/api/ai_assistant/tools", &viewer)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["tools"], json!([]));
    let res = app.send(get("/api/ai_assistant/tools", &admin)).await;
    let names: Vec<String> = res.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        names.contains(&"customers.update_deal_stage".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"catalog.update_product".to_string()),
        "{names:?}"
    );
}

#[actix_web::test]
async fn session_tokens_are_accepted_for_their_user_only() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let superadmin = token_for(&app.db, acme.superadmin).await;
    let (deal, _, _) = deal_with_stages(&app, &admin).await;
    let res = app
        .send(post_json(
            "/api/ai_assistant/session-key",
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let token = res.json()["sessionToken"].as_str().unwrap().to_string();
    assert!(token.starts_with("sess_"));
    let call = |t: &str| json!({"toolName": "customers.get_deal", "args": {"dealId": deal, "_sessionToken": t}});
    let res = app.send(post_json(EXECUTE, &admin, call(&token))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(post_json(EXECUTE, &superadmin, call(&token)))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["code"], "SESSION_EXPIRED");
    let res = app
        .send(post_json(EXECUTE, &admin, call("sess_bogus")))
        .await;
    assert_eq!(res.status, 400);
}

#[actix_web::test]
async fn mcp_keys_carry_the_callers_roles() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            "/api/ai_assistant/mcp-key",
            &admin,
            json!({"name": "My MCP"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["name"], "My MCP");
    let admin_role = role_id(&app.db, acme.tenant_id, "admin").await;
    assert_eq!(body["roles"], json!([admin_role]));
    assert_eq!(body["tenantId"], acme.tenant_id.to_string());
    assert!(
        body["secret"]
            .as_str()
            .unwrap()
            .starts_with(body["keyPrefix"].as_str().unwrap())
    );
}
