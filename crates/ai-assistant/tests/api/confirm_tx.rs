//! The confirm is one transaction: a write killed midway (its connection
//! terminated, the tool failing after writing part of its rows) leaves the
//! action pending and the deal unchanged, never `executing`; two confirms
//! at once write once; `executing` rows an older stoa left behind are
//! failed by the expiry job.
//!
//! The failpoint is a tool of the test's own (`customers.failpoint`): the
//! real `customers.update_deal_stage` (the deals service on the confirm's
//! connection: the deal row, its action-log entry and event written), then
//! what the test armed. Each test runs in its own process (nextest), so the
//! failpoint's statics are the test's alone.

use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::{AiTool, ToolCall, ToolHandler};
use stoa_ai_assistant::agents::{AgentDef, ExecutionMode, LoopBudget, MutationPolicy};
use stoa_core::AppError;
use stoa_core::command::schema::action_logs as al;
use stoa_core::db::Db;
use stoa_testkit::AppService;
use tokio::sync::Notify;
use uuid::Uuid;

use super::support::*;

const FAILPOINT: &str = "customers.failpoint";

/// What the failpoint does after the deal's write (the test arms it).
const PASS: u8 = 0;
/// Hands out its backend's pid, then sleeps until the test terminates it.
const TERMINATE: u8 = 1;
/// Answers a server error (the outcome unknown to the tool's caller).
const SERVER_ERROR: u8 = 2;
/// Refuses (a 4xx, as a guard or a bad value would).
const REFUSE: u8 = 3;
/// Says it wrote, then waits for the test's release.
const BLOCK: u8 = 4;

static MODE: AtomicU8 = AtomicU8::new(PASS);
static PID: AtomicI32 = AtomicI32::new(0);
static WROTE: LazyLock<Notify> = LazyLock::new(Notify::new);
static RELEASE: LazyLock<Notify> = LazyLock::new(Notify::new);

#[derive(QueryableByName)]
struct Pid {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    pid: i32,
}

struct Failpoint {
    inner: Arc<dyn ToolHandler>,
}

impl ToolHandler for Failpoint {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            let ToolCall { auth, conn, input } = call;
            let written = self
                .inner
                .call(ToolCall {
                    auth,
                    conn: &mut *conn,
                    input,
                })
                .await?;
            // Disarmed once hit: a retry runs the plain tool.
            match MODE.swap(PASS, Ordering::SeqCst) {
                TERMINATE => {
                    let me: Pid = diesel::sql_query("SELECT pg_backend_pid() AS pid")
                        .get_result(conn)
                        .await?;
                    PID.store(me.pid, Ordering::SeqCst);
                    diesel::sql_query("SELECT pg_sleep(30)")
                        .execute(conn)
                        .await?;
                    Err(AppError::internal("the failpoint was not terminated"))
                }
                SERVER_ERROR => Err(AppError::internal("failpoint: crashed after the write")),
                REFUSE => Err(AppError::conflict("failpoint: refused after the write")),
                BLOCK => {
                    WROTE.notify_one();
                    RELEASE.notified().await;
                    Ok(written)
                }
                _ => Ok(written),
            }
        })
    }
}

fn tools() -> Vec<AiTool> {
    let stage = stoa_customers::ai_tools::tools(&stoa_auth::testing::user_directory())
        .into_iter()
        .find(|t| t.name == "customers.update_deal_stage")
        .unwrap();
    vec![AiTool {
        name: FAILPOINT,
        display_name: "Failpoint",
        handler: Arc::new(Failpoint {
            inner: stage.handler.clone(),
        }),
        ..stage
    }]
}

