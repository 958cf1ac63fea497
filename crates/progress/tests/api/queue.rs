//! Workers run queued jobs, record units once, and retry after a crash.

use std::sync::Arc;
use std::time::Duration;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_jobs::{JobContext, JobError, JobHandler, Outcome, UnitReport, WorkerConfig, enqueue};
use stoa_progress::service::{self, NewJob};

use super::support::*;

diesel::table! {
    job_queue (id) {
        id -> Uuid,
        status -> Text,
        attempts -> Int4,
    }
}

diesel::table! {
    job_units (job_id, unit) {
        job_id -> Uuid,
        unit -> Text,
    }
}

pub fn config(visibility_ms: u64) -> WorkerConfig {
    WorkerConfig {
        count: 1,
        visibility: Duration::from_millis(visibility_ms.max(1000)),
        poll: Duration::from_millis(20),
        schedule_tick: Duration::from_millis(20),
    }
}

async fn new_job(
    db: &stoa_core::db::Db,
    tenant: &Tenant,
    units: i32,
    millis: u64,
    max_attempts: i32,
) -> (uuid::Uuid, uuid::Uuid) {
    let mut conn = db.conn().await.unwrap();
    let progress = service::create(
        &mut conn,
        &NewJob {
            job_type: "system.sleep_units".into(),
            name: "Test".into(),
            total_count: Some(units),
            tenant_id: tenant.tenant_id,
            organization_id: Some(tenant.organization_id),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let job = enqueue(
        &mut conn,
        "system.sleep_units",
        &json!({"units": units, "unitMillis": millis}),
        Some(progress),
        max_attempts,
    )
    .await
    .unwrap();
    (job, progress)
}

#[actix_web::test]
async fn a_worker_runs_a_job_and_progress_reaches_completed() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let (_, progress) = new_job(&app.db, &acme, 5, 0, 3).await;
    let workers = workers(app.db.clone(), all_handlers(), config(1000));
    assert!(workers.run_one().await.unwrap());
    assert!(!workers.run_one().await.unwrap(), "nothing else is due");
    let admin = token_for(&app.db, acme.admin).await;
    let job = app
        .send(get(&format!("/api/progress/jobs/{progress}"), &admin))
        .await
        .json();
    assert_eq!(job["status"], "completed");
    assert_eq!(job["processedCount"], 5);
    assert_eq!(job["progressPercent"], 100);
    assert_eq!(
        job["resultSummary"],
        json!({"units": 5, "ranThisAttempt": 5, "failedCount": 0, "failedItems": []})
    );
    let recent = app.send(get("/api/progress/active", &admin)).await.json();
    assert_eq!(recent["recentlyCompleted"][0]["id"], progress.to_string());
}

#[actix_web::test]
async fn an_abandoned_job_is_retried_after_the_visibility_timeout_without_redoing_units() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let (job, progress) = new_job(&app.db, &acme, 6, 0, 3).await;
    // A first worker claims the job, finishes two units and dies.
    let crashed = workers(app.db.clone(), all_handlers(), config(1000));
    let claimed = crashed.claim().await.unwrap().unwrap();
    assert_eq!(claimed.id, job);
    let ctx = JobContext::new(app.db.clone(), claimed);
    for unit in ["0", "1"] {
        assert!(
            ctx.unit(
                unit,
                1,
                Box::new(|_| Box::pin(async { Ok(UnitReport::ok()) }))
            )
            .await
            .unwrap()
            .ran
        );
    }
    // While its lease holds, nobody else takes the job.
    let rescuer = workers(app.db.clone(), all_handlers(), config(1000));
    assert!(!rescuer.run_one().await.unwrap());
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(rescuer.run_one().await.unwrap());
    let mut conn = app.db.conn().await.unwrap();
    let (status, attempts): (String, i32) = job_queue::table
        .select((job_queue::status, job_queue::attempts))
        .first(&mut *conn)
        .await
        .unwrap();
    assert_eq!((status.as_str(), attempts), ("done", 2));
    let units: i64 = job_units::table
        .count()
        .get_result(&mut *conn)
        .await
        .unwrap();
    assert_eq!(units, 6);
    let job = service::get(&mut conn, progress).await.unwrap().unwrap();
    assert_eq!(job.status, "completed");
    assert_eq!(
        job.result_summary,
        Some(json!({"units": 6, "ranThisAttempt": 4, "failedCount": 0, "failedItems": []}))
    );
}

