//! The per-user chat limit (`RATE_LIMIT_AI_CHAT_*`), the refusal of an
//! inactive or deleted organization, the usage prune job and the
//! conversation list's shape (one statement, capped total, keyset cursor).

use std::time::Duration;

use diesel_async::RunQueryDsl;
use serde_json::json;
use stoa_testkit::FakeUpstream;
use uuid::Uuid;

use super::chat::{chat_body, openai, text_answer};
use super::support::*;

const CONVERSATIONS: &str = "/api/ai_assistant/ai/conversations";

#[actix_web::test]
async fn each_user_is_limited_to_the_configured_chat_turns() {
    let upstream = FakeUpstream::scripted([text_answer("one"), text_answer("two")]);
    let app = start_with(openai(
        &upstream,
        &[
            ("RATE_LIMIT_AI_CHAT_POINTS", "2"),
            ("RATE_LIMIT_AI_CHAT_DURATION", "60"),
        ],
    ))
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let chat = format!("{CHAT}?agent=customers.deal_analyzer");
    for remaining in ["1", "0"] {
        let mut res = app.stream(post_json(&chat, &admin, chat_body("hi"))).await;
        assert_eq!(res.status, 200);
        assert_eq!(res.header("x-ratelimit-limit"), Some("2"));
        assert_eq!(res.header("x-ratelimit-remaining"), Some(remaining));
        res.read_to_end(Duration::from_secs(10)).await;
    }
    let res = app.send(post_json(&chat, &admin, chat_body("hi"))).await;
    assert_eq!(res.status, 429, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({"error": "Too many requests. Please try again later."})
    );
    let retry: u64 = res.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert!(res.header("x-ratelimit-reset").is_some());
    assert_eq!(res.header("x-ratelimit-limit"), Some("2"));
    assert_eq!(res.header("x-ratelimit-remaining"), Some("0"));
    assert_eq!(upstream.hits(), 2, "the refused turn reached no provider");

    // Another user of the tenant has a limit of their own (this turn is
    // refused by the agent gate, after counting: the limit comes first).
    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(post_json(
            &format!("{CHAT}?agent=customers.nope"),
            &employee,
            chat_body("hi"),
        ))
        .await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(res.header("x-ratelimit-remaining"), Some("1"));
    // A malformed request is refused before it counts.
    let res = app.send(post_json(CHAT, &employee, chat_body("hi"))).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.header("x-ratelimit-remaining"), None);
}

#[actix_web::test]
async fn the_limit_can_be_turned_off() {
    let upstream = FakeUpstream::scripted([]);
    let app = start_with(openai(
        &upstream,
        &[
            ("RATE_LIMIT_AI_CHAT_POINTS", "1"),
            ("RATE_LIMIT_ENABLED", "false"),
        ],
    ))
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    for _ in 0..3 {
        let res = app
            .send(post_json(
                &format!("{CHAT}?agent=customers.nope"),
                &admin,
                chat_body("hi"),
            ))
            .await;
        assert_eq!(res.status, 404);
        assert_eq!(res.header("x-ratelimit-limit"), None);
    }
}

#[expect(clippy::unwrap_used, reason = "a failed setup fails the calling test")]
async fn set_organization(app_db: &stoa_core::db::Db, org: Uuid, sql: &str) {
    let mut conn = app_db.conn().await.unwrap();
    diesel::sql_query(format!("UPDATE organizations SET {sql} WHERE id = $1"))
        .bind::<diesel::sql_types::Uuid, _>(org)
        .execute(&mut *conn)
        .await
        .unwrap();
}

