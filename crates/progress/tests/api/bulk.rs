//! Bulk jobs: progress by items, durable per-unit outcomes, final failures,
//! the caller's scope, several jobs in flight in one process.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_web::http::StatusCode;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::{AuthContext, ResolvedAcl};
use stoa_core::AppError;
use stoa_jobs::{
    JobContext, JobError, JobHandler, JobSpec, Outcome, UnitError, UnitReport, WorkerConfig,
};
use stoa_progress::service;
use stoa_progress::{enqueue_job, enqueue_job_with};
use stoa_testkit::{count, sql};

use super::queue::config;
use super::support::*;

/// The caller a route would have: a user of `tenant` with `org` selected.
fn caller(tenant: &Tenant, user: uuid::Uuid) -> AuthContext {
    AuthContext::for_user(tenant.tenant_id, tenant.organization_id, user).with_acl(ResolvedAcl {
        features: vec!["*".into()],
        selected_organization_id: Some(tenant.organization_id),
        ..Default::default()
    })
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// `test.bulk` `{items, unitSize}`: writes one `bulk_effects` row per item.
/// Items `≡ 3 (mod 20,000)` fail on their own; unit 70 fails as a whole
/// (its writes roll back); the first attempt stops before unit 50.
struct Bulk;

const UNIT: i64 = 1_000;

impl JobHandler for Bulk {
    fn kind(&self) -> &'static str {
        "test.bulk"
    }
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let items = ctx.payload()["items"].as_i64().unwrap();
            for unit in 0..items / UNIT {
                if unit == 50 && ctx.job.attempts == 1 {
                    return Err(JobError::retry("connection lost"));
                }
                let (from, to) = (unit * UNIT, (unit + 1) * UNIT - 1);
                ctx.unit(
                    &unit.to_string(),
                    UNIT as usize,
                    Box::new(move |conn| {
                        Box::pin(async move {
                            diesel::sql_query(
                                "INSERT INTO bulk_effects SELECT g FROM generate_series($1, $2) g \
                                 WHERE g % 20000 <> 3",
                            )
                            .bind::<diesel::sql_types::BigInt, _>(from)
                            .bind::<diesel::sql_types::BigInt, _>(to)
                            .execute(conn)
                            .await?;
                            if unit == 70 {
                                return Err(UnitError::items(
                                    (from..=to).map(|i| i.to_string()),
                                    "locked by an import",
                                ));
                            }
                            let mut report = UnitReport::ok();
                            for item in (from..=to).filter(|i| i % 20_000 == 3) {
                                report.fail(item.to_string(), "not found");
                            }
                            Ok(report)
                        })
                    }),
                )
                .await?;
            }
            Ok(Outcome::Completed(Some(
                json!({"affectedCount": count_ok(ctx).await}),
            )))
        })
    }
}

async fn count_ok(ctx: &JobContext) -> i64 {
    let mut conn = ctx.db.conn().await.unwrap();
    diesel::sql_query("SELECT count(*) AS n FROM bulk_effects")
        .get_result::<Count>(&mut *conn)
        .await
        .unwrap()
        .n
}

#[actix_web::test]
async fn a_job_of_100000_items_counts_items_and_lists_failed_items_after_a_retry() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    app.owner_sql("CREATE TABLE bulk_effects (item bigint PRIMARY KEY)")
        .await;
    let queued = {
        let mut conn = app.db.conn().await.unwrap();
        enqueue_job(
            &mut conn,
            &caller(&acme, acme.admin),
            "test.bulk",
            json!({"items": 100_000}),
            100_000,
        )
        .await
        .unwrap()
    };
    let workers = workers(app.db.clone(), vec![Arc::new(Bulk)], config(1000));
    let admin = token_for(&app.db, acme.admin).await;
    let detail = format!("/api/progress/jobs/{}", queued.progress_job_id);

    // The first attempt does 50 units of 1,000 items, then fails.
    assert!(workers.run_one().await.unwrap());
    let job = app.send(get(&detail, &admin)).await.json();
    assert_eq!(job["totalCount"], 100_000);
    assert_eq!(
        job["processedCount"], 50_000,
        "progress counts items: {job}"
    );
    assert_eq!(job["progressPercent"], 50);
    assert_eq!(job["status"], "running");

    // The retry does the other 50 units only.
    sql(&app.db, "UPDATE job_queue SET run_after = now()").await;
    assert!(workers.run_one().await.unwrap());
    let job = app.send(get(&detail, &admin)).await.json();
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["processedCount"], 100_000);
    assert_eq!(job["progressPercent"], 100);
    let summary = &job["resultSummary"];
    // Five single items and the thousand of unit 70, over both attempts.
    assert_eq!(summary["failedCount"], 1_005);
    assert_eq!(summary["affectedCount"], 100_000 - 1_005);
    let failed = summary["failedItems"].as_array().unwrap();
    assert_eq!(failed.len(), 100, "the list is bounded");
    let ids: Vec<&str> = failed.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(&ids[..5], ["3", "20003", "40003", "60003", "70000"]);
    assert_eq!(failed[0]["message"], "not found");
    assert_eq!(failed[4]["message"], "locked by an import");
    // Unit 70's writes rolled back; every other item was written once.
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM bulk_effects").await,
        100_000 - 1_005
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM job_units").await,
        100
    );
    assert_eq!(
        count(&app.db, "SELECT sum(items)::bigint AS n FROM job_units").await,
        100_000
    );
}

