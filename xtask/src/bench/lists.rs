//! Every list endpoint the other scenarios leave out (issue 52): business
//! rules, rule sets and execution logs, the attachments library, partitions,
//! pipelines, pipeline stages and the widget catalog, over seeded data of a
//! realistic size, each beside a profile read measured just before it (its
//! share of `/auth/profile`) with its statements per request.
//!
//! They run after the business-rule scenarios (whose baseline needs a tenant
//! without rules), so the rules seeded here change no other row.

use std::time::Duration;

use super::load::{self, Request};
use super::report::Row;
use super::scenarios::{beside_note, profile_beside, with_bearer};
use super::server::Server;
use crate::cmd::Result;
use crate::pg::Database;

/// Rules, sets (ten rules each), execution logs and library files seeded
/// into the demo tenant's organization (admin@acme.com's).
const RULES: u64 = 500;
const SETS: u64 = 50;
const LOGS: u64 = 100_000;
const FILES: u64 = 10_000;

/// The scenario names (for `STOA_BENCH_ONLY`) and their paths.
fn scenarios() -> Vec<(String, &'static str)> {
    vec![
        (
            format!("GET /api/business_rules/rules?pageSize=50 ({RULES} rules, tenant admin)"),
            "/api/business_rules/rules?pageSize=50",
        ),
        (
            format!("GET /api/business_rules/sets?pageSize=50 ({SETS} sets of 10 rules)"),
            "/api/business_rules/sets?pageSize=50",
        ),
        (
            format!(
                "GET /api/business_rules/logs?pageSize=50 ({} execution logs)",
                super::summary::thousands(Some(LOGS as f64))
            ),
            "/api/business_rules/logs?pageSize=50",
        ),
        (
            format!(
                "GET /api/attachments/library?pageSize=50 ({} files)",
                super::summary::thousands(Some(FILES as f64))
            ),
            "/api/attachments/library?pageSize=50",
        ),
        (
            "GET /api/attachments/partitions (the demo's partitions)".into(),
            "/api/attachments/partitions",
        ),
        (
            "GET /api/customers/pipelines (the demo's pipelines)".into(),
            "/api/customers/pipelines",
        ),
        (
            "GET /api/customers/pipeline-stages (the demo's stages)".into(),
            "/api/customers/pipeline-stages",
        ),
        (
            "GET /api/dashboards/widgets/catalog (every module's widgets)".into(),
            "/api/dashboards/widgets/catalog",
        ),
    ]
}

fn wanted(only: &[String], name: &str) -> bool {
    only.is_empty() || only.iter().any(|o| name.contains(o.as_str()))
}

/// The admin's tenant and organization, as SQL (one row).
const SCOPE: &str = "SELECT u.tenant_id, u.organization_id, u.id AS user_id FROM users u \
                     WHERE u.email = 'admin@acme.com' AND u.deleted_at IS NULL";

