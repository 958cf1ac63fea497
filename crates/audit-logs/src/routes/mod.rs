//! Thin handlers of `/audit_logs/audit-logs/...`, one per file: the action
//! log's list, CSV export, undo and redo, and the access log's list.

pub mod export_actions;
pub mod list_access;
pub mod list_actions;
pub mod redo;
pub mod undo;

use stoa_core::AppResult;

use crate::error::AuditLogError;

pub(crate) const VIEW: &str = "audit_logs.view_self";

/// A JSON body, or `error` when it does not parse.
pub(crate) fn parse_body<T: serde::de::DeserializeOwned>(
    body: &[u8],
    error: fn() -> AuditLogError,
) -> AppResult<T> {
    stoa_core::extract::check_json_body(body)?;
    serde_json::from_slice(body).map_err(|_| error().into())
}
