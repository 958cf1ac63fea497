//! Jobs act as their creator: each unit re-resolves the creator inside its
//! transaction (`JobContext::unit_as`), writes through the command bus as
//! the creator with the registry's write guards, and a demotion or deletion
//! made while the job runs stops what follows it — never what preceded it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_acl::{AuthContext, ResolvedAcl};
use stoa_auth::testing::user_with_features;
use stoa_core::AppError;
use stoa_core::command::{GuardInput, LogEntry, Verdict, WriteGuard, record_batch};
use stoa_core::db::Db;
use stoa_jobs::{JobContext, JobError, JobHandler, JobSpec, Outcome, UnitError, UnitReport};
use stoa_progress::{enqueue_job_with, service};
use uuid::Uuid;

use super::queue::config;
use super::support::*;

/// How the test's administrator takes the creator's rights away.
#[derive(Clone, Copy)]
enum Demotion {
    /// Empties the ACL of the creator's roles.
    Revoke,
    /// Deletes the creator.
    Delete,
}

/// `test.as_creator` `{units}`: one item per unit, each recorded in the
/// action log as the creator when it still holds `progress.update`. While
/// unit 0 runs, an administrator demotes the creator on another connection.
struct AsCreator {
    demotion: Demotion,
    /// Whether the demotion was still waiting when unit 0 wrote.
    waited: Arc<AtomicUsize>,
}

async fn demote(db: Db, user: Uuid, how: Demotion) {
    let mut conn = db.conn().await.unwrap();
    let sql = match how {
        Demotion::Revoke => {
            "UPDATE role_acls SET features = '{}' WHERE role_id IN \
             (SELECT role_id FROM user_roles WHERE user_id = $1)"
        }
        Demotion::Delete => "UPDATE users SET deleted_at = now() WHERE id = $1",
    };
    diesel::sql_query(sql)
        .bind::<diesel::sql_types::Uuid, _>(user)
        .execute(&mut *conn)
        .await
        .unwrap();
}

fn touch(
    conn: &mut AsyncPgConnection,
    creator: AuthContext,
    item: i64,
) -> BoxFuture<'_, Result<UnitReport, UnitError>> {
    Box::pin(async move {
        let mut report = UnitReport::ok();
        if !creator.has("progress.update") {
            report.fail(
                item.to_string(),
                "the creator no longer holds progress.update",
            );
            return Ok(report);
        }
        let entry = LogEntry {
            resource_kind: Some("test.item".into()),
            resource_id: Some(item.to_string()),
            ..Default::default()
        };
        record_batch(conn, &creator.actor(), vec![("test.items.touch", entry)])
            .await
            .map_err(|e| UnitError::Job(JobError::from(e)))?;
        Ok(report)
    })
}

impl JobHandler for AsCreator {
    fn kind(&self) -> &'static str {
        "test.as_creator"
    }
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let units = ctx.payload()["units"].as_i64().unwrap();
            let user = ctx.scope().unwrap().user_id.unwrap();
            for unit in 0..units {
                let (db, how, waited) = (ctx.db.clone(), self.demotion, self.waited.clone());
                let started = Arc::new(std::sync::Mutex::new(None));
                let slot = started.clone();
                ctx.unit_as(
                    &unit.to_string(),
                    1,
                    Box::new(move |conn, creator| {
                        Box::pin(async move {
                            if unit == 0 {
                                // The administrator acts while the unit holds
                                // the creator's grants: the demotion waits.
                                let task = tokio::spawn(demote(db, user, how));
                                tokio::time::sleep(Duration::from_millis(300)).await;
                                if !task.is_finished() {
                                    waited.fetch_add(1, Ordering::SeqCst);
                                }
                                *slot.lock().unwrap() = Some(task);
                            }
                            touch(conn, creator, unit).await
                        })
                    }),
                )
                .await?;
                let task = started.lock().unwrap().take();
                if let Some(task) = task {
                    task.await.unwrap();
                }
            }
            Ok(Outcome::Completed(Some(json!({"units": units}))))
        })
    }
}

/// Counts the writes it sees (the job's writes pass the registry's guards).
struct Counting(Arc<AtomicUsize>);

impl WriteGuard for Counting {
    fn id(&self) -> &str {
        "test.counting"
    }
    fn applies_to(&self, command_id: &str, _tenant: Option<uuid::Uuid>) -> bool {
        command_id == "test.items.touch"
    }
    fn check<'a>(
        &'a self,
        _conn: &'a mut AsyncPgConnection,
        _input: &'a GuardInput<'a>,
    ) -> BoxFuture<'a, Result<Verdict, AppError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(Verdict::Allow) })
    }
}

struct Run {
    status: String,
    result: serde_json::Value,
    error: Option<String>,
    /// `(actor_user_id, resource_id)` of the job's action-log entries.
    entries: Vec<(Option<Uuid>, String)>,
    guard_calls: usize,
    waited: usize,
}

