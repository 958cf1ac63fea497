//! Rules every migration keeps (all modules' migrations live in the
//! workspace's `migrations/`, embedded here): each `down.sql` undoes its
//! `up.sql`, and every tenant or organization column is indexed and bound to
//! its tenant or organization, unless the list below says why not.

use diesel::QueryableByName;
use diesel::sql_types::{Bool, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use diesel_migrations::MigrationHarness;
use stoa_core::db::MIGRATIONS;
use stoa_testkit::{TestDb, spawn_on_own_runtime};

/// Columns that are on purpose not (indexed and) bound by a foreign key.
/// Each entry: table, column, what is missing, and why.
const EXCEPTIONS: &[(&str, &str, &str, &str)] = &[
    // Logs outlive the tenant and the organization they name: an audit
    // trail must not vanish, or block a deletion, with its subject. Their
    // reads filter by tenant first (an index of tenant and time); the
    // organization narrows rows inside that range, so an index of its own
    // would slow every write for nothing.
    (
        "action_logs",
        "tenant_id",
        "fk",
        "audit log outlives its tenant",
    ),
    (
        "action_logs",
        "organization_id",
        "index fk",
        "audit log; read inside the tenant's range",
    ),
    (
        "access_reads",
        "tenant_id",
        "fk",
        "audit log outlives its tenant",
    ),
    (
        "access_reads",
        "organization_id",
        "index fk",
        "audit log; read inside the tenant's range",
    ),
    (
        "guard_logs",
        "tenant_id",
        "fk",
        "audit log outlives its tenant",
    ),
    (
        "guard_logs",
        "organization_id",
        "fk",
        "audit log outlives its organization",
    ),
    // Queues: rows are claimed and deleted at a high rate; a foreign key
    // would lock the tenant row on every insert and delivery, and an event
    // about a deleted tenant must still be delivered (or dropped) by the
    // subscriber, not refused at the source. The outbox is read by due time
    // only, and each event is written three times: an index on its scope
    // columns cost three entries per event for no reader.
    (
        "event_outbox",
        "tenant_id",
        "index fk",
        "queue row, transient, read by due time only",
    ),
    (
        "event_outbox",
        "organization_id",
        "index fk",
        "queue row, transient, read by due time only",
    ),
    ("job_queue", "tenant_id", "fk", "queue row, transient"),
    ("job_queue", "organization_id", "fk", "queue row, transient"),
    // Job records are the log of background work (what ran, for whom, with
    // what result), kept like the action log; lists read them by tenant.
    (
        "progress_jobs",
        "tenant_id",
        "fk",
        "record of work done, kept like a log",
    ),
    (
        "progress_jobs",
        "organization_id",
        "index fk",
        "record of work done; read inside the tenant's range",
    ),
];

#[derive(QueryableByName, Debug)]
struct ScopeColumn {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = Bool)]
    indexed: bool,
    #[diesel(sql_type = Bool)]
    bound: bool,
}

/// Every `tenant_id` / `organization_id` column of a table: whether an index
/// starts with it, and whether a foreign key covers it.
const SCOPE_COLUMNS: &str = "
SELECT c.relname::text AS table_name, a.attname::text AS column_name,
  EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indkey[0] = a.attnum) AS indexed,
  EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype = 'f'
          AND a.attnum = ANY (k.conkey)) AS bound
FROM pg_class c
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
  AND NOT c.relispartition
  AND a.attname IN ('tenant_id', 'organization_id')
ORDER BY 1, 2";

