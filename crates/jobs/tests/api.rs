//! The queue on its own: no progress module, records kept by the program
//! (or none). The protocol with progress's records is tested in
//! stoa-progress (`tests/api/{queue,bulk,schedules,creator,scope}.rs`).

#![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_core::db::Db;
use stoa_jobs::{
    JobContext, JobError, JobHandler, JobRecords, JobScope, JobSpec, NewRecord, NoRecords, Outcome,
    UnitReport, WorkerConfig, Workers, enqueue, enqueue_recorded,
};
use uuid::Uuid;

/// `test.units` `{units, items}`: that many units of `items` items each.
struct Units;

impl JobHandler for Units {
    fn kind(&self) -> &'static str {
        "test.units"
    }
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let units = ctx.payload()["units"].as_u64().unwrap_or(0);
            let items = ctx.payload()["items"].as_u64().unwrap_or(1) as usize;
            if ctx.cancel_requested().await {
                return Ok(Outcome::Cancelled);
            }
            for unit in 0..units {
                let mut report = UnitReport::ok();
                if unit == 0 {
                    report.fail("item-0", "refused");
                }
                ctx.unit(
                    &unit.to_string(),
                    items,
                    Box::new(move |_| Box::pin(async move { Ok(report) })),
                )
                .await?;
            }
            Ok(Outcome::Completed(Some(json!({"units": units}))))
        })
    }
}

/// A program's own records: every call the queue makes, in order.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Recorder {
    fn note(&self, call: String) {
        self.0.lock().unwrap().push(call);
    }
    fn calls(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl JobRecords for Recorder {
    fn create<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        record: NewRecord,
    ) -> BoxFuture<'a, QueryResult<Uuid>> {
        self.note(format!("create {} {:?}", record.name, record.total_count));
        Box::pin(async { Ok(Uuid::new_v4()) })
    }
    fn start<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>> {
        self.note("start".into());
        Box::pin(async { Ok(()) })
    }
    fn heartbeat<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async { Ok(()) })
    }
    fn add_processed<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
        items: i32,
    ) -> BoxFuture<'a, QueryResult<()>> {
        self.note(format!("processed {items}"));
        Box::pin(async { Ok(()) })
    }
    fn complete<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
        summary: Option<Value>,
    ) -> BoxFuture<'a, QueryResult<()>> {
        let summary = summary.unwrap_or(Value::Null);
        self.note(format!(
            "complete units={} failed={}",
            summary["units"], summary["failedCount"]
        ));
        Box::pin(async { Ok(()) })
    }
    fn fail<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
        message: &'a str,
        _: Option<Value>,
    ) -> BoxFuture<'a, QueryResult<()>> {
        self.note(format!("fail {message}"));
        Box::pin(async { Ok(()) })
    }
    fn cancelled<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>> {
        self.note("cancelled".into());
        Box::pin(async { Ok(()) })
    }
    fn cancel_requested<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
    ) -> BoxFuture<'a, QueryResult<bool>> {
        self.note("cancel?".into());
        Box::pin(async { Ok(false) })
    }
}

fn config() -> WorkerConfig {
    WorkerConfig {
        count: 1,
        visibility: Duration::from_secs(30),
        poll: Duration::from_millis(50),
        schedule_tick: Duration::from_secs(3600),
    }
}

async fn db() -> (stoa_testkit::TestDb, Db) {
    let test_db = stoa_testkit::TestDb::new().await;
    let db = Db::from_url(test_db.url(), 2, Duration::from_secs(10))
        .unwrap()
        .fixtures();
    (test_db, db)
}

#[derive(diesel::QueryableByName)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Text)]
    status: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    units: i64,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    items_failed: i32,
}

async fn row(db: &Db, id: Uuid) -> Row {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(
        "SELECT status, (SELECT count(*) FROM job_units WHERE job_id = q.id) AS units, \
         items_failed FROM job_queue q WHERE id = $1",
    )
    .bind::<diesel::sql_types::Uuid, _>(id)
    .get_result(&mut *conn)
    .await
    .unwrap()
}

#[actix_web::test]
async fn a_job_without_a_record_runs_its_units_once() {
    let (_guard, db) = db().await;
    let mut conn = db.conn().await.unwrap();
    let id = enqueue(&mut conn, "test.units", &json!({"units": 3}), None, 1)
        .await
        .unwrap();
    drop(conn);
    let workers = Workers::new(db.clone(), vec![Arc::new(Units)], config());
    assert!(workers.run_one().await.unwrap());
    assert!(!workers.run_one().await.unwrap(), "nothing else is due");
    let done = row(&db, id).await;
    assert_eq!(done.status, "done");
    assert_eq!(done.units, 3);
    assert_eq!(done.items_failed, 1);
}

#[actix_web::test]
async fn a_programs_own_records_see_every_step_of_the_job() {
    let (_guard, db) = db().await;
    let recorder = Arc::new(Recorder::default());
    let scope = JobScope {
        tenant_id: Uuid::new_v4(),
        organization_id: None,
        user_id: None,
        api_key_id: None,
    };
    let mut conn = db.conn().await.unwrap();
    let spec = JobSpec::new("test.units", json!({"units": 2, "items": 2}), 4).name("Two units");
    let queued = enqueue_recorded(&mut conn, recorder.as_ref(), &scope, spec)
        .await
        .unwrap();
    drop(conn);
    let workers =
        Workers::new(db.clone(), vec![Arc::new(Units)], config()).with_records(recorder.clone());
    assert!(workers.run_one().await.unwrap());
    assert_eq!(
        recorder.calls(),
        [
            "create Two units Some(4)",
            "start",
            "cancel?",
            "processed 2",
            "processed 2",
            "complete units=2 failed=1",
        ]
    );
    assert_eq!(row(&db, queued.job_id).await.status, "done");
}

#[actix_web::test]
async fn no_records_refuse_a_job_that_asks_for_one() {
    let (_guard, db) = db().await;
    let scope = JobScope {
        tenant_id: Uuid::new_v4(),
        organization_id: None,
        user_id: None,
        api_key_id: None,
    };
    let mut conn = db.conn().await.unwrap();
    let spec = JobSpec::new("test.units", json!({"units": 1}), 1);
    assert!(
        enqueue_recorded(&mut conn, &NoRecords, &scope, spec)
            .await
            .is_err()
    );
    let queued: i64 = diesel::sql_query("SELECT count(*) AS n FROM job_queue")
        .get_result::<Count>(&mut *conn)
        .await
        .unwrap()
        .n;
    assert_eq!(queued, 0, "nothing was queued");
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}
