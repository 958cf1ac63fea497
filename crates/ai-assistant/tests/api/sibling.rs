//! Issue 49, the authorization matrix's sixth attacker: an administrator
//! restricted to one branch, selecting every organization (`__all__`),
//! writes no tenant-wide override and reaches no conversation outside its
//! organizations. The victims' rows are unchanged after.

use actix_web::test::TestRequest;
use diesel_async::RunQueryDsl;
use serde_json::json;

use super::support::*;

const AGENTS: &str = "/api/ai_assistant/ai/agents";
const CONVERSATIONS: &str = "/api/ai_assistant/ai/conversations";

fn all(req: TestRequest) -> TestRequest {
    req.insert_header((stoa_core::http::headers::SELECTED_ORG, "__all__"))
}

#[derive(diesel::QueryableByName)]
struct Digest {
    #[diesel(sql_type = diesel::sql_types::Text)]
    digest: String,
}

/// A digest of every row of `table`.
async fn digest(db: &stoa_core::db::Db, table: &str) -> String {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(format!(
        "SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest FROM {table} t"
    ))
    .get_result::<Digest>(&mut *conn)
    .await
    .unwrap()
    .digest
}

#[actix_web::test]
async fn a_restricted_admin_under_all_writes_no_tenant_wide_override_nor_others_conversations() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let branch =
        stoa_auth::testing::organization(&app.db, acme.tenant_id, acme.organization_id, "Branch")
            .await;
    let attacker = user_with_features(
        &app.db,
        &acme,
        "branch-admin@acme.com",
        &["*"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let token = token_for(&app.db, attacker).await;
    let superadmin = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(all(post_json(
            CONVERSATIONS,
            &superadmin,
            json!({"agentId": "customers.deal_analyzer", "conversationId": "boss-talk"}),
        )))
        .await;
    assert!(res.status.is_success(), "{}", res.text());
    let tables = [
        "ai_agent_runtime_overrides",
        "ai_agent_mutation_policy_overrides",
        "ai_chat_conversations",
    ];
    let mut before = Vec::new();
    for table in tables {
        before.push(digest(&app.db, table).await);
    }

    let agent = "customers.deal_analyzer";
    let res = app
        .send(all(put_json(
            &format!("{AGENTS}/{agent}/loop-override"),
            &token,
            json!({"loopMaxSteps": 3}),
        )))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["code"], "organization_out_of_scope");
    let res = app
        .send(all(post_json(
            &format!("{AGENTS}/{agent}/mutation-policy"),
            &token,
            json!({"mutationPolicy": "read-only"}),
        )))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    let res = app
        .send(all(delete(&format!("{CONVERSATIONS}/boss-talk"), &token)))
        .await;
    assert_eq!(res.status, 404, "{}", res.text());
    for (table, was) in tables.iter().zip(&before) {
        assert_eq!(&digest(&app.db, table).await, was, "{table} changed");
    }

    // In its own branch it still manages its agents' overrides.
    let res = app
        .send(
            put_json(
                &format!("{AGENTS}/{agent}/loop-override"),
                &token,
                json!({"loopMaxSteps": 3}),
            )
            .insert_header((stoa_core::http::headers::SELECTED_ORG, branch.to_string())),
        )
        .await;
    assert!(res.status.is_success(), "{}", res.text());
}

/// The same attacker on the tenant's AI settings and model allowlist:
/// under `__all__` they would be the tenant-level rows every organization
/// falls back to, so they are 403 like the agent overrides, and nothing
/// changes; in its own branch it still manages them.
#[actix_web::test]
async fn a_restricted_admin_under_all_writes_no_tenant_wide_settings_nor_allowlist() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let branch =
        stoa_auth::testing::organization(&app.db, acme.tenant_id, acme.organization_id, "Branch")
            .await;
    let attacker = user_with_features(
        &app.db,
        &acme,
        "branch-admin@acme.com",
        &["*"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let token = token_for(&app.db, attacker).await;
    let admin = token_for(&app.db, acme.admin).await;
    let settings = "/api/ai_assistant/settings";
    let allowlist = "/api/ai_assistant/settings/allowlist";
    // The tenant's own rows, which the attack must not touch.
    let res = app
        .send(all(put_json(
            allowlist,
            &admin,
            json!({"allowedProviders": []}),
        )))
        .await;
    assert!(res.status.is_success(), "{}", res.text());
    let res = app.send(all(put_json(settings, &admin, json!({})))).await;
    assert!(res.status.is_success(), "{}", res.text());
    let tables = ["ai_agent_runtime_overrides", "ai_tenant_model_allowlists"];
    let mut before = Vec::new();
    for table in tables {
        before.push(digest(&app.db, table).await);
    }

    for res in [
        app.send(all(put_json(settings, &token, json!({})))).await,
        app.send(all(delete(settings, &token))).await,
        app.send(all(put_json(
            allowlist,
            &token,
            json!({"allowedProviders": []}),
        )))
        .await,
        app.send(all(delete(allowlist, &token))).await,
    ] {
        assert_eq!(res.status, 403, "{}", res.text());
        assert_eq!(res.json()["code"], "organization_out_of_scope");
    }
    for (table, was) in tables.iter().zip(&before) {
        assert_eq!(&digest(&app.db, table).await, was, "{table} changed");
    }

    let res = app
        .send(
            put_json(allowlist, &token, json!({"allowedProviders": []}))
                .insert_header((stoa_core::http::headers::SELECTED_ORG, branch.to_string())),
        )
        .await;
    assert!(res.status.is_success(), "{}", res.text());
}
