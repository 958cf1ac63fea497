//! The load scenarios: which requests each one sends, as whom.

use std::time::Duration;

use super::load::{self, Request};
use super::server::Server;
use super::summary::BESIDE;

/// One named load scenario.
pub(super) struct Scenario {
    pub(super) name: &'static str,
    pub(super) requests: Vec<Request>,
    /// Overrides `STOA_BENCH_CONNECTIONS` (to read latency below saturation).
    pub(super) connections: Option<usize>,
}

/// The demo accounts `stoa init --demo` creates.
pub(super) const LOGIN_FORM: &str = "email=superadmin%40acme.com&password=secret";

/// The demo tenant's admin (not a super admin).
pub(super) const ADMIN_LOGIN_FORM: &str = "email=admin%40acme.com&password=secret";

/// Measures `/auth/profile` (the yardstick's request, as `token`) at
/// `connections` for `seconds`: the rate the row measured next is put
/// beside ([`beside_note`]). A share is taken of this rate, not of the run's
/// first profile row, because the machine's rate drifts within one run
/// (issue 52: 20,731 req/s in the first row, 13,537 an hour later at stop 61).
pub(super) fn profile_beside(
    server: &Server,
    token: &str,
    connections: usize,
    seconds: u64,
) -> f64 {
    load::drive(
        server.addr,
        &[with_bearer(Request::get("/api/auth/profile"), token)],
        connections,
        Duration::from_secs(1),
        Duration::from_secs(seconds),
    )
    .rps()
}

/// The note that puts a profile rate beside a row (read by `summary`).
pub(super) fn beside_note(profile_rps: f64) -> String {
    format!("{BESIDE}{profile_rps:.0} req/s")
}

pub(super) fn with_bearer(mut r: Request, token: &str) -> Request {
    r.headers
        .push(("Authorization".into(), format!("Bearer {token}")));
    r
}

