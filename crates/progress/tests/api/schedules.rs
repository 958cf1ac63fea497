//! Recurring jobs: one run per period however many workers, and the
//! progress module's own sweeps.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use stoa_jobs::{JobContext, JobError, JobHandler, Outcome, Schedule, Workers};
use stoa_progress::service::{self, NewJob};
use stoa_testkit::{count, sql};

use super::queue::config;
use super::support::*;

/// `test.tick`: counts its runs.
struct Tick(Arc<AtomicUsize>);

impl JobHandler for Tick {
    fn kind(&self) -> &'static str {
        "test.tick"
    }
    fn run<'a>(&'a self, _: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(Outcome::Completed(None))
        })
    }
}

fn two_workers(
    db: &stoa_core::db::Db,
    period: Duration,
    runs: &Arc<AtomicUsize>,
) -> [Arc<Workers>; 2] {
    [0, 1].map(|_| {
        Arc::new(
            workers(db.clone(), vec![Arc::new(Tick(runs.clone()))], config(1000))
                .with_schedules(vec![Schedule::new("test.tick", "test.tick", period)]),
        )
    })
}

#[actix_web::test]
async fn two_workers_enqueue_a_due_schedule_once() {
    let app = start().await;
    let runs = Arc::new(AtomicUsize::new(0));
    let [a, b] = two_workers(&app.db, Duration::from_secs(3600), &runs);
    let (ra, rb) = tokio::join!(a.register_schedules(), b.register_schedules());
    ra.unwrap();
    rb.unwrap();
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM job_schedules WHERE name = 'test.tick'"
        )
        .await,
        1
    );
    // Due at once after registration: both race, one enqueues.
    let (ea, eb) = tokio::join!(a.enqueue_due(), b.enqueue_due());
    assert_eq!(ea.unwrap() + eb.unwrap(), 1);
    // Not due again within the period, even once the run is finished.
    assert!(a.run_one().await.unwrap());
    let (ea, eb) = tokio::join!(a.enqueue_due(), b.enqueue_due());
    assert_eq!(ea.unwrap() + eb.unwrap(), 0);
    // Registering again (a restart) keeps the next run.
    a.register_schedules().await.unwrap();
    assert_eq!(a.enqueue_due().await.unwrap(), 0);
    // The next period: once again.
    sql(&app.db, "UPDATE job_schedules SET next_run_at = now()").await;
    let (ea, eb) = tokio::join!(a.enqueue_due(), b.enqueue_due());
    assert_eq!(ea.unwrap() + eb.unwrap(), 1);
    // A run still waiting is not doubled when the period comes round again.
    sql(&app.db, "UPDATE job_schedules SET next_run_at = now()").await;
    assert_eq!(a.enqueue_due().await.unwrap(), 0);
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM job_queue WHERE schedule = 'test.tick'"
        )
        .await,
        2
    );
}

#[actix_web::test]
async fn a_recurring_job_runs_once_per_period_with_two_running_workers() {
    let app = start().await;
    let runs = Arc::new(AtomicUsize::new(0));
    let period = Duration::from_millis(400);
    let [a, b] = two_workers(&app.db, period, &runs);
    let loops = [actix_web::rt::spawn(a.run()), actix_web::rt::spawn(b.run())];
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for running in loops {
        running.abort();
    }
    let ran = AtomicUsize::load(&runs, Ordering::SeqCst);
    // Runs near 0, 400 and 800 ms; two workers each enqueuing would make six.
    assert!((2..=3).contains(&ran), "ran {ran} times");
    #[derive(diesel::QueryableByName)]
    struct Gap {
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Double>)]
        ms: Option<f64>,
    }
    let mut conn = app.db.conn().await.unwrap();
    let gap: Gap = diesel::sql_query(
        "SELECT min(ms) AS ms FROM (SELECT extract(epoch FROM created_at - lag(created_at) \
         OVER (ORDER BY created_at))::float8 * 1000 AS ms FROM job_queue WHERE schedule = 'test.tick') g",
    )
    .get_result(&mut *conn)
    .await
    .unwrap();
    let ms = gap.ms.unwrap();
    assert!(ms >= 390.0, "two runs {ms} ms apart");
}

diesel::table! {
    job_queue (id) {
        id -> Uuid,
        kind -> Text,
        status -> Text,
        updated_at -> Timestamptz,
    }
}