static AGENT: AgentDef = AgentDef {
    id: "customers.failpoint_agent",
    module_id: "customers",
    label: "Failpoint",
    description: "Moves deals through the failpoint.",
    system_prompt: "Move deals.",
    allowed_tools: &[FAILPOINT],
    required_features: &["customers.deals.view"],
    read_only: false,
    mutation_policy: MutationPolicy::ConfirmRequired,
    execution_mode: ExecutionMode::Chat,
    budget: LoopBudget::DEFAULT,
    loop_override_allowed: true,
    task_plan: false,
    allow_runtime_override: true,
    accepted_media_types: &[],
    keywords: &[],
    suggestions: &[],
    output: None,
};
static AGENTS: [&AgentDef; 1] = [&AGENT];

async fn propose_failpoint<S: AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    deal: Uuid,
    stage: Uuid,
) -> Uuid {
    let res = app
        .send(post_json(
            EXECUTE,
            token,
            json!({
                "toolName": FAILPOINT,
                "agentId": AGENT.id,
                "args": {"dealId": deal, "toPipelineStageId": stage},
            }),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["result"]["status"], "pending-confirmation", "{body}");
    body["result"]["pendingActionId"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

async fn status_of<S: AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    action: Uuid,
) -> String {
    let res = app.send(get(&format!("{ACTIONS}/{action}"), token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["status"].as_str().unwrap().to_string()
}

/// The deal's update entries in the action log (one per committed write).
async fn deal_updates(db: &Db, deal: Uuid) -> i64 {
    let mut conn = db.conn().await.unwrap();
    al::table
        .filter(al::resource_id.eq(deal.to_string()))
        .filter(al::command_id.eq("customers.deals.update"))
        .count()
        .get_result(&mut conn)
        .await
        .unwrap()
}

fn confirm_path(action: Uuid) -> String {
    format!("{ACTIONS}/{action}/confirm")
}

#[actix_web::test]
async fn a_confirm_killed_midway_leaves_the_action_pending_and_the_deal_unchanged() {
    let app = start_with_tools(&AGENTS, tools).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, lead, won) = deal_with_stages(&app, &admin).await;
    let action = propose_failpoint(&app, &admin, deal, won).await;

    // The tool has written the deal (row, log entry, event) on the
    // confirm's connection and holds its lock when that connection dies.
    MODE.store(TERMINATE, Ordering::SeqCst);
    let confirm = app.send_within(
        post_json(&confirm_path(action), &admin, json!({})),
        Duration::from_secs(20),
    );
    let kill = async {
        let pid = tokio::time::timeout(Duration::from_secs(15), async {
            loop {
                match AtomicI32::load(&PID, Ordering::SeqCst) {
                    0 => tokio::time::sleep(Duration::from_millis(20)).await,
                    pid => return pid,
                }
            }
        })
        .await
        .expect("the failpoint ran");
        app.owner_sql(&format!("SELECT pg_terminate_backend({pid})"))
            .await;
    };
    let (res, ()) = tokio::join!(confirm, kill);
    // The connection is gone: 503, as for any request that lost it.
    assert_eq!(res.status, 503, "{}", res.text());

    assert_eq!(status_of(&app, &admin, action).await, "pending");
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());
    assert_eq!(deal_updates(&app.db, deal).await, 0);

    // Nothing was decided: the retry runs the tool and writes once.
    let res = app
        .send(post_json(&confirm_path(action), &admin, json!({})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["pendingAction"]["status"], "confirmed");
    assert_eq!(stage_of(&app, &admin, deal).await, won.to_string());
    assert_eq!(deal_updates(&app.db, deal).await, 1);
}

#[actix_web::test]
async fn a_tool_failing_after_its_write_leaves_no_partial_write() {
    let app = start_with_tools(&AGENTS, tools).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, lead, won) = deal_with_stages(&app, &admin).await;
    let action = propose_failpoint(&app, &admin, deal, won).await;

    // A server error: everything rolls back, the action stays pending.
    MODE.store(SERVER_ERROR, Ordering::SeqCst);
    let res = app
        .send(post_json(&confirm_path(action), &admin, json!({})))
        .await;
    assert_eq!(res.status, 500, "{}", res.text());
    assert_eq!(status_of(&app, &admin, action).await, "pending");
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());
    assert_eq!(deal_updates(&app.db, deal).await, 0);

    // A refusal is the action's outcome: failed, the write undone.
    MODE.store(REFUSE, Ordering::SeqCst);
    let res = app
        .send(post_json(&confirm_path(action), &admin, json!({})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ok"], false, "{body}");
    assert_eq!(body["pendingAction"]["status"], "failed");
    assert_eq!(body["mutationResult"]["error"]["status"], 409, "{body}");
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());
    assert_eq!(deal_updates(&app.db, deal).await, 0);

    // Final: a repeat replays the failure and writes nothing.
    let res = app
        .send(post_json(&confirm_path(action), &admin, json!({})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["pendingAction"]["status"], "failed");
    assert_eq!(deal_updates(&app.db, deal).await, 0);
}

#[actix_web::test]
async fn two_confirms_at_once_write_once() {
    let app = start_with_tools(&AGENTS, tools).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, _, won) = deal_with_stages(&app, &admin).await;
    let action = propose_failpoint(&app, &admin, deal, won).await;

    // The first holds the action (and the deal) while the second arrives.
    MODE.store(BLOCK, Ordering::SeqCst);
    let first = app.send_within(
        post_json(&confirm_path(action), &admin, json!({})),
        Duration::from_secs(20),
    );
    let second = async {
        tokio::time::timeout(Duration::from_secs(15), WROTE.notified())
            .await
            .expect("the first confirm reached its write");
        let res = app
            .send_within(
                post_json(&confirm_path(action), &admin, json!({})),
                Duration::from_secs(10),
            )
            .await;
        RELEASE.notify_one();
        res
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(first.status, 200, "{}", first.text());
    assert_eq!(first.json()["pendingAction"]["status"], "confirmed");
    assert_eq!(second.status, 409, "{}", second.text());
    assert_eq!(second.json()["code"], "invalid_status", "{}", second.text());
    assert_eq!(stage_of(&app, &admin, deal).await, won.to_string());
    assert_eq!(deal_updates(&app.db, deal).await, 1);

    // Once committed, a confirm replays the outcome without a second write.
    let res = app
        .send(post_json(&confirm_path(action), &admin, json!({})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["ok"], true);
    assert_eq!(deal_updates(&app.db, deal).await, 1);
}

#[actix_web::test]
async fn abandoned_executing_actions_are_failed_by_the_expiry_job() {
    use stoa_ai_assistant::schema::ai_pending_actions as pa;
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, _, won) = deal_with_stages(&app, &admin).await;
    let old = propose(&app, &admin, deal, won).await;
    let (_, _, other) = deal_with_stages(&app, &admin).await;
    let fresh = propose(&app, &admin, deal, other).await;

    // What an older stoa left: claimed, then died before the outcome.
    let now = time::OffsetDateTime::now_utc();
    let mut conn = app.db.conn().await.unwrap();
    for (id, claimed) in [(old, now - time::Duration::hours(1)), (fresh, now)] {
        diesel::update(pa::table.find(id))
            .set((
                pa::status.eq("executing"),
                pa::created_at.eq(claimed),
                pa::resolved_at.eq(claimed),
            ))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    drop(conn);

    let actor = stoa_core::command::Actor {
        source: "system",
        ..Default::default()
    };
    let resolved = stoa_ai_assistant::actions::expire_due(&app.db, &actor, 100)
        .await
        .unwrap();
    assert_eq!(resolved, 1);
    let res = app
        .send(post_json(&confirm_path(old), &admin, json!({})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["pendingAction"]["status"], "failed", "{body}");
    assert_eq!(body["mutationResult"]["error"]["code"], "interrupted");
    // A recent claim may still be running under an older stoa: left alone.
    assert_eq!(status_of(&app, &admin, fresh).await, "executing");
}