/// `test.final`: gives up for good (`{status}` picks how).
struct GivesUp;

impl JobHandler for GivesUp {
    fn kind(&self) -> &'static str {
        "test.final"
    }
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            match ctx.payload()["how"].as_str() {
                Some("forbidden") => Err(AppError::forbidden().into()),
                _ => Err(JobError::fatal("Pipeline stage does not exist")),
            }
        })
    }
}

#[actix_web::test]
async fn a_final_failure_is_not_retried() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let workers = workers(app.db.clone(), vec![Arc::new(GivesUp)], config(1000));
    for (how, message) in [
        ("fatal", "Pipeline stage does not exist"),
        ("forbidden", "Forbidden"),
    ] {
        let queued = {
            let mut conn = app.db.conn().await.unwrap();
            enqueue_job_with(
                &mut conn,
                &caller(&acme, acme.admin),
                JobSpec::new("test.final", json!({"how": how}), 3).max_attempts(5),
            )
            .await
            .unwrap()
        };
        assert!(workers.run_one().await.unwrap());
        sql(&app.db, "UPDATE job_queue SET run_after = now()").await;
        assert!(!workers.run_one().await.unwrap(), "{how}: nothing to retry");
        let job = app
            .send(get(
                &format!("/api/progress/jobs/{}", queued.progress_job_id),
                &admin,
            ))
            .await
            .json();
        assert_eq!(job["status"], "failed");
        assert_eq!(job["errorMessage"], message);
        let attempts = count(
            &app.db,
            &format!(
                "SELECT attempts::bigint AS n FROM job_queue WHERE id = '{}' AND status = 'dead'",
                queued.job_id
            ),
        )
        .await;
        assert_eq!(attempts, 1, "{how}: dead after one attempt");
    }
    // Passing failures are retried.
    assert!(!JobError::from(AppError::internal("db down")).is_final());
    assert!(!JobError::from(AppError::conflict("busy")).is_final());
    assert!(JobError::from(AppError::not_found("Not found")).is_final());
}

/// `test.scope`: records the scope and actor it ran with.
struct ScopeProbe(Arc<std::sync::Mutex<Option<Value>>>);

impl JobHandler for ScopeProbe {
    fn kind(&self) -> &'static str {
        "test.scope"
    }
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let scope = ctx.scope().ok_or_else(|| JobError::fatal("no scope"))?;
            let actor = ctx.actor();
            *self.0.lock().unwrap() = Some(json!({
                "tenant": scope.tenant_id,
                "organization": scope.organization_id,
                "user": scope.user_id,
                "actorTenant": actor.tenant_id,
                "actorUser": actor.user_id,
                "source": actor.source,
            }));
            Ok(Outcome::Completed(None))
        })
    }
}

