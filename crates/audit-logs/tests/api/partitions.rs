//! A bounded audit trail (issue 33): the action and access logs are
//! partitioned by month; the recurring `audit_logs.partitions` job creates
//! the current and next months ahead (moving what the DEFAULT partition
//! caught), drops whole months past their retention, and undo or redo of a
//! pruned entry answers 400 `entry_pruned`.

use diesel::sql_types::{Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_audit_logs::retention::{RetentionConfig, handlers};
use stoa_core::db::Db;
use stoa_jobs::{WorkerConfig, Workers};
use uuid::{Builder, Uuid};

use super::support::*;

#[derive(diesel::QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

async fn exec(db: &Db, sql: &str) {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(sql).execute(&mut *conn).await.unwrap();
}

/// One text value of `sql` (a column named `name`).
async fn text(db: &Db, sql: &str) -> String {
    let mut conn = db.conn().await.unwrap();
    let row: Name = diesel::sql_query(sql).get_result(&mut *conn).await.unwrap();
    row.name
}

/// The partition holding action-log entry `id`.
async fn partition_of(db: &Db, id: Uuid) -> String {
    let mut conn = db.conn().await.unwrap();
    let row: Name =
        diesel::sql_query("SELECT tableoid::regclass::text AS name FROM action_logs WHERE id = $1")
            .bind::<SqlUuid, _>(id)
            .get_result(&mut *conn)
            .await
            .unwrap();
    row.name
}

/// The UTC month `offset` months from now, as partitions name it (`2026_11`).
async fn month(db: &Db, offset: i32) -> String {
    text(
        db,
        &format!(
            "SELECT to_char((now() AT TIME ZONE 'UTC') + make_interval(months => {offset}), \
             'YYYY_MM') AS name"
        ),
    )
    .await
}

async fn exists(db: &Db, relation: &str) -> bool {
    text(
        db,
        &format!("SELECT (to_regclass('{relation}') IS NOT NULL)::text AS name"),
    )
    .await
        == "true"
}

/// Runs every due recurring job of `config` (the purge and the partitions).
async fn run_jobs(db: &Db, config: RetentionConfig) {
    let workers = Workers::new(
        db.clone(),
        handlers(),
        WorkerConfig {
            count: 1,
            ..WorkerConfig::default()
        },
    )
    .with_schedules(config.schedules());
    workers.register_schedules().await.unwrap();
    assert_eq!(workers.enqueue_due().await.unwrap(), 2);
    while workers.run_one().await.unwrap() {}
}

/// A time-ordered id (as undo tokens and entry ids are) made `days` ago.
fn old_id(days: u64) -> Uuid {
    let millis = (time::OffsetDateTime::now_utc().unix_timestamp() as u64 - days * 86_400) * 1000;
    Builder::from_unix_timestamp_millis(millis, &[7; 10]).into_uuid()
}

#[actix_web::test]
async fn entries_land_in_their_month_and_a_missing_month_is_caught_then_moved() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (_, created) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    let id: Uuid = created["id"].as_str().unwrap().parse().unwrap();
    let this_month = month(&app.db, 0).await;
    assert_eq!(
        partition_of(&app.db, id).await,
        format!("action_logs_p{this_month}")
    );
    // Ids and undo tokens are time-ordered UUIDs.
    assert_eq!(id.get_version_num(), 7);
    let token: Uuid = created["undoToken"].as_str().unwrap().parse().unwrap();
    assert_eq!(token.get_version_num(), 7);

    // The next month's partition is missing (the job has not run): an entry
    // of that month still goes in, into the DEFAULT partition.
    let next = month(&app.db, 1).await;
    // DDL needs the tables' owner: the server's role (`stoa_app`) owns none.
    app.owner_sql(&format!("DROP TABLE action_logs_p{next}"))
        .await;
    let early = text(
        &app.db,
        &format!(
            "INSERT INTO action_logs (command_id, tenant_id, organization_id, actor_user_id, \
             created_at) VALUES ('test.items.update', '{}', '{}', '{}', \
             (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month 1 day') \
             AT TIME ZONE 'UTC') RETURNING id::text AS name",
            acme.tenant_id, acme.organization_id, acme.admin
        ),
    )
    .await;
    let early: Uuid = early.parse().unwrap();
    assert_eq!(partition_of(&app.db, early).await, "action_logs_default");

    run_jobs(&app.db, RetentionConfig::default()).await;
    // The job made the month again and moved the entry into it.
    assert_eq!(
        partition_of(&app.db, early).await,
        format!("action_logs_p{next}")
    );
    assert_eq!(
        text(
            &app.db,
            "SELECT count(*)::text AS name FROM action_logs_default"
        )
        .await,
        "0"
    );
    assert!(exists(&app.db, &format!("access_reads_p{this_month}")).await);
    assert!(exists(&app.db, &format!("access_reads_p{next}")).await);
    // Partitions are marked as such (row-level security and schema rules
    // skip them by `relispartition`).
    assert_eq!(
        text(
            &app.db,
            &format!(
                "SELECT relispartition::text AS name FROM pg_class \
                 WHERE relname = 'action_logs_p{next}'"
            )
        )
        .await,
        "true"
    );
}