/// Seeds the lists' data, analyzed as live tables would be; returns the note.
fn seed(db: &Database, url: &str) -> Result<String> {
    let started = std::time::Instant::now();
    db.psql(
        url,
        &format!(
            "INSERT INTO business_rules (tenant_id, organization_id, rule_id, rule_name, rule_type, \
               entity_type, event_type, condition_expression, priority, created_by) \
             SELECT s.tenant_id, s.organization_id, 'list-rule-' || g, 'List rule ' || g, \
               (ARRAY['GUARD','VALIDATION','CALCULATION','ACTION','ASSIGNMENT'])[1 + g % 5], \
               'customers.deal', 'bench_listed', \
               jsonb_build_object('field', 'valueAmount', 'operator', '>=', 'value', g), \
               g % 1000, s.user_id \
             FROM ({SCOPE}) s, generate_series(1, {RULES}) g"
        ),
    )?;
    db.psql(
        url,
        &format!(
            "INSERT INTO business_rule_sets (tenant_id, organization_id, set_id, set_name, created_by) \
             SELECT s.tenant_id, s.organization_id, 'list-set-' || g, 'List set ' || g, s.user_id \
             FROM ({SCOPE}) s, generate_series(1, {SETS}) g; \
             INSERT INTO business_rule_set_members (tenant_id, organization_id, rule_set_id, rule_id, sequence) \
             SELECT r.tenant_id, r.organization_id, rs.id, r.id, \
               substring(r.rule_id from 11)::int % 10 \
             FROM business_rules r JOIN business_rule_sets rs \
               ON rs.tenant_id = r.tenant_id \
              AND rs.set_id = 'list-set-' || (1 + substring(r.rule_id from 11)::int % {SETS}) \
             WHERE r.rule_id LIKE 'list-rule-%' AND substring(r.rule_id from 11)::int <= {SETS} * 10"
        ),
    )?;
    db.psql(
        url,
        &format!(
            "INSERT INTO business_rule_logs (rule_id, tenant_id, organization_id, entity_id, \
               entity_type, execution_result, execution_time_ms, executed_by, executed_at) \
             SELECT r.id, r.tenant_id, r.organization_id, 'deal-' || g, 'customers.deal', \
               (ARRAY['SUCCESS','FAILURE','ERROR'])[1 + g % 3], g % 20, 'bench', \
               now() - make_interval(secs => g) \
             FROM generate_series(1, {LOGS}) g \
             JOIN business_rules r ON r.rule_id = 'list-rule-' || (1 + g % {RULES})"
        ),
    )?;
    db.psql(
        url,
        &format!(
            "INSERT INTO attachments (id, tenant_id, organization_id, entity_id, record_id, \
               partition_code, file_name, mime_type, file_size, checksum, storage_driver, \
               storage_key, created_at) \
             SELECT gen_random_uuid(), s.tenant_id, s.organization_id, 'catalog:product', \
               'record-' || (g % 1000), 'privateAttachments', 'file-' || g || '.pdf', \
               'application/pdf', 10000 + g, md5(g::text), 'local', 'bench/list/' || g, \
               now() - make_interval(secs => g) \
             FROM ({SCOPE}) s, generate_series(1, {FILES}) g"
        ),
    )?;
    db.psql(
        url,
        "ANALYZE business_rules; ANALYZE business_rule_sets; ANALYZE business_rule_set_members; \
         ANALYZE business_rule_logs; ANALYZE attachments",
    )?;
    Ok(format!(
        "{RULES} rules, {SETS} sets of 10, {LOGS} rule logs and {FILES} library files seeded \
         in {:.1} s",
        started.elapsed().as_secs_f64()
    ))
}

/// One scenario's row, with its statements per request and its share of
/// the profile read just before it (`profile_rps`).
fn measure(
    server: &Server,
    name: &str,
    request: Request,
    seconds: u64,
    connections: usize,
    profile_rps: f64,
) -> Row {
    let queries_before = server.db_queries();
    let outcome = load::drive(
        server.addr,
        &[request],
        connections,
        Duration::from_secs(1),
        Duration::from_secs(seconds),
    );
    let (rss, peak) = server.memory_mib();
    let mut row = Row::from_outcome(name, &outcome, rss, peak);
    if let (Some(before), Some(after)) = (queries_before, server.db_queries())
        && outcome.sent_total > 0
    {
        row.add_note(&format!(
            "{:.2} DB statements/request",
            (after - before) as f64 / outcome.sent_total as f64
        ));
    }
    row.add_note(&beside_note(profile_rps));
    if profile_rps > 0.0 {
        row.add_note(&format!(
            "{:.0}% of it",
            outcome.rps() / profile_rps * 100.0
        ));
    }
    row
}

/// Seeds, then measures every list beside a profile read; returns the rows
/// (the seeding note first).
pub(super) fn run(
    server: &Server,
    db: &Database,
    url: &str,
    tokens: (&str, &str),
    seconds: u64,
    connections: usize,
    only: &[String],
) -> Result<Vec<Row>> {
    let (superadmin, admin) = tokens;
    let lists: Vec<(String, &str)> = scenarios()
        .into_iter()
        .filter(|(name, _)| wanted(only, name))
        .collect();
    if lists.is_empty() {
        return Ok(Vec::new());
    }
    let note = seed(db, url)?;
    println!("xtask: {note}");
    let mut rows = vec![Row::note_only("list data set (issue 52)", note)];
    for (name, path) in lists {
        // A list that does not answer 200 is a broken scenario, not a
        // figure: its row says so and the run goes on.
        let request = with_bearer(Request::get(path), admin);
        let (status, body) = load::once(server.addr, &request)?;
        if status != 200 {
            let body = String::from_utf8_lossy(&body);
            let row = Row::note_only(
                &name,
                format!("not measured: {path} answered {status}: {body}"),
            );
            println!("{}", row.describe());
            rows.push(row);
            continue;
        }
        let profile = profile_beside(server, superadmin, connections, seconds);
        let row = measure(server, &name, request, seconds, connections, profile);
        println!("{}", row.describe());
        rows.push(row);
    }
    Ok(rows)
}