#[actix_web::test]
async fn enqueue_job_keeps_the_callers_scope_for_the_worker() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let other = seed(&app.db, "Other Inc", "other.com").await;
    let queued = {
        let mut conn = app.db.conn().await.unwrap();
        enqueue_job_with(
            &mut conn,
            &caller(&acme, acme.employee),
            JobSpec::new("test.scope", json!({}), 2)
                .name("Move selected deals")
                .meta(json!({"source": "test"})),
        )
        .await
        .unwrap()
    };
    let seen = Arc::new(std::sync::Mutex::new(None));
    let workers = workers(
        app.db.clone(),
        vec![Arc::new(ScopeProbe(seen.clone()))],
        config(1000),
    );
    assert!(workers.run_one().await.unwrap());
    assert_eq!(
        seen.lock().unwrap().clone().unwrap(),
        json!({
            "tenant": acme.tenant_id,
            "organization": acme.organization_id,
            "user": acme.employee,
            "actorTenant": acme.tenant_id,
            "actorUser": acme.employee,
            "source": "system",
        })
    );
    let mut conn = app.db.conn().await.unwrap();
    let record = service::get(&mut conn, queued.progress_job_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.tenant_id, acme.tenant_id);
    assert_eq!(record.organization_id, Some(acme.organization_id));
    assert_eq!(record.started_by_user_id, Some(acme.employee));
    assert_eq!(record.name, "Move selected deals");
    assert_eq!(record.total_count, Some(2));
    drop(conn);

    // Another tenant does not see it.
    let path = format!("/api/progress/jobs/{}", queued.progress_job_id);
    let outsider = token_for(&app.db, other.admin).await;
    let res = app.send(get(&path, &outsider)).await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    let insider = token_for(&app.db, acme.admin).await;
    assert_eq!(app.send(get(&path, &insider)).await.status, StatusCode::OK);

    // A caller without a tenant enqueues nothing.
    let mut tenantless = caller(&acme, acme.admin);
    tenantless.tenant_id = None;
    let mut conn = app.db.conn().await.unwrap();
    let err = enqueue_job(&mut conn, &tenantless, "test.scope", json!({}), 1)
        .await
        .unwrap_err();
    assert_eq!(err.status(), StatusCode::FORBIDDEN);
    drop(conn);
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM job_queue").await,
        1
    );
}

/// `test.rendezvous`: finishes only when `want` jobs are running at once.
struct Rendezvous {
    arrived: Arc<AtomicUsize>,
    want: usize,
}

impl JobHandler for Rendezvous {
    fn kind(&self) -> &'static str {
        "test.rendezvous"
    }
    fn run<'a>(&'a self, _: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            self.arrived.fetch_add(1, Ordering::SeqCst);
            for _ in 0..300 {
                if AtomicUsize::load(&self.arrived, Ordering::SeqCst) >= self.want {
                    return Ok(Outcome::Completed(None));
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(JobError::fatal("ran alone"))
        })
    }
}

/// Queues a `test.rendezvous` job as acme's admin; its progress record.
async fn queue_rendezvous(db: &stoa_core::db::Db, acme: &Tenant) -> uuid::Uuid {
    let mut conn = db.conn().await.unwrap();
    enqueue_job(
        &mut conn,
        &caller(acme, acme.admin),
        "test.rendezvous",
        json!({}),
        1,
    )
    .await
    .unwrap()
    .progress_job_id
}

/// Runs workers for `test.rendezvous` jobs (each waits for `want` of them)
/// in the background.
fn run_rendezvous(
    db: &stoa_core::db::Db,
    want: usize,
    config: WorkerConfig,
) -> actix_web::rt::task::JoinHandle<()> {
    let handler = Arc::new(Rendezvous {
        arrived: Arc::new(AtomicUsize::new(0)),
        want,
    });
    let workers = Arc::new(workers(db.clone(), vec![handler], config));
    actix_web::rt::spawn(workers.run())
}

/// The status of progress record `id` once it left `pending`/`running`, or
/// after `tries` polls 25 ms apart.
async fn settled(db: &stoa_core::db::Db, id: uuid::Uuid, tries: usize) -> String {
    let mut status = String::new();
    for _ in 0..tries {
        let mut conn = db.conn().await.unwrap();
        status = service::get(&mut conn, id).await.unwrap().unwrap().status;
        if status != "pending" && status != "running" {
            break;
        }
        drop(conn);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    status
}

#[actix_web::test]
async fn two_jobs_run_at_once_in_one_worker_process() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let first = queue_rendezvous(&app.db, &acme).await;
    let second = queue_rendezvous(&app.db, &acme).await;
    let running = run_rendezvous(
        &app.db,
        2,
        WorkerConfig {
            count: 2,
            ..config(1000)
        },
    );
    let statuses = [
        settled(&app.db, first, 200).await,
        settled(&app.db, second, 200).await,
    ];
    running.abort();
    assert_eq!(statuses, ["completed", "completed"]);
}

#[actix_web::test]
async fn a_job_queued_by_this_process_starts_without_waiting_for_the_poll() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    // Idle workers that poll once a minute: only the wake can start the job.
    let running = run_rendezvous(
        &app.db,
        1,
        WorkerConfig {
            poll: Duration::from_secs(60),
            schedule_tick: Duration::from_secs(60),
            ..config(1000)
        },
    );
    // Let the loop find the queue empty and start waiting.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let queued = queue_rendezvous(&app.db, &acme).await;
    // Not woken: the job waits for the next poll.
    assert_eq!(settled(&app.db, queued, 8).await, "pending");
    stoa_jobs::wake_workers();
    let status = settled(&app.db, queued, 200).await;
    running.abort();
    assert_eq!(status, "completed");
}
