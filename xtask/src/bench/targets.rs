//! Every scenario of the opening table of docs/benchmarks.md that has a
//! target: the bench row it is read from, its goals and the issue that set
//! them (the table itself is drawn by `summary`).

use super::summary::{plain, thousands};

/// What a scenario must reach.
#[derive(Clone, Copy)]
pub enum Goal {
    /// p99 latency at most this many ms.
    P99Ms(f64),
    /// At least this many requests/s.
    Rps(f64),
    /// At least this share of the same run's `/auth/profile` rate.
    ShareOfProfile(f64),
    /// Done in at most this many seconds (the note's "N s end to end").
    Seconds(f64),
    /// The server's peak RSS at most this many MiB.
    PeakMib(f64),
    /// At most this many DB statements per request.
    Statements(f64),
    /// p50 at most this many percent above the scenario without rules.
    P50OverheadPct(f64),
    /// At most this many ms of stoa's own before the first streamed text.
    OwnMs(f64),
    /// The verifications' p99 at most this many ms (the note's last p99).
    NoteP99Ms(f64),
}

/// A scenario of the table: its label, the bench row it is read from (a
/// prefix of the row's name; rows named "same, ..." are "<the row above> /
/// same, ..."), its goals and the issue that set them.
pub struct Target {
    pub label: &'static str,
    pub row: &'static str,
    pub goals: &'static [Goal],
    pub issue: &'static str,
}

/// Every scenario with a target, in the table's order.
pub const TARGETS: &[Target] = &[
    Target {
        label: "bulk stage update of 100,000 deals",
        row: "bulk stage update of",
        goals: &[Goal::Seconds(10.0), Goal::PeakMib(76.3)],
        issue: "27",
    },
    Target {
        label: "deals list, stage + owner + value over 1M deals, 4 connections",
        row: "GET /api/customers/deals, stage + owner + value range over 1M deals, 4 connections",
        goals: &[Goal::P99Ms(20.0), Goal::Statements(2.0)],
        issue: "27",
    },
    Target {
        label: "products list, `pageSize=50` of 100k",
        row: "GET /api/catalog/products?pageSize=50",
        goals: &[Goal::ShareOfProfile(0.5)],
        issue: "27",
    },
    Target {
        label: "users list, `pageSize=50` of 100k (tenant admin)",
        row: "GET /api/auth/users?pageSize=50 (100k users",
        goals: &[Goal::ShareOfProfile(0.5)],
        issue: "15",
    },
    Target {
        label: "roles list (tenant admin)",
        row: "GET /api/auth/roles (tenant admin)",
        goals: &[Goal::ShareOfProfile(0.5)],
        issue: "15",
    },
    Target {
        label: "users search, 10 of 100k match, 4 connections",
        row: "GET /api/auth/users?pageSize=50&search=user01234 (10 of 100k users match, tenant admin) / same, 4 connections",
        goals: &[Goal::P99Ms(15.0)],
        issue: "15",
    },
    Target {
        label: "dashboard layout, 32 connections",
        row: "GET /api/dashboards/layout",
        goals: &[Goal::ShareOfProfile(0.5)],
        issue: "28",
    },
    Target {
        label: "widget data: 1M deals counted by month, 4 connections",
        row: "POST widget data: 1M deals counted by month",
        goals: &[Goal::P99Ms(100.0)],
        issue: "28",
    },
    Target {
        label: "widget data: money sum of 1M deals by month, 4 connections",
        row: "POST widget data: money sum of 1M deals by month",
        goals: &[Goal::P99Ms(200.0)],
        issue: "28",
    },
    Target {
        label: "attachments: 32 concurrent resizes of a 4000×3000 JPEG",
        row: "attachments: 32 concurrent resizes",
        goals: &[Goal::PeakMib(300.0)],
        issue: "29",
    },
    Target {
        label: "attachments: cached image variant, 32 connections",
        row: "GET /api/attachments/image/{id}?width=320 (cached variant)",
        goals: &[Goal::Rps(5000.0)],
        issue: "29",
    },
    Target {
        label: "business rules: GUARD rules, none applies (deal update)",
        row: "PUT /api/customers/deals/{id} (title), tenant with GUARD rules",
        goals: &[Goal::P50OverheadPct(10.0)],
        issue: "30",
    },
    Target {
        label: "business rules: execute 50 rules, dry run, 1 connection",
        row: "POST /api/business_rules/execute, 50 applicable rules, dry run, 1 connection",
        goals: &[Goal::P99Ms(2.0)],
        issue: "30",
    },
    Target {
        label: "onboarding: verification (tenant provisioning), 4 connections",
        row: "onboarding: sign-up + verify end to end",
        goals: &[Goal::NoteP99Ms(200.0)],
        issue: "31",
    },
    Target {
        label: "AI chat: stoa's own time to the first streamed text",
        row: "AI chat: time to first streamed text",
        goals: &[Goal::OwnMs(5.0)],
        issue: "32",
    },
    Target {
        label: "AI chat: 100 concurrent streams",
        row: "AI chat: 100 concurrent streams",
        goals: &[Goal::PeakMib(143.1)],
        issue: "32",
    },
    Target {
        label: "action-log list, 2 filters, 10M entries, 4 connections",
        row: "GET action logs, 2 filters, 10M entries, 4 connections",
        goals: &[Goal::P99Ms(20.0)],
        issue: "52",
    },
    Target {
        label: "action-log list, 2 filters, 10M entries, 32 connections",
        row: "GET action logs, 2 filters, 10M entries (count 1,000 ahead)",
        goals: &[Goal::ShareOfProfile(0.5)],
        issue: "52",
    },
    Target {
        label: "access log, the admin's own reads",
        row: "GET access logs, the admin's own reads",
        goals: &[Goal::ShareOfProfile(0.5)],
        issue: "52",
    },
    Target {
        label: "action-log CSV export, 1,000 of 10M, 4 connections",
        row: "GET action-log CSV export, 1000 of 10M entries, 4 connections",
        goals: &[Goal::P99Ms(50.0)],
        issue: "52",
    },
    Target {
        label: "bulk stage update of 100,000 deals (issue 52)",
        row: "bulk stage update of",
        goals: &[Goal::Seconds(5.0)],
        issue: "52",
    },
    Target {
        label: "bulk delete of 100,000 products",
        row: "bulk delete of every catalog product",
        goals: &[Goal::Seconds(5.0)],
        issue: "52",
    },
    Target {
        label: "API keys list",
        row: "GET /api/api_keys/keys",
        goals: &[Goal::ShareOfProfile(0.75)],
        issue: "52",
    },
    Target {
        label: "AI conversations list, 100k",
        row: "GET /api/ai_assistant/ai/conversations",
        goals: &[Goal::ShareOfProfile(0.75)],
        issue: "52",
    },
    Target {
        label: "admin navigation",
        row: "GET /api/auth/admin/nav",
        goals: &[Goal::ShareOfProfile(0.75)],
        issue: "52",
    },
    Target {
        label: "tenants list (super admin)",
        row: "GET /api/directory/tenants",
        goals: &[Goal::ShareOfProfile(0.75)],
        issue: "52",
    },
    Target {
        label: "progress jobs list",
        row: "GET /api/progress/jobs",
        goals: &[Goal::ShareOfProfile(0.75)],
        issue: "52",
    },
    Target {
        label: "deals list, filtered over 1M deals, 4 connections (issue 52)",
        row: "GET /api/customers/deals, stage + owner + value range over 1M deals, 4 connections",
        goals: &[Goal::P99Ms(5.0)],
        issue: "52",
    },
    Target {
        label: "deal update (PUT), 32 connections",
        row: "PUT /api/customers/deals/{id} (title), tenant without business rules",
        goals: &[Goal::ShareOfProfile(0.25), Goal::P99Ms(30.0)],
        issue: "52",
    },
];

