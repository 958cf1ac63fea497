//! Request and response bodies of the audit-log endpoints.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_core::list::ListPage;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use crate::error::AuditLogError;

#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum SortField {
    #[default]
    CreatedAt,
    User,
    Action,
    Field,
    Source,
}

/// `asc` or `desc` (the action log's default: `desc`).
pub use stoa_core::list::SortDir;

/// Filters of `GET /audit_logs/audit-logs/actions` (and its export).
#[derive(Clone, Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ActionQuery {
    /// Honoured when inside the caller's organizations; default: the selected one.
    pub organization_id: Option<Uuid>,
    /// One uuid or a comma-separated list (callers with `audit_logs.view_tenant`).
    pub actor_user_id: Option<String>,
    #[validate(length(max = 200))]
    pub resource_kind: Option<String>,
    #[validate(length(max = 200))]
    pub resource_id: Option<String>,
    /// `create`, `edit`, `delete`, `assign` (comma-separated).
    pub action_type: Option<String>,
    /// Primary changed field (comma-separated).
    pub field_name: Option<String>,
    /// With `resourceKind` and `resourceId`: also entries whose parent is that resource.
    pub include_related: Option<String>,
    /// Omitted: `total` is exact up to 1,000 entries past the window's start
    /// (`totalCapped` beyond); `true`: always exact; `false`: not counted
    /// (`total` is then a lower bound).
    pub include_total: Option<String>,
    pub undoable_only: Option<String>,
    /// Legacy window size (default 50, max 1000); used with `offset`.
    pub limit: Option<u64>,
    /// Legacy window start; takes precedence over `page`.
    pub offset: Option<u64>,
    pub page: Option<u64>,
    /// Default 50, max 200.
    pub page_size: Option<u64>,
    #[param(inline)]
    pub sort_field: Option<SortField>,
    #[param(inline)]
    pub sort_dir: Option<SortDir>,
    /// ISO-8601: entries strictly before.
    pub before: Option<String>,
    /// ISO-8601: entries strictly after.
    pub after: Option<String>,
}

/// The window of a list: `(offset, size, page)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub offset: u64,
    pub size: u64,
    pub page: u64,
}

impl ActionQuery {
    /// `offset`/`limit` (legacy) when `offset` or `limit` is given without
    /// `page`/`pageSize`, else `page`/`pageSize`.
    pub fn window(&self) -> Result<Window, AuditLogError> {
        let bad = |m: String| AuditLogError::InvalidQuery(m);
        if let Some(size) = self.page_size
            && !(1..=200).contains(&size)
        {
            return Err(bad("pageSize: must be between 1 and 200".into()));
        }
        if let Some(limit) = self.limit
            && !(1..=1000).contains(&limit)
        {
            return Err(bad("limit: must be between 1 and 1000".into()));
        }
        if let Some(page) = self.page
            && !(1..=1_000_000).contains(&page)
        {
            return Err(bad("page: must be between 1 and 1000000".into()));
        }
        let legacy = (self.offset.is_some() || self.limit.is_some())
            && self.page.is_none()
            && self.page_size.is_none();
        if legacy {
            let size = self.limit.unwrap_or(50);
            let offset = self.offset.unwrap_or(0).min(1 << 40);
            Ok(Window {
                offset,
                size,
                page: offset / size + 1,
            })
        } else {
            let size = self.page_size.unwrap_or(50);
            let page = self.page.unwrap_or(1);
            let offset = self.offset.unwrap_or((page - 1) * size).min(1 << 40);
            Ok(Window { offset, size, page })
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionItem {
    pub id: Uuid,
    pub command_id: String,
    pub action_label: Option<String>,
    pub execution_state: String,
    pub actor_user_id: Option<Uuid>,
    pub actor_user_name: Option<String>,
    pub tenant_id: Option<Uuid>,
    pub tenant_name: Option<String>,
    pub organization_id: Option<Uuid>,
    pub organization_name: Option<String>,
    pub resource_kind: Option<String>,
    pub resource_id: Option<String>,
    pub parent_resource_kind: Option<String>,
    pub parent_resource_id: Option<String>,
    pub undo_token: Option<String>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    pub snapshot_before: Option<Value>,
    pub snapshot_after: Option<Value>,
    pub changes: Option<Value>,
    pub context: Option<Value>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<ActionItem>,
    pub can_view_tenant: bool,
}

#[derive(Clone, Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct AccessQuery {
    pub organization_id: Option<Uuid>,
    /// Another user's id (callers with `audit_logs.view_tenant`); default: the caller.
    pub actor_user_id: Option<Uuid>,
    #[validate(length(max = 200))]
    pub resource_kind: Option<String>,
    #[validate(length(max = 100))]
    pub access_type: Option<String>,
    pub page: Option<u64>,
    /// Default 50, max 200.
    pub page_size: Option<u64>,
    /// Used as the page size when `pageSize` is absent (max 200).
    pub limit: Option<u64>,
    pub before: Option<String>,
    pub after: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessItem {
    pub id: Uuid,
    pub resource_kind: String,
    pub resource_id: String,
    pub access_type: String,
    pub actor_user_id: Option<Uuid>,
    pub actor_user_name: Option<String>,
    pub tenant_id: Option<Uuid>,
    pub tenant_name: Option<String>,
    pub organization_id: Option<Uuid>,
    pub organization_name: Option<String>,
    pub fields: Vec<String>,
    pub context: Option<Value>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<AccessItem>,
    pub can_view_tenant: bool,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoRequest {
    pub undo_token: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoResponse {
    pub ok: bool,
    pub log_id: Uuid,
    /// Fields the undo left as they are: credentials and security flags
    /// (`email`, `password`, `isSuperAdmin`) are never written back.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_restored: Vec<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedoRequest {
    pub log_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedoResponse {
    pub ok: bool,
    pub log_id: Option<Uuid>,
    pub undo_token: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        let q = ActionQuery::default();
        assert_eq!(
            q.window().ok(),
            Some(Window {
                offset: 0,
                size: 50,
                page: 1
            })
        );
        let q = ActionQuery {
            page: Some(3),
            page_size: Some(20),
            ..Default::default()
        };
        assert_eq!(
            q.window().ok(),
            Some(Window {
                offset: 40,
                size: 20,
                page: 3
            })
        );
        let q = ActionQuery {
            limit: Some(1000),
            offset: Some(10),
            ..Default::default()
        };
        assert_eq!(
            q.window().ok(),
            Some(Window {
                offset: 10,
                size: 1000,
                page: 1
            })
        );
        assert!(
            ActionQuery {
                page_size: Some(201),
                ..Default::default()
            }
            .window()
            .is_err()
        );
        assert!(
            ActionQuery {
                limit: Some(1001),
                ..Default::default()
            }
            .window()
            .is_err()
        );
    }
}
