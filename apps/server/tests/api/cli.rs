//! The `stoa` binary: migrate, serve (with graceful shutdown), openapi, config errors.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stoa_testkit::TestDb;

const STOA: &str = env!("CARGO_BIN_EXE_stoa");

fn stoa(db_url: &str) -> Command {
    let mut cmd = Command::new(STOA);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", db_url)
        .env("STOA_JWT_SECRET", "cli-test-secret-0123456789")
        .env(
            "STOA_ENCRYPTION_KEY",
            "0101010101010101010101010101010101010101010101010101010101010101",
        )
        .env("STOA_LOG", "warn")
        // Keep the developer's .env out of the test.
        .current_dir(std::env::temp_dir());
    cmd
}

fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
    Some((status, body))
}

#[tokio::test]
async fn migrate_twice_in_a_row_succeeds() {
    let db = TestDb::empty().await;
    let first = stoa(db.url()).arg("migrate").output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(String::from_utf8_lossy(&first.stdout).contains("applied"));
    let second = stoa(db.url()).arg("migrate").output().unwrap();
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(String::from_utf8_lossy(&second.stdout).contains("up to date"));
    // Both ran the seed sync, which finds nothing to do on an empty database.
    assert!(String::from_utf8_lossy(&second.stdout).contains("seeds: 0 seeder run(s)"));
    let sync = stoa(db.url()).args(["seed", "sync"]).output().unwrap();
    assert!(
        sync.status.success(),
        "{}",
        String::from_utf8_lossy(&sync.stderr)
    );
    assert!(String::from_utf8_lossy(&sync.stdout).contains("seeds: 0 seeder run(s)"));
}

#[tokio::test]
async fn serve_answers_and_stops_gracefully_on_sigterm() {
    let db = TestDb::new().await;
    let free_port = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let (port, metrics_port) = (free_port(), free_port());
    let mut child = stoa(db.url())
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env("STOA_METRICS_BIND", format!("127.0.0.1:{metrics_port}"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let version = loop {
        if let Some(answer) = http_get(port, "/api/version") {
            break answer;
        }
        assert!(Instant::now() < deadline, "stoa serve did not answer");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(version, (200, format!("\"{}\"", stoa_core::BUILD_VERSION)));
    assert_eq!(
        http_get(port, "/api/health"),
        Some((200, r#"{"status":"ok","database":"ok"}"#.to_string()))
    );
    let (status, metrics) = http_get(metrics_port, "/metrics").expect("metrics answer");
    assert_eq!(status, 200);
    assert!(
        metrics.contains(
            r#"stoa_http_requests_total{method="GET",route="/api/version",status="200"}"#
        ),
        "{metrics}"
    );
    assert!(
        // Two pools of STOA_DB_POOL_SIZE (16): tenant and cross-tenant work.
        metrics.contains("stoa_db_pool_max_connections 32"),
        "{metrics}"
    );
    // /metrics is not served on the API address.
    assert_eq!(http_get(port, "/metrics").map(|(s, _)| s), Some(404));
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "graceful shutdown exits 0, got {status}");
}

#[test]
fn missing_or_bad_configuration_names_the_variable() {
    let out = Command::new(STOA)
        .arg("migrate")
        .env_clear()
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("DATABASE_URL"));

    let out = stoa("postgres://x@127.0.0.1:1/x")
        .arg("serve")
        .env("STOA_DB_POOL_SIZE", "lots")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("STOA_DB_POOL_SIZE"));
}

#[test]
fn openapi_command_prints_the_document() {
    let out = Command::new(STOA)
        .arg("openapi")
        .env_clear()
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["paths"]["/api/version"].is_object());
}

#[test]
fn serve_refuses_to_start_without_a_jwt_secret_outside_development() {
    let out = stoa("postgres://x@127.0.0.1:1/x")
        .arg("serve")
        .env_remove("STOA_JWT_SECRET")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("STOA_JWT_SECRET"));
}

#[test]
fn serve_refuses_to_start_without_an_encryption_key_outside_development() {
    let out = stoa("postgres://x@127.0.0.1:1/x")
        .arg("serve")
        .env_remove("STOA_ENCRYPTION_KEY")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("STOA_ENCRYPTION_KEY"));
    let out = stoa("postgres://x@127.0.0.1:1/x")
        .arg("serve")
        .env("STOA_ENCRYPTION_KEY", "too-short")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("STOA_ENCRYPTION_KEY"));
}

fn run_init(url: &str, args: &[&str]) -> std::process::Output {
    stoa(url).arg("init").args(args).output().unwrap()
}

