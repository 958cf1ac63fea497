//! Row-level security, the second tenant wall (`stoa_core::rls`): a query
//! that forgets its tenant filter still sees its own tenant's rows only.

use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use stoa_core::db::{Db, thread_queries};
use stoa_core::rls::{self, Scope};
use stoa_testkit::TestDb;
use uuid::Uuid;

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

/// Every organization's name, with no tenant filter at all.
async fn all_names(db: &Db) -> Vec<String> {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query("SELECT name FROM organizations ORDER BY name")
        .load::<Name>(&mut conn)
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.name)
        .collect()
}

async fn user_emails(db: &Db) -> Vec<String> {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query("SELECT email AS name FROM users ORDER BY email")
        .load::<Name>(&mut conn)
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.name)
        .collect()
}

async fn seed(db: &Db, a: Uuid, b: Uuid) {
    let mut conn = db.conn().await.unwrap();
    for (tenant, name) in [(a, "A"), (b, "B")] {
        diesel::sql_query("INSERT INTO tenants (id, name) VALUES ($1, $2)")
            .bind::<SqlUuid, _>(tenant)
            .bind::<Text, _>(format!("tenant {name}"))
            .execute(&mut conn)
            .await
            .unwrap();
        let org = Uuid::new_v4();
        diesel::sql_query(
            "INSERT INTO organizations (id, tenant_id, name, root_id) VALUES ($1, $2, $3, $1)",
        )
        .bind::<SqlUuid, _>(org)
        .bind::<SqlUuid, _>(tenant)
        .bind::<Text, _>(format!("org {name}"))
        .execute(&mut conn)
        .await
        .unwrap();
    }
}

#[tokio::test]
async fn a_query_that_forgets_its_tenant_filter_sees_nothing_foreign() {
    let test_db = TestDb::new().await;
    // One connection: every scope below reuses it, so a setting left
    // behind by the previous scope would show.
    let db = Db::from_url(test_db.url(), 1, Duration::from_secs(10)).unwrap();
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    rls::bypass("test fixtures", seed(&db, a, b)).await;

    let both = vec!["org A".to_string(), "org B".to_string()];
    assert_eq!(
        rls::in_tenant(a, all_names(&db)).await,
        ["org A"],
        "tenant A's context sees nothing of B"
    );
    assert_eq!(rls::in_tenant(b, all_names(&db)).await, ["org B"]);
    assert_eq!(
        all_names(&db).await,
        Vec::<String>::new(),
        "no context: no tenant rows"
    );
    assert_eq!(
        rls::request(all_names(&db)).await,
        Vec::<String>::new(),
        "a request before authentication: no tenant rows"
    );
    assert_eq!(rls::bypass("test", all_names(&db)).await, both);
    // Back to closed after a bypass on the same connection.
    assert_eq!(all_names(&db).await, Vec::<String>::new());
    // A request opened by its authenticator.
    let opened = rls::request(async {
        rls::set_request_scope(Scope::Tenant(b));
        all_names(&db).await
    })
    .await;
    assert_eq!(opened, ["org B"]);
}

#[tokio::test]
async fn writes_stay_inside_the_tenant() {
    let test_db = TestDb::new().await;
    let db = Db::from_url(test_db.url(), 1, Duration::from_secs(10)).unwrap();
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    rls::bypass("test fixtures", seed(&db, a, b)).await;

    // An update without a tenant filter changes A's rows only.
    let changed = rls::in_tenant(a, async {
        let mut conn = db.conn().await.unwrap();
        diesel::sql_query("UPDATE organizations SET name = name || ' (renamed)'")
            .execute(&mut conn)
            .await
            .unwrap()
    })
    .await;
    assert_eq!(changed, 1);
    // A row of B cannot be written from A's context.
    let refused = rls::in_tenant(a, async {
        let mut conn = db.conn().await.unwrap();
        diesel::sql_query(
            "INSERT INTO organizations (id, tenant_id, name, root_id) \
             VALUES ($1, $2, 'planted', $1)",
        )
        .bind::<SqlUuid, _>(Uuid::new_v4())
        .bind::<SqlUuid, _>(b)
        .execute(&mut conn)
        .await
    })
    .await;
    let err = refused.unwrap_err().to_string();
    assert!(err.contains("row-level security"), "{err}");
    // Nor from no context at all.
    let mut conn = db.conn().await.unwrap();
    let refused = diesel::sql_query(
        "INSERT INTO organizations (id, tenant_id, name, root_id) VALUES ($1, $2, 'planted', $1)",
    )
    .bind::<SqlUuid, _>(Uuid::new_v4())
    .bind::<SqlUuid, _>(a)
    .execute(&mut conn)
    .await;
    assert!(refused.is_err());
    drop(conn);
    assert_eq!(
        rls::bypass("test", all_names(&db)).await,
        ["org A (renamed)", "org B"]
    );
}