/// Whether the row named `name` has a target that is a share of the
/// profile rate (such a row is measured beside a profile read of its own).
pub fn share_of_profile(name: &str) -> bool {
    TARGETS.iter().any(|t| {
        name.starts_with(t.row) && t.goals.iter().any(|g| matches!(g, Goal::ShareOfProfile(_)))
    })
}

/// The target's text, e.g. "p99 ≤ 20 ms; ≤ 2 statements".
pub fn target_text(goals: &[Goal]) -> String {
    goals
        .iter()
        .map(|g| match *g {
            Goal::P99Ms(ms) => format!("p99 ≤ {} ms", plain(ms)),
            Goal::Rps(r) => format!("≥ {} req/s", thousands(Some(r))),
            Goal::ShareOfProfile(s) => format!("≥ {:.0}% of `/auth/profile`", s * 100.0),
            Goal::Seconds(s) => format!("≤ {} s", plain(s)),
            Goal::PeakMib(m) => format!("peak ≤ {} MiB", plain(m)),
            Goal::Statements(n) => format!("≤ {} statements/request", plain(n)),
            Goal::P50OverheadPct(p) => format!("p50 ≤ +{}% over no rules", plain(p)),
            Goal::OwnMs(ms) => format!("≤ {} ms of stoa's own", plain(ms)),
            Goal::NoteP99Ms(ms) => format!("p99 ≤ {} ms", plain(ms)),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