pub(super) fn scenarios(token: &str, admin: &str, key: &str, deep_cursor: &str) -> Vec<Scenario> {
    let bearer = |r: Request| with_bearer(r, token);
    let as_admin = |r: Request| with_bearer(r, admin);
    let with_key = |mut r: Request| {
        r.headers.push(("x-api-key".into(), key.to_string()));
        r
    };
    let features: Vec<String> = (0..20).map(|i| format!("\"auth.feature{i}\"")).collect();
    let feature_check = format!("{{\"features\":[{}]}}", features.join(","));
    // Widget data over the 1M seeded deals (one minute apart: 23 months).
    let by_month = r#"{"entityType":"customers:deals","metric":{"field":"id","aggregate":"count"},"groupBy":{"field":"createdAt","granularity":"month"}}"#;
    let sum_by_month = r#"{"entityType":"customers:deals","metric":{"field":"valueAmount","aggregate":"sum"},"groupBy":{"field":"createdAt","granularity":"month"}}"#;
    let widgets: Vec<String> = (0..8)
        .map(|i| {
            let request = if i % 2 == 0 { by_month } else { sum_by_month };
            format!(r#"{{"id":"w{i}","request":{request}}}"#)
        })
        .collect();
    let batch = format!(r#"{{"requests":[{}]}}"#, widgets.join(","));
    vec![
        Scenario {
            name: "GET /api/version",
            requests: vec![Request::get("/api/version")],
            connections: None,
        },
        Scenario {
            name: "GET /api/health (one DB round trip)",
            requests: vec![Request::get("/api/health")],
            connections: None,
        },
        Scenario {
            name: "POST /api/auth/login (one argon2id verify each)",
            requests: vec![Request::post(
                "/api/auth/login",
                "application/x-www-form-urlencoded",
                LOGIN_FORM,
            )],
            connections: None,
        },
        Scenario {
            name: "GET /api/auth/profile (cached ACL)",
            requests: vec![bearer(Request::get("/api/auth/profile"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50 (100k users, capped count, tenant admin)",
            requests: vec![as_admin(Request::get("/api/auth/users?pageSize=50"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/auth/roles (tenant admin)",
            requests: vec![as_admin(Request::get("/api/auth/roles"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/devices/admin/devices?pageSize=50 (one statement, tenant admin)",
            requests: vec![as_admin(Request::get(
                "/api/devices/admin/devices?pageSize=50",
            ))],
            connections: None,
        },
        Scenario {
            name: "GET /api/api_keys/keys (one statement with role names, tenant admin)",
            requests: vec![as_admin(Request::get("/api/api_keys/keys"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/directory/tenants (one statement with access log, super admin)",
            requests: vec![bearer(Request::get("/api/directory/tenants"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/auth/roles (super admin, every tenant)",
            requests: vec![bearer(Request::get("/api/auth/roles"))],
            connections: None,
        },
        Scenario {
            name: "GET action logs, 2 filters, 10M entries (count 1,000 ahead)",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions?actionType=edit&resourceKind=bench.kind3&pageSize=50",
            ))],
            connections: None,
        },
        Scenario {
            name: "same, includeTotal=true (exact count of 500,000)",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions?actionType=edit&resourceKind=bench.kind3&pageSize=50&includeTotal=true",
            ))],
            connections: None,
        },
        Scenario {
            name: "same, includeTotal=false",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions?actionType=edit&resourceKind=bench.kind3&pageSize=50&includeTotal=false",
            ))],
            connections: None,
        },
        Scenario {
            name: "GET action-log CSV export, 1000 of 10M entries",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions/export?limit=1000&actionType=edit",
            ))],
            connections: None,
        },
        Scenario {
            // Streamed downloads skip gzip: this must cost what the plain one does.
            name: "same export, client sends Accept-Encoding: gzip (sent uncompressed)",
            requests: vec![{
                let mut r = bearer(Request::get(
                    "/api/audit_logs/audit-logs/actions/export?limit=1000&actionType=edit",
                ));
                r.headers.push(("Accept-Encoding".into(), "gzip".into()));
                r
            }],
            connections: None,
        },
        Scenario {
            name: "GET action logs, 2 filters, 10M entries, 4 connections",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions?actionType=edit&resourceKind=bench.kind3&pageSize=50",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET action-log CSV export, 1000 of 10M entries, 4 connections",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions/export?limit=1000&actionType=edit",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50&search=user01234 (10 of 100k users match, tenant admin)",
            requests: vec![as_admin(Request::get(
                "/api/auth/users?pageSize=50&search=user01234",
            ))],
            connections: None,
        },
        Scenario {
            name: "same, 4 connections",
            requests: vec![as_admin(Request::get(
                "/api/auth/users?pageSize=50&search=user01234",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50&search=user0123 (100 match: page + count), 4 connections",
            requests: vec![as_admin(Request::get(
                "/api/auth/users?pageSize=50&search=user0123",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50&search=bench (all 100k match), 4 connections",
            requests: vec![as_admin(Request::get(
                "/api/auth/users?pageSize=50&search=bench",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50 (first page of 100k), 4 connections",
            requests: vec![as_admin(Request::get("/api/auth/users?pageSize=50"))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50&page=1000 (offset 49,950), 4 connections",
            requests: vec![as_admin(Request::get(
                "/api/auth/users?pageSize=50&page=1000",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "same page by cursor (keyset), 4 connections",
            requests: vec![as_admin(Request::get(&format!(
                "/api/auth/users?pageSize=50&cursor={deep_cursor}"
            )))],
            connections: Some(4),
        },
        Scenario {
            // The user-list scenarios above logged the admin's reads.
            name: "GET access logs, the admin's own reads (page, capped count, names in one statement)",
            requests: vec![as_admin(Request::get(
                "/api/audit_logs/audit-logs/access?pageSize=50",
            ))],
            connections: None,
        },
        Scenario {
            name: "GET /api/progress/jobs?includeCompleted=true (page and capped count in one statement)",
            requests: vec![as_admin(Request::get(
                "/api/progress/jobs?includeCompleted=true&pageSize=50",
            ))],
            connections: None,
        },
        Scenario {
            name: "GET /api/catalog/products?pageSize=50 (100k products, capped count, tenant admin)",
            requests: vec![as_admin(Request::get("/api/catalog/products?pageSize=50"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/catalog/products search + filters + title sort (100k products), 4 connections",
            requests: vec![as_admin(Request::get(
                "/api/catalog/products?pageSize=50&search=lamp&isActive=true&priceCurrency=EUR&sortField=title",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "POST /api/auth/feature-check (20 features)",
            requests: vec![bearer(Request::post(
                "/api/auth/feature-check",
                "application/json",
                &feature_check,
            ))],
            connections: None,
        },
        Scenario {
            name: "POST /api/auth/feature-check (20 features), tenant admin JWT",
            requests: vec![as_admin(Request::post(
                "/api/auth/feature-check",
                "application/json",
                &feature_check,
            ))],
            connections: None,
        },
        Scenario {
            name: "same, API key with the admin role (x-api-key)",
            requests: vec![with_key(Request::post(
                "/api/auth/feature-check",
                "application/json",
                &feature_check,
            ))],
            connections: None,
        },
        Scenario {
            name: "same, API key sent as Authorization: Bearer",
            requests: vec![with_bearer(
                Request::post(
                    "/api/auth/feature-check",
                    "application/json",
                    &feature_check,
                ),
                key,
            )],
            connections: None,
        },
        Scenario {
            name: "GET /api/dashboards/layout (tenant admin, one statement), 32 connections",
            requests: vec![as_admin(Request::get("/api/dashboards/layout"))],
            connections: Some(32),
        },
        Scenario {
            name: "GET /api/auth/profile (cached ACL), 32 connections (the layout's yardstick)",
            requests: vec![bearer(Request::get("/api/auth/profile"))],
            connections: Some(32),
        },
        Scenario {
            name: "POST widget data: 1M deals counted by month, 4 connections",
            requests: vec![as_admin(Request::post(
                "/api/dashboards/widgets/data",
                "application/json",
                by_month,
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "POST widget data: money sum of 1M deals by month, 4 connections",
            requests: vec![as_admin(Request::post(
                "/api/dashboards/widgets/data",
                "application/json",
                sum_by_month,
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "POST widget data batch: 8 widgets (count and sum by month) over 1M deals, 4 connections",
            requests: vec![as_admin(Request::post(
                "/api/dashboards/widgets/data/batch",
                "application/json",
                &batch,
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/admin/nav (tenant admin)",
            requests: vec![as_admin(Request::get("/api/auth/admin/nav"))],
            connections: None,
        },
    ]
}