#[tokio::test]
async fn shared_rows_are_seen_inside_a_tenant_only() {
    let test_db = TestDb::new().await;
    let db = Db::from_url(test_db.url(), 1, Duration::from_secs(10)).unwrap();
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    rls::bypass("test fixtures", async {
        seed(&db, a, b).await;
        let mut conn = db.conn().await.unwrap();
        for (tenant, email) in [
            (Some(a), "a@example.com"),
            (Some(b), "b@example.com"),
            (None, "root@example.com"),
        ] {
            diesel::sql_query(
                "INSERT INTO users (tenant_id, email, password_hash) VALUES ($1, $2, 'x')",
            )
            .bind::<diesel::sql_types::Nullable<SqlUuid>, _>(tenant)
            .bind::<Text, _>(email)
            .execute(&mut conn)
            .await
            .unwrap();
        }
    })
    .await;
    assert_eq!(
        rls::in_tenant(a, user_emails(&db)).await,
        ["a@example.com", "root@example.com"],
        "a user without a tenant (a super admin) is no other tenant's"
    );
    assert_eq!(user_emails(&db).await, Vec::<String>::new());
    assert_eq!(rls::bypass("test", user_emails(&db)).await.len(), 3);
}

async fn current_role(db: &Db) -> String {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query("SELECT current_user::text AS name")
        .get_result::<Name>(&mut conn)
        .await
        .unwrap()
        .name
}

#[tokio::test]
async fn both_pools_act_as_roles_that_own_nothing() {
    let test_db = TestDb::new().await;
    let db = Db::from_url(test_db.url(), 1, Duration::from_secs(10)).unwrap();
    assert_eq!(current_role(&db).await, rls::APP_ROLE);
    assert_eq!(
        rls::bypass("test", current_role(&db)).await,
        rls::BYPASS_ROLE
    );
    let mut conn = db.conn().await.unwrap();
    let settings = diesel::sql_query(
        "SELECT current_setting('jit') || ',' || \
         current_setting('max_parallel_workers_per_gather') AS name",
    )
    .get_result::<Name>(&mut conn)
    .await
    .unwrap();
    assert_eq!(settings.name, "off,0", "no JIT and no parallel workers");
    let owned = diesel::sql_query(
        "SELECT relname::text AS name FROM pg_class \
         WHERE relowner IN (SELECT oid FROM pg_roles \
                            WHERE rolname IN ('stoa_app', 'stoa_bypass'))",
    )
    .load::<Name>(&mut conn)
    .await
    .unwrap();
    assert!(
        owned.is_empty(),
        "a pool role owns tables: policies would not apply"
    );
}

#[tokio::test]
async fn the_tenant_policy_is_an_index_condition() {
    // The policy of `stoa_app` is one comparison the planner can use as an
    // index condition, evaluated once per scan; a bypass setting OR-ed into
    // it made it a filter evaluated on every row the scan visited.
    let test_db = TestDb::new().await;
    let db = Db::from_url(test_db.url(), 1, Duration::from_secs(10)).unwrap();
    let plan = rls::in_tenant(Uuid::new_v4(), async {
        let mut conn = db.conn().await.unwrap();
        diesel::sql_query("SET enable_seqscan = off")
            .execute(&mut conn)
            .await
            .unwrap();
        let plan =
            diesel::sql_query("EXPLAIN SELECT name FROM organizations WHERE deleted_at IS NULL")
                .load::<Plan>(&mut conn)
                .await
                .unwrap();
        diesel::sql_query("RESET enable_seqscan")
            .execute(&mut conn)
            .await
            .unwrap();
        plan.into_iter()
            .map(|line| line.plan)
            .collect::<Vec<_>>()
            .join("\n")
    })
    .await;
    assert!(
        plan.contains("Index Cond: (tenant_id = (NULLIF(current_setting('stoa.tenant_id'"),
        "{plan}"
    );
    assert!(!plan.contains("stoa.bypass"), "{plan}");
}

#[derive(QueryableByName)]
struct Plan {
    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
    plan: String,
}

#[tokio::test]
async fn a_steady_scope_costs_no_round_trip() {
    let test_db = TestDb::new().await;
    let db = Db::from_url(test_db.url(), 1, Duration::from_secs(10)).unwrap();
    let tenant = Uuid::new_v4();
    rls::in_tenant(tenant, async {
        // The first checkout in a new scope sets it (one round trip) ...
        all_names(&db).await;
        // ... the next ones on the same connection send the query only.
        let before = thread_queries();
        all_names(&db).await;
        all_names(&db).await;
        assert_eq!(thread_queries() - before, 2);
    })
    .await;
    // A change of scope costs one round trip on that checkout.
    let before = thread_queries();
    rls::in_tenant(Uuid::new_v4(), all_names(&db)).await;
    assert_eq!(thread_queries() - before, 2);
}
