//! Who may call each audit-log endpoint (the authorization matrix,
//! docs/security.md). Undoing or redoing another user's action also needs
//! `audit_logs.undo_tenant` / `redo_tenant`, which the handlers check.

use stoa_core::http::Access::Features;
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

pub const OPERATIONS: &[Operation] = &[
    Operation::get(
        "/audit_logs/audit-logs/actions",
        Features(&["audit_logs.view_self"]),
    )
    .errors(E),
    Operation::get(
        "/audit_logs/audit-logs/actions/export",
        Features(&["audit_logs.view_self"]),
    )
    .errors(E),
    Operation::post(
        "/audit_logs/audit-logs/actions/undo",
        Features(&["audit_logs.undo_self"]),
    )
    .errors(E),
    Operation::post(
        "/audit_logs/audit-logs/actions/redo",
        Features(&["audit_logs.redo_self"]),
    )
    .errors(E),
    Operation::get(
        "/audit_logs/audit-logs/access",
        Features(&["audit_logs.view_self"]),
    )
    .errors(E),
];