#[actix_web::test]
async fn an_inactive_or_deleted_organization_cannot_chat_or_start_conversations() {
    let upstream = FakeUpstream::scripted([text_answer("fine")]);
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let chat = format!("{CHAT}?agent=customers.deal_analyzer");
    let create = json!({"agentId": "customers.deal_analyzer", "conversationId": "c-1"});
    let import = json!({"conversation": {"conversationId": "l-1", "agentId": "customers.deal_analyzer"}, "messages": []});

    for sql in ["is_active = false", "is_active = true, deleted_at = now()"] {
        set_organization(&app.db, acme.organization_id, sql).await;
        let res = app.send(post_json(&chat, &admin, chat_body("hi"))).await;
        assert_eq!(res.status, 400, "{sql}: {}", res.text());
        assert_eq!(res.json()["code"], "organization_not_found");
        let res = app
            .send(post_json(CONVERSATIONS, &admin, create.clone()))
            .await;
        assert_eq!(res.status, 400, "{sql}: {}", res.text());
        assert_eq!(res.json()["code"], "organization_not_found");
        let res = app
            .send(post_json(
                &format!("{CONVERSATIONS}/import"),
                &admin,
                import.clone(),
            ))
            .await;
        assert_eq!(res.status, 400, "{sql}: {}", res.text());
        assert_eq!(res.json()["code"], "organization_not_found");
    }
    assert_eq!(upstream.hits(), 0);
    let res = app.send(get(CONVERSATIONS, &admin)).await;
    assert_eq!(res.json()["items"], json!([]));

    // Another tenant's active organization is unaffected.
    let other = token_for(&app.db, globex.admin).await;
    let mut res = app.stream(post_json(&chat, &other, chat_body("hi"))).await;
    assert_eq!(res.status, 200);
    res.read_to_end(Duration::from_secs(10)).await;
    // Reactivated, the organization works again.
    set_organization(&app.db, acme.organization_id, "deleted_at = NULL").await;
    let res = app.send(post_json(CONVERSATIONS, &admin, create)).await;
    assert_eq!(res.status, 201, "{}", res.text());
}

/// Inserts a usage step `days_ago` days back.
#[expect(clippy::unwrap_used, reason = "a failed setup fails the calling test")]
async fn step(db: &stoa_core::db::Db, tenant: Uuid, org: Uuid, session: Uuid, days_ago: i32) {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(
        "INSERT INTO ai_token_usage_events (id, tenant_id, organization_id, agent_id, module_id, \
           session_id, turn_id, step_index, provider_id, model_id, input_tokens, output_tokens, created_at) \
         VALUES (gen_random_uuid(), $1, $2, 'customers.deal_analyzer', 'customers', $3, gen_random_uuid(), 0, \
           'openai', 'gpt-5-mini', 10, 2, now() - make_interval(days => $4))",
    )
    .bind::<diesel::sql_types::Uuid, _>(tenant)
    .bind::<diesel::sql_types::Uuid, _>(org)
    .bind::<diesel::sql_types::Uuid, _>(session)
    .bind::<diesel::sql_types::Integer, _>(days_ago)
    .execute(&mut *conn)
    .await
    .unwrap();
}

/// Inserts a daily rollup row `days_ago` days back with `sessions`.
#[expect(clippy::unwrap_used, reason = "a failed setup fails the calling test")]
async fn daily(db: &stoa_core::db::Db, tenant: Uuid, org: Uuid, days_ago: i32, sessions: i64) {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(
        "INSERT INTO ai_token_usage_daily (id, tenant_id, organization_id, day, agent_id, model_id, \
           provider_id, input_tokens, output_tokens, step_count, turn_count, session_count) \
         VALUES (gen_random_uuid(), $1, $2, (now() AT TIME ZONE 'UTC')::date - $3, \
           'customers.deal_analyzer', 'gpt-5-mini', 'openai', 10, 2, 1, 1, $4)",
    )
    .bind::<diesel::sql_types::Uuid, _>(tenant)
    .bind::<diesel::sql_types::Uuid, _>(org)
    .bind::<diesel::sql_types::Integer, _>(days_ago)
    .bind::<diesel::sql_types::BigInt, _>(sessions)
    .execute(&mut *conn)
    .await
    .unwrap();
}