#[actix_web::test]
async fn the_progress_sweeps_fail_silent_records_and_prune_old_jobs() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let other = seed(&app.db, "Other Inc", "other.com").await;
    let mut conn = app.db.conn().await.unwrap();
    let mut records = Vec::new();
    for tenant in [&acme, &other] {
        let id = service::create(
            &mut conn,
            &NewJob {
                job_type: "x".into(),
                name: "silent".into(),
                tenant_id: tenant.tenant_id,
                ..Default::default()
            },
        )
        .await
        .unwrap();
        records.push(id);
    }
    let live = service::create(
        &mut conn,
        &NewJob {
            job_type: "x".into(),
            name: "alive".into(),
            tenant_id: acme.tenant_id,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    diesel::sql_query(
        "UPDATE progress_jobs SET status = 'running', started_at = now() - interval '5 minutes', \
         heartbeat_at = now() - interval '2 minutes' WHERE name = 'silent'",
    )
    .execute(&mut *conn)
    .await
    .unwrap();
    diesel::sql_query(
        "UPDATE progress_jobs SET status = 'running', started_at = now(), heartbeat_at = now() \
         WHERE name = 'alive'",
    )
    .execute(&mut *conn)
    .await
    .unwrap();
    // Finished queue rows: one old enough to prune, one recent.
    diesel::sql_query(
        "INSERT INTO job_queue (kind, status) VALUES ('old', 'done'), ('old', 'dead'), ('recent', 'done')",
    )
    .execute(&mut *conn)
    .await
    .unwrap();
    diesel::sql_query(
        "UPDATE job_queue SET updated_at = now() - interval '8 days' WHERE kind = 'old'",
    )
    .execute(&mut *conn)
    .await
    .unwrap();

    // Outbox events: finished ones older than the retention go (with their
    // delivery rows); a pending one stays however old, and so do recent ones.
    diesel::sql_query(
        "INSERT INTO event_outbox (name, payload, status, created_at) VALUES \
         ('old.delivered', '{}', 'delivered', now() - interval '8 days'), \
         ('old.dead', '{}', 'dead', now() - interval '8 days'), \
         ('old.pending', '{}', 'pending', now() - interval '8 days'), \
         ('recent.delivered', '{}', 'delivered', now() - interval '6 days')",
    )
    .execute(&mut *conn)
    .await
    .unwrap();
    diesel::sql_query(
        "INSERT INTO event_deliveries (outbox_id, subscriber, status, attempts) \
         SELECT id, 'probe', 'dead', 8 FROM event_outbox WHERE name = 'old.dead'",
    )
    .execute(&mut *conn)
    .await
    .unwrap();

    let workers =
        workers(app.db.clone(), all_handlers(), config(1000)).with_schedules(all_schedules());
    workers.register_schedules().await.unwrap();
    assert_eq!(workers.enqueue_due().await.unwrap(), 3);
    while workers.run_one().await.unwrap() {}

    for id in records {
        let job = service::get(&mut conn, id).await.unwrap().unwrap();
        assert_eq!(job.status, "failed");
        assert_eq!(
            job.error_message.as_deref(),
            Some("Job stale: no heartbeat for 60 seconds")
        );
    }
    let alive = service::get(&mut conn, live).await.unwrap().unwrap();
    assert_eq!(alive.status, "running");
    let kinds: Vec<String> = job_queue::table
        .select(job_queue::kind)
        .order(job_queue::kind.asc())
        .load(&mut *conn)
        .await
        .unwrap();
    assert_eq!(
        kinds,
        [
            "core.prune_outbox",
            "progress.prune_queue",
            "progress.sweep_stale",
            "recent"
        ]
    );
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM event_outbox WHERE name IN ('old.pending', 'recent.delivered')"
        )
        .await,
        2
    );
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM event_outbox WHERE name LIKE 'old.%'"
        )
        .await,
        1,
        "only the pending old event is left"
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM event_deliveries").await,
        0
    );
    // Both recurring runs are done and not due again for their period.
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM job_queue WHERE schedule IS NOT NULL AND status = 'done'"
        )
        .await,
        3
    );
    assert_eq!(workers.enqueue_due().await.unwrap(), 0);
}