/// The resource ids of the admin's `test.item` entries the list shows.
async fn listed<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
) -> Vec<String> {
    let res = app
        .send(get(
            "/api/audit_logs/audit-logs/actions?resourceKind=test.item&pageSize=200",
            token,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let mut ids: Vec<String> = res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["resourceId"].as_str().map(str::to_owned))
        .collect();
    ids.sort();
    ids
}

#[actix_web::test]
async fn retention_drops_whole_months_past_it_and_keeps_the_rest() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    exec(
        &app.db,
        "SELECT stoa_log_partitions_ensure('action_logs', now() - interval '30 months', now())",
    )
    .await;
    exec(
        &app.db,
        "SELECT stoa_log_partitions_ensure('access_reads', now() - interval '3 months', now())",
    )
    .await;
    // 40 months ago has no partition: that entry waits in the DEFAULT one.
    for (label, age) in [
        ("m40", "40 months"),
        ("m30", "30 months"),
        ("m25", "25 months"),
        ("m23", "23 months"),
        ("m01", "1 month"),
        ("now", "1 minute"),
    ] {
        exec(
            &app.db,
            &format!(
                "INSERT INTO action_logs (command_id, tenant_id, organization_id, actor_user_id, \
                 action_type, resource_kind, resource_id, created_at) VALUES \
                 ('test.items.update', '{}', '{}', '{}', 'edit', 'test.item', '{label}', \
                 now() - interval '{age}')",
                acme.tenant_id, acme.organization_id, acme.admin
            ),
        )
        .await;
    }
    assert_eq!(listed(&app, &admin).await.len(), 6);
    let m30 = month(&app.db, -30).await;
    let m25 = month(&app.db, -25).await;
    let m23 = month(&app.db, -23).await;
    let access_old = month(&app.db, -2).await;
    assert!(exists(&app.db, &format!("action_logs_p{m30}")).await);

    run_jobs(
        &app.db,
        RetentionConfig {
            action_months: 24,
            ..RetentionConfig::default()
        },
    )
    .await;

    assert_eq!(listed(&app, &admin).await, ["m01", "m23", "now"]);
    assert!(!exists(&app.db, &format!("action_logs_p{m30}")).await);
    assert!(!exists(&app.db, &format!("action_logs_p{m25}")).await);
    assert!(exists(&app.db, &format!("action_logs_p{m23}")).await);
    // Access-log months past the longer access age (7 days) go too.
    assert!(!exists(&app.db, &format!("access_reads_p{access_old}")).await);
    assert!(
        exists(
            &app.db,
            &format!("access_reads_p{}", month(&app.db, 0).await)
        )
        .await
    );
    // The horizon is recorded: the first day of the month 24 months ago.
    assert_eq!(
        text(
            &app.db,
            "SELECT (pruned_before = date_trunc('month', (now() - interval '24 months') \
             AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')::text AS name \
             FROM audit_log_prunes WHERE table_name = 'action_logs'"
        )
        .await,
        "true"
    );
    // A second run has nothing left to drop and keeps the rest.
    let access = stoa_core::command::access::retention::Retention {
        core_kinds: vec![],
        core_age: std::time::Duration::from_secs(7 * 86_400),
        other_age: std::time::Duration::from_secs(8 * 3_600),
    };
    let mut conn = app.db.conn().await.unwrap();
    let done = stoa_audit_logs::retention::maintain_partitions(&mut conn, 24, &access)
        .await
        .unwrap();
    assert_eq!(done.created, 0);
    assert!(done.dropped.is_empty(), "{:?}", done.dropped);
    drop(conn);
    assert_eq!(listed(&app, &admin).await, ["m01", "m23", "now"]);
}

async fn redo<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    log_id: &Value,
) -> stoa_testkit::TestResponse {
    app.send(post_json(
        "/api/audit_logs/audit-logs/actions/redo",
        token,
        json!({"logId": log_id}),
    ))
    .await
}

#[actix_web::test]
async fn undo_and_redo_of_a_pruned_entry_answer_400_entry_pruned() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    // An undoable entry and an undone one, both made three years ago.
    let (_, first) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    let (_, second) = create_org(
        &app,
        &admin,
        json!({"name": "Support", "parentId": acme.organization_id}),
    )
    .await;
    assert_eq!(undo(&app, &admin, &second["undoToken"]).await.status, 200);
    let (old_token, old_id_) = (old_id(3 * 365), old_id(3 * 365 + 1));
    exec(
        &app.db,
        &format!(
            "UPDATE action_logs SET undo_token = '{old_token}', \
             created_at = now() - interval '3 years' WHERE id = '{}'",
            first["id"].as_str().unwrap()
        ),
    )
    .await;
    exec(
        &app.db,
        &format!(
            "UPDATE action_logs SET id = '{old_id_}', created_at = now() - interval '3 years' \
             WHERE id = '{}'",
            second["id"].as_str().unwrap()
        ),
    )
    .await;
    run_jobs(&app.db, RetentionConfig::default()).await;

    let res = undo(&app, &admin, &json!(old_token.to_string())).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["code"], "entry_pruned");
    assert!(
        res.json()["error"]
            .as_str()
            .unwrap()
            .contains("can no longer be undone")
    );
    let res = redo(&app, &admin, &json!(old_id_.to_string())).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["code"], "entry_pruned");

    // A token or id that never existed is not "pruned": the reference's
    // answer, without a code (recent time-ordered, random, or made up).
    for unknown in [
        stoa_core::command::pruned::time_ordered_id().to_string(),
        Uuid::new_v4().to_string(),
        "not-a-token".to_string(),
    ] {
        let res = undo(&app, &admin, &json!(unknown)).await;
        assert_eq!(res.status, 400);
        assert_eq!(
            res.json(),
            json!({"error": "Undo token not available"}),
            "{unknown}"
        );
    }
    let res = redo(&app, &admin, &json!(Uuid::new_v4())).await;
    assert_eq!(res.json(), json!({"error": "Redo target not available"}));

    // Entries inside the retention still undo.
    let (_, third) = create_org(
        &app,
        &admin,
        json!({"name": "Finance", "parentId": acme.organization_id}),
    )
    .await;
    let res = undo(&app, &admin, &third["undoToken"]).await;
    assert_eq!(res.status, 200, "{}", res.text());
}