#[tokio::test]
async fn tenant_and_organization_columns_are_indexed_and_bound() {
    let db = TestDb::new().await;
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let columns: Vec<ScopeColumn> = diesel::sql_query(SCOPE_COLUMNS)
        .load(&mut conn)
        .await
        .unwrap();
    assert!(columns.len() > 20, "{columns:?}");
    let mut problems = Vec::new();
    for column in &columns {
        let excused = EXCEPTIONS
            .iter()
            .find(|(t, c, _, _)| *t == column.table_name && *c == column.column_name)
            .map_or("", |(_, _, missing, _)| *missing);
        if !column.indexed && !excused.contains("index") {
            problems.push(format!(
                "{}.{} has no index starting with it",
                column.table_name, column.column_name
            ));
        }
        if !column.bound && !excused.contains("fk") {
            problems.push(format!(
                "{}.{} has no foreign key",
                column.table_name, column.column_name
            ));
        }
    }
    // An exception that no longer applies is stale: the list stays short.
    for (table, column, missing, _) in EXCEPTIONS {
        let Some(found) = columns
            .iter()
            .find(|c| c.table_name == *table && c.column_name == *column)
        else {
            problems.push(format!("exception for {table}.{column}: no such column"));
            continue;
        };
        if (missing.contains("index") && found.indexed) || (missing.contains("fk") && found.bound) {
            problems.push(format!(
                "exception for {table}.{column} ({missing}) no longer applies"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "add the index or foreign key in a migration, or an exception with its reason \
         in crates/core/tests/api/schema.rs:\n{}",
        problems.join("\n")
    );
}

/// Tables with a `tenant_id` that carry no row-level security policy, each
/// with its reason. The migration `2026-12-02-000000_core_row_level_security`
/// exempts the same list. None today.
///
/// A policy here means both of `stoa_tenant_policies(table)`
/// (migration `2026-12-03-000000_core_rls_policy_per_role`): `stoa_tenant`
/// for the role `stoa_app` and `stoa_bypass` for the role `stoa_bypass`, and
/// no other (a policy for every role would widen what `stoa_app` sees).
const RLS_EXCEPTIONS: &[(&str, &str)] = &[];

#[derive(QueryableByName, Debug)]
struct Guarded {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Bool)]
    enabled: bool,
    #[diesel(sql_type = Bool)]
    forced: bool,
    #[diesel(sql_type = Bool)]
    policy: bool,
}

/// Every table (partitioned parents included, partitions not: a parent's
/// policy covers queries through it) with a `tenant_id` column.
const TENANT_TABLES: &str = "
SELECT c.relname::text AS table_name, c.relrowsecurity AS enabled,
  c.relforcerowsecurity AS forced,
  (SELECT array_agg(p.polname::text || ' to ' || array_to_string(
     ARRAY(SELECT CASE WHEN r = 0 THEN 'public' ELSE r::regrole::text END
           FROM unnest(p.polroles) r), ',') ORDER BY p.polname)
   FROM pg_policy p WHERE p.polrelid = c.oid)
   = ARRAY['stoa_bypass to stoa_bypass', 'stoa_tenant to stoa_app'] AS policy
FROM pg_class c
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
  AND NOT c.relispartition
ORDER BY 1";

#[tokio::test]
async fn every_tenant_table_has_a_row_level_security_policy() {
    let db = TestDb::new().await;
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let tables: Vec<Guarded> = diesel::sql_query(TENANT_TABLES)
        .load(&mut conn)
        .await
        .unwrap();
    assert!(tables.len() > 20, "{tables:?}");
    let mut problems = Vec::new();
    for table in &tables {
        if RLS_EXCEPTIONS.iter().any(|(t, _)| *t == table.table_name) {
            continue;
        }
        if !(table.enabled && table.forced && table.policy) {
            problems.push(format!(
                "{}: enabled={} forced={} policy={}",
                table.table_name, table.enabled, table.forced, table.policy
            ));
        }
    }
    for (table, _) in RLS_EXCEPTIONS {
        if !tables.iter().any(|t| t.table_name == *table) {
            problems.push(format!("exception for {table}: no such tenant table"));
        }
    }
    // Views run as their owner, who bypasses the policies, unless they
    // check the caller.
    let views: Vec<Line> = diesel::sql_query(
        "SELECT relname::text AS line FROM pg_class          WHERE relnamespace = 'public'::regnamespace AND relkind = 'v'            AND NOT coalesce('security_invoker=true' = ANY (reloptions), false)",
    )
    .load(&mut conn)
    .await
    .unwrap();
    for view in views {
        problems.push(format!("view {} is not security_invoker", view.line));
    }
    assert!(
        problems.is_empty(),
        "a tenant table without row-level security (end its migration with \
         `SELECT stoa_tenant_policies('<table>');`, or add an exception with \
         its reason):\n{}",
        problems.join("\n")
    );
}

#[derive(QueryableByName)]
struct Line {
    #[diesel(sql_type = Text)]
    line: String,
}

/// The schema as sorted lines: columns, indexes, constraints, triggers,
/// functions, types, sequences, views and policies of `public`. Left out:
/// diesel's own table, and what an extension owns (a down migration keeps
/// an extension such as `pg_trgm`, which an operator may have installed
/// before, and which costs nothing unused).
const SCHEMA: &str = "
SELECT line FROM (
  SELECT format('column %s.%s %s null=%s default=%s', c.relname, a.attname,
         format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
         pg_get_expr(d.adbin, d.adrelid)) AS line
  FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
  WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm')
  UNION ALL
  SELECT format('index %s', indexdef) FROM pg_indexes WHERE schemaname = 'public'
  UNION ALL
  SELECT format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
  FROM pg_constraint WHERE connamespace = 'public'::regnamespace
  UNION ALL
  SELECT format('trigger %s', pg_get_triggerdef(oid)) FROM pg_trigger
  WHERE NOT tgisinternal AND tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace)
  UNION ALL
  SELECT format('function %s', md5(pg_get_functiondef(p.oid))) || ' ' || p.proname
  FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p')
    AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                    AND d.objid = p.oid AND d.deptype = 'e')
  UNION ALL
  SELECT format('type %s %s', t.typname, t.typtype) FROM pg_type t
  WHERE t.typnamespace = 'public'::regnamespace AND t.typtype IN ('e', 'd', 'c')
    AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.reltype = t.oid)
  UNION ALL
  SELECT format('enum %s %s', t.typname, e.enumlabel) FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid
  UNION ALL
  SELECT format('sequence %s', sequencename) FROM pg_sequences WHERE schemaname = 'public'
  UNION ALL
  SELECT format('view %s %s', viewname, md5(definition)) FROM pg_views WHERE schemaname = 'public'
  UNION ALL
  SELECT format('policy %s %s %s %s', tablename, policyname, qual, with_check)
  FROM pg_policies WHERE schemaname = 'public'
  UNION ALL
  SELECT format('rls %s force=%s', relname, relforcerowsecurity) FROM pg_class
  WHERE relnamespace = 'public'::regnamespace AND relrowsecurity
  UNION ALL
  SELECT format('options %s %s', relname, reloptions) FROM pg_class
  WHERE relnamespace = 'public'::regnamespace AND reloptions IS NOT NULL
    AND relkind IN ('r', 'p', 'v', 'm')
  UNION ALL
  SELECT format('grant %s %s %s', c.relname, pg_get_userbyid(x.grantee), x.privilege_type)
  FROM pg_class c, aclexplode(coalesce(c.relacl, acldefault(
      (CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END)::\"char\", c.relowner))) x
  WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
    AND x.grantee <> c.relowner
  UNION ALL
  SELECT format('default grant %s %s %s', d.defaclobjtype, pg_get_userbyid(x.grantee),
                x.privilege_type)
  FROM pg_default_acl d, aclexplode(d.defaclacl) x
  WHERE d.defaclnamespace = 'public'::regnamespace
) s WHERE line NOT LIKE '%__diesel_schema_migrations%' ORDER BY line";

async fn schema(url: &str) -> Vec<String> {
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    diesel::sql_query(SCHEMA)
        .load::<Line>(&mut conn)
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.line)
        .collect()
}

/// Lines of `a` not in `b`, each prefixed.
fn missing(prefix: &str, a: &[String], b: &[String]) -> Vec<String> {
    a.iter()
        .filter(|line| !b.contains(line))
        .map(|line| format!("{prefix}{line}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_down_migration_undoes_its_up_migration() {
    let test_db = TestDb::empty().await;
    let url = test_db.url().to_string();
    // Migration by migration: apply, revert, compare with the schema before,
    // apply again (so the next one starts from the real state).
    let run = spawn_on_own_runtime(move || async move {
        let conn = AsyncPgConnection::establish(&url).await.unwrap();
        let mut harness = diesel_async::AsyncMigrationHarness::new(conn);
        let mut problems = Vec::new();
        let mut checked = 0;
        loop {
            let before = schema(&url).await;
            let pending = harness.pending_migrations(MIGRATIONS).unwrap();
            if pending.is_empty() {
                break;
            }
            let version = harness.run_next_migration(MIGRATIONS).unwrap().to_string();
            let applied = schema(&url).await;
            harness.revert_last_migration(MIGRATIONS).unwrap();
            let reverted = schema(&url).await;
            if reverted != before {
                let mut diff = missing("  left behind: ", &reverted, &before);
                diff.extend(missing("  not restored: ", &before, &reverted));
                problems.push(format!("{version}:\n{}", diff.join("\n")));
                // Applying it again may fail on what was left: stop here.
                break;
            }
            harness.run_next_migration(MIGRATIONS).unwrap();
            assert_eq!(
                schema(&url).await,
                applied,
                "{version} applies the same twice"
            );
            checked += 1;
        }
        (checked, problems)
    });
    let (checked, problems) = tokio::task::spawn_blocking(move || run.join().unwrap())
        .await
        .unwrap();
    assert!(checked > 20, "only {checked} migrations");
    assert!(
        problems.is_empty(),
        "these down.sql files do not undo their up.sql:\n{}",
        problems.join("\n")
    );
}