#[actix_web::test]
async fn the_prune_deletes_old_steps_in_batches_and_keeps_the_daily_rollup() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (t, o) = (acme.tenant_id, acme.organization_id);
    let old = Uuid::new_v4();
    for _ in 0..3 {
        step(&app.db, t, o, old, 100).await;
    }
    daily(&app.db, t, o, 100, 1).await;
    // Two sessions three days ago (a whole day inside the retention: its
    // session count is reconciled).
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    for s in [a, a, b] {
        step(&app.db, t, o, s, 3).await;
    }
    daily(&app.db, t, o, 3, 0).await;

    let sessions = |from: &str, to: &str| {
        get(
            &format!("/api/ai_assistant/usage/sessions?from={from}&to={to}"),
            &admin,
        )
    };
    let today = time::OffsetDateTime::now_utc().date();
    let long_ago = today - time::Duration::days(200);
    let res = app
        .send(sessions(&long_ago.to_string(), &today.to_string()))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["total"], 3);

    // A run with a budget of one batch of two leaves one old step.
    let mut conn = app.db.conn().await.unwrap();
    let pruned = stoa_ai_assistant::usage::prune(&mut conn, 90, 2, 1)
        .await
        .unwrap();
    assert_eq!((pruned.deleted, pruned.more), (2, true));
    assert_eq!(pruned.reconciled, 1);
    let pruned = stoa_ai_assistant::usage::prune(&mut conn, 90, 2, 1)
        .await
        .unwrap();
    assert_eq!(
        (pruned.deleted, pruned.more, pruned.reconciled),
        (1, false, 0)
    );
    let pruned = stoa_ai_assistant::usage::prune(&mut conn, 90, 2, 1)
        .await
        .unwrap();
    assert_eq!(pruned.deleted, 0);
    drop(conn);

    let res = app
        .send(sessions(&long_ago.to_string(), &today.to_string()))
        .await;
    let kept: Vec<String> = res.json()["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(!kept.contains(&old.to_string()));
    let res = app
        .send(get(
            &format!("/api/ai_assistant/usage/sessions/{old}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 404);

    // The rollup keeps every day; the kept whole day's session count now
    // matches its steps, the pruned day's is left as it was.
    let res = app
        .send(get(
            &format!("/api/ai_assistant/usage/daily?from={long_ago}&to={today}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let rows = res.json()["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["sessionCount"], "1");
    assert_eq!(rows[1]["sessionCount"], "2");
    assert_eq!(rows[1]["inputTokens"], "10");
}

#[actix_web::test]
async fn the_conversation_list_is_one_statement_with_a_capped_total() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    for n in 1..=5 {
        let res = app
            .send(post_json(
                CONVERSATIONS,
                &employee,
                json!({"agentId": "customers.deal_analyzer", "conversationId": format!("c-{n}")}),
            ))
            .await;
        assert_eq!(res.status, 201);
        std::thread::sleep(Duration::from_millis(2));
    }
    let other = token_for(&app.db, globex.admin).await;
    let res = app
        .send(post_json(
            CONVERSATIONS,
            &other,
            json!({"agentId": "customers.deal_analyzer", "conversationId": "g-1"}),
        ))
        .await;
    assert_eq!(res.status, 201);

    // Warm-up (fills the ACL cache), then count round trips.
    app.send(get(CONVERSATIONS, &employee)).await;
    let mut costs = Vec::new();
    for limit in [1, 5] {
        let before = stoa_core::db::thread_queries();
        let res = app
            .send(get(&format!("{CONVERSATIONS}?limit={limit}"), &employee))
            .await;
        costs.push(stoa_core::db::thread_queries() - before);
        assert_eq!(res.status, 200);
        let body = res.json();
        assert_eq!(body["total"], 5, "{body}");
        assert_eq!(body["totalCapped"], false);
        assert_eq!(body["items"].as_array().unwrap().len(), limit);
    }
    assert_eq!(costs[0], costs[1], "no statement per row");
    assert!(costs[0] <= 2, "session check and one statement: {costs:?}");

    // The cursor continues after the page; the total counts from it on.
    let res = app
        .send(get(&format!("{CONVERSATIONS}?limit=2"), &employee))
        .await;
    let cursor = res.json()["nextCursor"]
        .as_str()
        .unwrap()
        .replace('+', "%2B");
    let res = app
        .send(get(
            &format!("{CONVERSATIONS}?limit=2&cursor={cursor}"),
            &employee,
        ))
        .await;
    let body = res.json();
    let ids: Vec<&str> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["conversationId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c-3", "c-2"]);
    assert_eq!(body["total"], 3);
    // Exact or no total on request.
    let res = app
        .send(get(
            &format!("{CONVERSATIONS}?includeTotal=false"),
            &employee,
        ))
        .await;
    assert_eq!(res.json()["total"], json!(null));
    let res = app
        .send(get(
            &format!("{CONVERSATIONS}?includeTotal=true&agent=catalog.catalog_assistant"),
            &employee,
        ))
        .await;
    assert_eq!(res.json()["total"], 0);
}
