//! Filters, paging and rendering of the action and access logs.

use std::collections::HashSet;

use diesel::pg::Pg;
use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::schema::{access_logs, action_logs};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

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

#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SortDir {
    Asc,
    #[default]
    Desc,
}

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
    pub sort_field: Option<SortField>,
    pub sort_dir: Option<SortDir>,
    /// ISO-8601: entries strictly before.
    pub before: Option<String>,
    /// ISO-8601: entries strictly after.
    pub after: Option<String>,
}

/// `true/1/yes/on` are true; anything else false.
pub fn flag(v: &Option<String>) -> bool {
    matches!(
        v.as_deref().map(str::to_ascii_lowercase).as_deref(),
        Some("true" | "1" | "yes" | "on")
    )
}

pub fn instant(name: &str, v: &Option<String>) -> Result<Option<OffsetDateTime>, AppError> {
    match v.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(raw) => OffsetDateTime::parse(raw, &Rfc3339)
            .or_else(|_| {
                time::Date::parse(
                    raw,
                    time::macros::format_description!("[year]-[month]-[day]"),
                )
                .map(|d| d.midnight().assume_utc())
            })
            .map(Some)
            .map_err(|_| {
                AppError::bad_request(format!(
                    "Invalid query parameters: {name}: not an ISO-8601 date"
                ))
            }),
    }
}

fn csv_uuids(name: &str, v: &Option<String>) -> Result<Option<Vec<Uuid>>, AppError> {
    match v.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(raw) => raw
            .split(',')
            .map(|s| s.trim().parse::<Uuid>())
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
            .map_err(|_| {
                AppError::bad_request(format!("Invalid query parameters: {name}: expected uuids"))
            }),
    }
}