#[tokio::test]
async fn init_creates_a_tenant_once_and_refuses_a_second_run() {
    let db = TestDb::empty().await;
    let args = [
        "--tenant",
        "Globex",
        "--organization",
        "Globex HQ",
        "--email",
        "Owner@Globex.com",
        "--password",
        "Str0ng!pass",
    ];
    let out = run_init(db.url(), &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap();
    let ids: serde_json::Value = serde_json::from_str(line).unwrap();
    for key in ["tenantId", "organizationId", "userId"] {
        assert!(
            ids[key].as_str().unwrap().parse::<uuid::Uuid>().is_ok(),
            "{line}"
        );
    }

    let again = run_init(db.url(), &args);
    assert!(!again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("owner@globex.com") && stderr.contains("already exists"),
        "{stderr}"
    );

    // Nothing was added by the refused run.
    let counts = count_rows(db.url(), "SELECT (SELECT count(*) FROM tenants) AS t, (SELECT count(*) FROM users) AS u, (SELECT count(*) FROM roles) AS r").await;
    assert_eq!(counts, (1, 1, 3));
}

#[tokio::test]
async fn init_applies_the_password_policy_except_for_demo_accounts() {
    let db = TestDb::empty().await;
    let weak = run_init(
        db.url(),
        &[
            "--tenant",
            "T",
            "--email",
            "a@t.com",
            "--password",
            "weakpass",
        ],
    );
    assert!(!weak.status.success());
    assert!(String::from_utf8_lossy(&weak.stderr).contains("Password does not meet"));

    let demo = run_init(db.url(), &["--demo"]);
    assert!(
        demo.status.success(),
        "{}",
        String::from_utf8_lossy(&demo.stderr)
    );
    let stderr = String::from_utf8_lossy(&demo.stderr);
    for email in ["superadmin@acme.com", "admin@acme.com", "employee@acme.com"] {
        assert!(stderr.contains(email), "{stderr}");
    }
    assert!(stderr.contains("demo"));
    let counts = count_rows(db.url(), "SELECT (SELECT count(*) FROM tenants) AS t, (SELECT count(*) FROM users) AS u, (SELECT count(*) FROM user_roles) AS r").await;
    assert_eq!(counts, (1, 3, 3));
}

#[derive(diesel::QueryableByName)]
struct Counts {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    t: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    u: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    r: i64,
}

async fn count_rows(url: &str, sql: &str) -> (i64, i64, i64) {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    let c: Counts = diesel::sql_query(sql).get_result(&mut conn).await.unwrap();
    (c.t, c.u, c.r)
}

#[derive(diesel::QueryableByName)]
struct Scalar {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

async fn scalar(url: &str, sql: &str) -> i64 {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    let row: Scalar = diesel::sql_query(sql).get_result(&mut conn).await.unwrap();
    row.n
}

fn worker(url: &str) -> std::process::Child {
    stoa(url)
        .arg("worker")
        .env("STOA_WORKERS", "1")
        .env("STOA_JOB_VISIBILITY_SECS", "1")
        .env("STOA_JOB_POLL_MS", "50")
        .env("STOA_JOB_SCHEDULE_MS", "50")
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

async fn wait_for(url: &str, sql: &str, at_least: i64, within: Duration) -> i64 {
    let deadline = Instant::now() + within;
    loop {
        let n = scalar(url, sql).await;
        if n >= at_least {
            return n;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for `{sql}` >= {at_least} (now {n})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_worker_killed_mid_job_is_replaced_and_no_unit_runs_twice() {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
    let db = TestDb::new().await;
    let url = db.url().to_string();
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    diesel::sql_query(
        "WITH t AS (INSERT INTO tenants (name) VALUES ('Jobs') RETURNING id), \
              p AS (INSERT INTO progress_jobs (job_type, name, total_count, tenant_id) \
                    SELECT 'system.sleep_units', 'Crash test', 20, id FROM t RETURNING id) \
         INSERT INTO job_queue (kind, payload, progress_job_id) \
         SELECT 'system.sleep_units', '{\"units\": 20, \"unitMillis\": 100}', id FROM p",
    )
    .execute(&mut conn)
    .await
    .unwrap();

    let mut first = worker(&url);
    wait_for(
        &url,
        "SELECT count(*) AS n FROM job_units",
        4,
        Duration::from_secs(30),
    )
    .await;
    first.kill().unwrap(); // SIGKILL: no cleanup, the lease just lapses.
    first.wait().unwrap();
    let done_before = scalar(&url, "SELECT count(*) AS n FROM job_units").await;
    assert!(
        done_before < 20,
        "the job must still be unfinished when the worker dies"
    );

    let mut second = worker(&url);
    wait_for(
        &url,
        // The queue row and the progress record are finished in separate
        // steps: stopping the worker between them left the record running.
        "SELECT count(*) AS n FROM job_queue q JOIN progress_jobs p ON p.id = q.progress_job_id \
         WHERE q.status = 'done' AND q.kind = 'system.sleep_units' AND p.status = 'completed'",
        1,
        Duration::from_secs(60),
    )
    .await;
    Command::new("kill")
        .args(["-TERM", &second.id().to_string()])
        .status()
        .unwrap();
    assert!(second.wait().unwrap().success());

    assert_eq!(
        scalar(&url, "SELECT count(*) AS n FROM job_units").await,
        20
    );
    assert_eq!(
        scalar(
            &url,
            "SELECT attempts::bigint AS n FROM job_queue WHERE kind = 'system.sleep_units'"
        )
        .await,
        2
    );
    assert_eq!(
        scalar(&url, "SELECT count(*) AS n FROM progress_jobs WHERE status = 'completed' AND processed_count = 20").await,
        1
    );
    let rerun = scalar(
        &url,
        "SELECT (result_summary->>'ranThisAttempt')::bigint AS n FROM progress_jobs",
    )
    .await;
    assert_eq!(
        rerun + done_before,
        20,
        "the retry ran exactly the units that were not done"
    );
}

fn json_line(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim().lines().last().unwrap_or("")).unwrap()
}

/// `stoa seed ...` (what `cargo xtask bench` runs): refused before `init
/// --demo`, then each module seeds its tables and the command prints one JSON
/// line; the data lands where the benchmarks read it.
#[tokio::test]
async fn seed_commands_fill_the_demo_tenant() {
    use diesel::QueryableByName;
    use diesel::sql_types::BigInt;
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

    let db = TestDb::new().await;
    let early = stoa(db.url())
        .args(["seed", "users", "--count", "5"])
        .output()
        .unwrap();
    assert!(!early.status.success());
    assert!(String::from_utf8_lossy(&early.stderr).contains("stoa init --demo"));

    let init = stoa(db.url()).args(["init", "--demo"]).output().unwrap();
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let users = json_line(
        &stoa(db.url())
            .args(["seed", "users", "--count", "25"])
            .output()
            .unwrap(),
    );
    assert_eq!(users["seeded"], 25);
    let logs = json_line(
        &stoa(db.url())
            .args(["seed", "action-logs", "--count", "40", "--mutations", "2"])
            .output()
            .unwrap(),
    );
    assert_eq!(logs["seeded"], 40);
    assert!(logs["msBareWrite"].as_f64().is_some() && logs["msCommand"].as_f64().is_some());
    // The old name still works for older bench scripts.
    let old = stoa(db.url())
        .args(["bench-audit", "--count", "1", "--mutations", "1"])
        .output()
        .unwrap();
    assert!(
        old.status.success(),
        "{}",
        String::from_utf8_lossy(&old.stderr)
    );

    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let count = async |conn: &mut AsyncPgConnection, sql: &str| -> i64 {
        diesel::sql_query(sql)
            .get_result::<Count>(conn)
            .await
            .unwrap()
            .n
    };
    let sql = "SELECT count(*) AS n FROM users u JOIN user_roles ur ON ur.user_id = u.id \
               JOIN roles r ON r.id = ur.role_id AND r.name = 'employee' \
               WHERE u.email LIKE '%@bench.acme.com'";
    assert_eq!(count(&mut conn, sql).await, 25);
    let sql = "SELECT count(DISTINCT organization_id) AS n FROM users WHERE email LIKE '%@bench.acme.com'";
    assert_eq!(count(&mut conn, sql).await, 10, "spread over ten branches");
    let sql = "SELECT count(*) AS n FROM organizations WHERE name LIKE 'Bench branch %'";
    assert_eq!(count(&mut conn, sql).await, 10);
    let sql = "SELECT count(*) AS n FROM action_logs WHERE command_id LIKE 'bench.items.%'";
    assert_eq!(count(&mut conn, sql).await, 41);
    let sql =
        "SELECT count(*) AS n FROM action_logs WHERE command_id = 'directory.organizations.update'";
    assert_eq!(
        count(&mut conn, sql).await,
        3,
        "the timed commands are logged"
    );
}

#[derive(diesel::QueryableByName)]
struct Gap {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Double>)]
    ms: Option<f64>,
}

#[tokio::test]
async fn two_worker_processes_run_a_recurring_job_once_per_period() {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
    let db = TestDb::new().await;
    let url = db.url().to_string();
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    diesel::sql_query(
        "INSERT INTO job_schedules (name, kind, payload, period) \
         VALUES ('test.sleep', 'system.sleep_units', '{\"units\": 1}', interval '1 second')",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let mut workers = [worker(&url), worker(&url)];
    let runs =
        "SELECT count(*) AS n FROM job_queue WHERE schedule = 'test.sleep' AND status = 'done'";
    wait_for(&url, runs, 3, Duration::from_secs(30)).await;
    for worker in &mut workers {
        Command::new("kill")
            .args(["-TERM", &worker.id().to_string()])
            .status()
            .unwrap();
        assert!(worker.wait().unwrap().success());
    }
    // Both processes looked every 50 ms; each period was enqueued once.
    let gap: Gap = diesel::sql_query(
        "SELECT min(ms) AS ms FROM (SELECT extract(epoch FROM created_at - lag(created_at) \
         OVER (ORDER BY created_at))::float8 * 1000 AS ms FROM job_queue \
         WHERE schedule = 'test.sleep') g",
    )
    .get_result(&mut conn)
    .await
    .unwrap();
    let ms = gap.ms.unwrap();
    assert!(ms >= 950.0, "two runs {ms} ms apart");
    // The progress module's own recurring jobs ran once each as well.
    assert_eq!(
        scalar(
            &url,
            "SELECT count(*) AS n FROM job_queue WHERE schedule = 'progress.sweep_stale'"
        )
        .await,
        1
    );
}