struct AlwaysFails;

impl JobHandler for AlwaysFails {
    fn kind(&self) -> &'static str {
        "test.fails"
    }
    fn run<'a>(&'a self, _: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async { Err(JobError::retry("boom")) })
    }
}

#[actix_web::test]
async fn failures_back_off_and_end_dead_with_a_failed_progress_record() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let mut conn = app.db.conn().await.unwrap();
    let progress = service::create(
        &mut conn,
        &NewJob {
            job_type: "test.fails".into(),
            name: "x".into(),
            tenant_id: acme.tenant_id,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    enqueue(&mut conn, "test.fails", &json!({}), Some(progress), 2)
        .await
        .unwrap();
    let workers = workers(app.db.clone(), vec![Arc::new(AlwaysFails)], config(1000));
    assert!(workers.run_one().await.unwrap());
    let (status, attempts): (String, i32) = job_queue::table
        .select((job_queue::status, job_queue::attempts))
        .first(&mut *conn)
        .await
        .unwrap();
    assert_eq!((status.as_str(), attempts), ("queued", 1));
    assert!(!workers.run_one().await.unwrap(), "backing off");
    diesel::sql_query("UPDATE job_queue SET run_after = now()")
        .execute(&mut *conn)
        .await
        .unwrap();
    assert!(workers.run_one().await.unwrap());
    let (status, attempts): (String, i32) = job_queue::table
        .select((job_queue::status, job_queue::attempts))
        .first(&mut *conn)
        .await
        .unwrap();
    assert_eq!((status.as_str(), attempts), ("dead", 2));
    let job = service::get(&mut conn, progress).await.unwrap().unwrap();
    assert_eq!(
        (job.status.as_str(), job.error_message.as_deref()),
        ("failed", Some("boom"))
    );
    assert_eq!(stoa_jobs::queue::backoff(3).as_secs(), 8);
}

#[derive(diesel::QueryableByName, Debug, PartialEq, Eq)]
struct Prepared {
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    at: String,
}

#[actix_web::test]
async fn polling_reuses_one_prepared_claim_statement() {
    let test_db = stoa_testkit::TestDb::new().await;
    // One connection, so every poll runs where the statement cache lives.
    // Test fixtures: the workers' claims and the check share the bypass pool.
    let db = stoa_core::db::Db::from_url(test_db.url(), 1, Duration::from_secs(10))
        .unwrap()
        .fixtures();
    let workers = workers(db.clone(), all_handlers(), config(1000));
    let prepared = async || -> Vec<Prepared> {
        let mut conn = db.conn().await.unwrap();
        // The pattern is bound, so this query never matches itself.
        diesel::sql_query(
            "SELECT name, prepare_time::text AS at FROM pg_prepared_statements \
             WHERE statement LIKE $1 ORDER BY name",
        )
        .bind::<diesel::sql_types::Text, _>("%\"job_queue\"%SKIP LOCKED%")
        .load(&mut *conn)
        .await
        .unwrap()
    };
    assert!(workers.claim().await.unwrap().is_none());
    let first = prepared().await;
    assert_eq!(first.len(), 1, "the claim stays prepared: {first:?}");
    for _ in 0..3 {
        assert!(!workers.run_one().await.unwrap());
    }
    assert_eq!(prepared().await, first, "and is never prepared again");
}

#[actix_web::test]
async fn job_transitions_emit_events_with_the_job_as_resource() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let (_, progress) = new_job(&app.db, &acme, 2, 0, 3).await;
    let workers = workers(app.db.clone(), all_handlers(), config(1000));
    assert!(workers.run_one().await.unwrap());
    let events = stoa_testkit::outbox_events(&app.db).await;
    let names: Vec<&str> = events.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["progress.job.created", "progress.job.completed"]);
    for event in &events {
        assert_eq!(event["tenantId"], json!(acme.tenant_id));
        assert_eq!(event["organizationId"], json!(acme.organization_id));
        assert_eq!(event["resourceKind"], "progress.job");
        assert_eq!(event["resourceId"], json!(progress.to_string()));
        assert_eq!(event["payload"]["id"], json!(progress));
        assert_eq!(event["payload"]["jobType"], "system.sleep_units");
    }
    assert_eq!(events[1]["actor"]["source"], "system");
    assert_eq!(events[1]["payload"]["status"], "completed");
}