fn csv(v: &Option<String>) -> Vec<String> {
    v.as_deref()
        .unwrap_or("")
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
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
    pub fn window(&self) -> Result<Window, AppError> {
        let bad = |m: String| AppError::bad_request(format!("Invalid query parameters: {m}"));
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

/// Who may see what: the caller's tenant, own entries unless `view_tenant`.
pub struct Visibility {
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub actors: Option<Vec<Uuid>>,
    pub can_view_tenant: bool,
    /// Entries that touched other tenants are shown to super admins only.
    pub cross_tenant: bool,
}

pub fn visibility(
    ctx: &AuthContext,
    organization: Option<Uuid>,
    actors: &Option<String>,
) -> Result<Visibility, AppError> {
    if ctx.tenant_id.is_none() && !ctx.is_super_admin() {
        return Err(AppError::forbidden());
    }
    let can_view_tenant = ctx.has("audit_logs.view_tenant");
    let actors = if can_view_tenant {
        csv_uuids("actorUserId", actors)?
    } else {
        // Without tenant visibility the caller sees only their own entries.
        let _ = csv_uuids("actorUserId", actors)?;
        Some(ctx.actor_id().into_iter().collect())
    };
    let organization = organization
        .filter(|o| ctx.can_see_organization(*o))
        .or(ctx.organization_id());
    Ok(Visibility {
        tenant_id: ctx.tenant_id,
        organization_id: organization,
        actors,
        can_view_tenant,
        cross_tenant: ctx.is_super_admin(),
    })
}

type Boxed<'a> = action_logs::BoxedQuery<'a, Pg>;

/// The filtered action-log query (without order and window).
pub fn filtered(q: &ActionQuery, vis: &Visibility) -> Result<Boxed<'static>, AppError> {
    let mut query = action_logs::table.into_boxed();
    query = match vis.tenant_id {
        Some(t) => query.filter(action_logs::tenant_id.eq(t)),
        None => query,
    };
    if let Some(o) = vis.organization_id {
        query = query.filter(action_logs::organization_id.eq(o));
    }
    if !vis.cross_tenant {
        query = query.filter(action_logs::other_tenant_ids.eq(Vec::<Uuid>::new()));
    }
    if let Some(actors) = &vis.actors {
        query = query.filter(action_logs::actor_user_id.eq_any(actors.clone()));
    }
    let kind = q.resource_kind.clone().filter(|s| !s.is_empty());
    let id = q.resource_id.clone().filter(|s| !s.is_empty());
    match (kind, id, flag(&q.include_related)) {
        (Some(kind), Some(id), true) => {
            query = query.filter(
                action_logs::resource_kind
                    .eq(kind.clone())
                    .and(action_logs::resource_id.eq(id.clone()))
                    .or(action_logs::parent_resource_kind
                        .eq(kind)
                        .and(action_logs::parent_resource_id.eq(id))),
            );
        }
        (kind, id, _) => {
            if let Some(kind) = kind {
                query = query.filter(action_logs::resource_kind.eq(kind));
            }
            if let Some(id) = id {
                query = query.filter(action_logs::resource_id.eq(id));
            }
        }
    }
    let known: HashSet<&str> = ["create", "edit", "delete", "assign"].into();
    let types: Vec<String> = csv(&q.action_type)
        .into_iter()
        .filter(|t| known.contains(t.as_str()))
        .collect();
    if !types.is_empty() {
        query = query.filter(action_logs::action_type.eq_any(types));
    }
    let fields = csv(&q.field_name);
    if !fields.is_empty() {
        query = query.filter(action_logs::primary_changed_field.eq_any(fields));
    }
    if flag(&q.undoable_only) {
        query = query
            .filter(action_logs::undo_token.is_not_null())
            .filter(action_logs::execution_state.eq("done"));
    }
    if let Some(before) = instant("before", &q.before)? {
        query = query.filter(action_logs::created_at.lt(before));
    }
    if let Some(after) = instant("after", &q.after)? {
        query = query.filter(action_logs::created_at.gt(after));
    }
    Ok(query)
}

/// Orders a filtered query (ties broken by newest first, then id).
pub fn ordered(query: Boxed<'static>, field: SortField, dir: SortDir) -> Boxed<'static> {
    use action_logs::*;
    let asc = dir == SortDir::Asc;
    let query = match (field, asc) {
        (SortField::CreatedAt, true) => return query.order((created_at.asc(), id.asc())),
        (SortField::CreatedAt, false) => return query.order((created_at.desc(), id.desc())),
        (SortField::User, true) => query.order(actor_user_id.asc()),
        (SortField::User, false) => query.order(actor_user_id.desc()),
        (SortField::Action, true) => query.order(action_label.asc()),
        (SortField::Action, false) => query.order(action_label.desc()),
        (SortField::Field, true) => query.order(primary_changed_field.asc()),
        (SortField::Field, false) => query.order(primary_changed_field.desc()),
        (SortField::Source, true) => query.order(source_key.asc()),
        (SortField::Source, false) => query.order(source_key.desc()),
    };
    query.then_order_by((created_at.desc(), id.desc()))
}

#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = action_logs)]
pub struct ActionRow {
    pub id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub actor_user_id: Option<Uuid>,
    pub command_id: String,
    pub action_label: Option<String>,
    pub action_type: String,
    pub resource_kind: Option<String>,
    pub resource_id: Option<String>,
    pub parent_resource_kind: Option<String>,
    pub parent_resource_id: Option<String>,
    pub execution_state: String,
    pub undo_token: Option<String>,
    pub snapshot_before: Option<Value>,
    pub snapshot_after: Option<Value>,
    pub changes_json: Option<Value>,
    pub context_json: Option<Value>,
    pub source_key: String,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
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
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
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
    pub items: Vec<ActionItem>,
    pub can_view_tenant: bool,
    pub page: u64,
    pub page_size: u64,
    pub total: u64,
    pub total_pages: u64,
    /// True when more entries match than the default count looked at (1,000
    /// past the window's start); `total` is then that bound. Ask with
    /// `includeTotal=true` for the exact number.
    pub total_capped: bool,
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

#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = access_logs)]
pub struct AccessRow {
    pub id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub actor_user_id: Option<Uuid>,
    pub resource_kind: String,
    pub resource_id: String,
    pub access_type: String,
    pub fields: Vec<String>,
    pub context_json: Option<Value>,
    pub created_at: OffsetDateTime,
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
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessList {
    pub items: Vec<AccessItem>,
    pub can_view_tenant: bool,
    pub page: u64,
    pub page_size: u64,
    pub total: u64,
    pub total_pages: u64,
}

/// One CSV cell: quoted when needed, and defused when a spreadsheet would read
/// it as a formula.
pub fn csv_cell(value: &str) -> String {
    let mut v = value.to_string();
    if v.starts_with(['=', '+', '-', '@', '\t', '\r', '\n']) {
        v.insert(0, '\'');
    }
    if v.contains(['"', ',', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v
    }
}

/// A JSON value as a CSV cell's text (arrays joined with `, `).
pub fn cell_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| cell_text(Some(i)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_quoted_and_defused() {
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell("=SUM(A1)"), "'=SUM(A1)");
        assert_eq!(csv_cell("@cmd"), "'@cmd");
        assert_eq!(csv_cell("-1,2"), "\"'-1,2\"");
        assert_eq!(cell_text(Some(&serde_json::json!(["a", 1]))), "a, 1");
    }

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