#[derive(diesel::QueryableByName)]
struct EntryRow {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Uuid>)]
    actor_user_id: Option<Uuid>,
    #[diesel(sql_type = diesel::sql_types::Text)]
    resource_id: String,
}

/// Enqueues a 3-unit job as a user holding `progress.*`, demotes the user
/// during unit 0 and runs the job with a worker built from a module context.
async fn run(how: Demotion) -> (Run, Uuid) {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let user =
        user_with_features(&app.db, &acme, "bulk@acme.com", &["progress.*"], None, None).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_progress::register(&mut registry).unwrap();
    registry.add_write_guard(Arc::new(Counting(calls.clone())));
    let services = stoa_auth::testing::services(&app.db, registry);
    let caller =
        AuthContext::for_user(acme.tenant_id, acme.organization_id, user).with_acl(ResolvedAcl {
            features: vec!["progress.*".into()],
            selected_organization_id: Some(acme.organization_id),
            ..Default::default()
        });
    let queued = {
        let mut conn = app.db.conn().await.unwrap();
        enqueue_job_with(
            &mut conn,
            &caller,
            JobSpec::new("test.as_creator", json!({"units": 3}), 3).max_attempts(1),
        )
        .await
        .unwrap()
    };
    let waited = Arc::new(AtomicUsize::new(0));
    let handler = Arc::new(AsCreator {
        demotion: how,
        waited: waited.clone(),
    });
    let workers = workers(app.db.clone(), vec![handler], config(5_000)).with_services(&services);
    assert!(workers.run_one().await.unwrap());
    let mut conn = app.db.conn().await.unwrap();
    let progress = service::get(&mut conn, queued.progress_job_id)
        .await
        .unwrap()
        .unwrap();
    let entries: Vec<EntryRow> = diesel::sql_query(
        "SELECT actor_user_id, resource_id FROM action_logs \
         WHERE resource_kind = 'test.item' ORDER BY resource_id",
    )
    .load(&mut *conn)
    .await
    .unwrap();
    (
        Run {
            status: progress.status.clone(),
            result: progress.result_summary.clone().unwrap_or_default(),
            error: progress.error_message.clone(),
            entries: entries
                .into_iter()
                .map(|e| (e.actor_user_id, e.resource_id))
                .collect(),
            guard_calls: AtomicUsize::load(&calls, Ordering::SeqCst),
            waited: AtomicUsize::load(&waited, Ordering::SeqCst),
        },
        user,
    )
}

#[actix_web::test]
async fn a_creator_demoted_while_the_job_runs_fails_the_items_after_the_demotion() {
    let (run, user) = run(Demotion::Revoke).await;
    assert_eq!(
        run.waited, 1,
        "the demotion waited for the unit that held the grants"
    );
    assert_eq!(run.status, "completed");
    // Unit 0 wrote as the creator, through the registry's guards; units 1
    // and 2 ran after the demotion and wrote nothing.
    assert_eq!(run.entries, vec![(Some(user), "0".to_string())]);
    assert_eq!(run.guard_calls, 1);
    assert_eq!(run.result["failedCount"], 2, "{}", run.result);
    assert_eq!(
        run.result["failedItems"][0]["message"],
        "the creator no longer holds progress.update"
    );
}

#[actix_web::test]
async fn a_creator_deleted_while_the_job_runs_ends_the_job_for_good() {
    let (run, user) = run(Demotion::Delete).await;
    assert_eq!(
        run.waited, 1,
        "the deletion waited for the unit that held the user"
    );
    assert_eq!(run.status, "failed");
    let error = run.error.unwrap_or_default();
    assert!(
        error.contains("can no longer act") && error.contains("deleted or deactivated"),
        "{error}"
    );
    assert_eq!(run.entries, vec![(Some(user), "0".to_string())]);
    assert_eq!(run.guard_calls, 1);
}

#[actix_web::test]
async fn a_job_without_a_module_context_cannot_act_as_anyone() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let caller = AuthContext::for_user(acme.tenant_id, acme.organization_id, acme.admin).with_acl(
        ResolvedAcl {
            features: vec!["*".into()],
            ..Default::default()
        },
    );
    let queued = {
        let mut conn = app.db.conn().await.unwrap();
        enqueue_job_with(
            &mut conn,
            &caller,
            JobSpec::new("test.as_creator", json!({"units": 1}), 1).max_attempts(1),
        )
        .await
        .unwrap()
    };
    let handler = Arc::new(AsCreator {
        demotion: Demotion::Revoke,
        waited: Arc::new(AtomicUsize::new(0)),
    });
    // Built without `with_services`: the handler's resolution fails for good.
    let workers = workers(app.db.clone(), vec![handler], config(5_000));
    assert!(workers.run_one().await.unwrap());
    let mut conn = app.db.conn().await.unwrap();
    let progress = service::get(&mut conn, queued.progress_job_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(progress.status, "failed");
    assert!(
        progress
            .error_message
            .as_deref()
            .is_some_and(|e| e.contains("with_services")),
        "{:?}",
        progress.error_message
    );
}
