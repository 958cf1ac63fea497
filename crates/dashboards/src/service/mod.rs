//! The rules of layouts and widget assignments. Reads take a connection;
//! writes open the transaction and write through the resource kit
//! (`stoa_acl::resource`, see [`crate::commands`]): it locks the row's key,
//! checks the caller, then the service builds the new state from what it
//! reads, and the kit checks and records it.

use std::collections::HashSet;

use actix_web::http::StatusCode;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use stoa_acl::accounts::{Accounts, Selection, Subject};
use stoa_acl::resource::{self as kit, Resource, Write};
use stoa_acl::slots::WidgetDef;
use stoa_acl::{AclResolver, AuthContext, Registry, RoleDirectory, UserDirectory};
use stoa_core::AppError;
use stoa_core::command::Operation;
use stoa_core::db::Db;
use uuid::Uuid;

use crate::commands::{
    LAYOUT_LABEL, ROLE_WIDGETS_LABEL, SAVE_LAYOUT, SAVE_ROLE_WIDGETS, SAVE_USER_WIDGETS,
    USER_WIDGETS_LABEL,
};
use crate::dto::{
    DashboardContext, Layout, LayoutItemInput, LayoutResponse, PatchLayoutItem, RoleWidgets,
    ScopeView, UserWidgets,
};
use crate::error::DashboardsError;
use crate::model::{
    LAYOUT_KIND, LayoutItem, LayoutState, Mode, ROLE_WIDGETS_KIND, RoleWidgetsState, Scope, Size,
    USER_WIDGETS_KIND, UserWidgetsState, row_id,
};
use crate::queries::{self, WidgetInputs, parse_items};
use crate::reach;
use crate::widgets::{CatalogEntry, effective, known_ids};

mod assignments;

pub use assignments::*;

/// The caller's user (a layout belongs to a user: an API key acting on its
/// own has none).
fn caller_user(ctx: &AuthContext) -> Result<Uuid, AppError> {
    ctx.user_id.ok_or_else(|| DashboardsError::Forbidden.into())
}

/// The scope rows are keyed by: the tenant and the token's (home) organization.
pub fn caller_scope(ctx: &AuthContext) -> Result<Scope, AppError> {
    Ok(Scope {
        tenant_id: ctx.tenant()?,
        organization_id: ctx.home_organization_id,
    })
}

/// Reads what decides `user`'s widgets in `scope` (and the stored layout).
async fn inputs(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    user: Uuid,
    scope: Scope,
) -> Result<WidgetInputs, AppError> {
    let sql = queries::widget_inputs_sql(&roles.user_role_ids_sql("$3"));
    let layout_id = row_id(LAYOUT_KIND, user, scope.tenant_id, scope.organization_id);
    let user_row = row_id(
        USER_WIDGETS_KIND,
        user,
        scope.tenant_id,
        scope.organization_id,
    );
    queries::widget_inputs(conn, &sql, layout_id, user_row, user, scope).await
}

fn new_item(index: usize, widget: &WidgetDef) -> LayoutItem {
    LayoutItem {
        id: Uuid::new_v4(),
        widget_id: widget.id.into(),
        order: index as i64,
        priority: index as i64,
        size: Some(widget.default_size.into()),
        settings: widget.default_settings.map(|f| f()),
    }
}

/// The stored items cleaned as the reference does: duplicates dropped (the
/// first kept), sorted by `order` (then `priority`), widgets no longer
/// allowed dropped, renumbered.
pub fn normalize(items: Vec<LayoutItem>, allowed: &HashSet<&str>) -> Vec<LayoutItem> {
    let mut seen = HashSet::new();
    let mut items: Vec<LayoutItem> = items.into_iter().filter(|i| seen.insert(i.id)).collect();
    items.sort_by_key(|i| (i.order, i.priority));
    items
        .into_iter()
        .filter(|i| allowed.contains(i.widget_id.as_str()))
        .enumerate()
        .map(|(n, mut i)| {
            i.order = n as i64;
            i.priority = n as i64;
            i
        })
        .collect()
}

/// `GET /dashboards/layout`: one statement for a cached caller, plus one
/// write when the layout is new or lost widgets.
pub async fn get_layout(
    db: &Db,
    registry: &Registry,
    roles: &dyn RoleDirectory,
    ctx: &AuthContext,
) -> Result<(LayoutResponse, Vec<i64>), AppError> {
    let user = caller_user(ctx)?;
    let scope = caller_scope(ctx)?;
    let mut conn = db.conn().await?;
    let read = inputs(&mut conn, roles, user, scope).await?;
    let allowed = effective(registry.widgets(), &read, |f| ctx.has(f));
    let allowed_ids: HashSet<&str> = allowed.iter().map(|w| w.id).collect();
    let id = row_id(LAYOUT_KIND, user, scope.tenant_id, scope.organization_id);
    let items = match &read.layout {
        None => {
            let items: Vec<LayoutItem> = allowed
                .iter()
                .filter(|w| w.default_enabled)
                .enumerate()
                .map(|(n, w)| new_item(n, w))
                .collect();
            // An empty registry (a broken deploy) stores nothing.
            if !registry.widgets().is_empty() {
                let state = LayoutState {
                    id,
                    user_id: user,
                    scope,
                    items: items.clone(),
                };
                queries::insert_layout_if_absent(&mut conn, &state).await?;
            }
            items
        }
        Some(json) => {
            let stored = parse_items(json);
            let items = normalize(stored.clone(), &allowed_ids);
            let whole = json.as_array().map(Vec::len) == Some(stored.len());
            if (items != stored || !whole) && !registry.widgets().is_empty() {
                queries::replace_layout_if_unchanged(&mut conn, id, json, &items).await?;
            }
            items
        }
    };
    let name = ctx
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(String::from);
    let label = name
        .clone()
        .or_else(|| ctx.email.clone())
        .unwrap_or_else(|| user.to_string());
    let versions = read.versions.clone();
    let response = LayoutResponse {
        layout: Layout { items },
        allowed_widget_ids: allowed.iter().map(|w| w.id.to_string()).collect(),
        can_configure: ctx.has(crate::CONFIGURE),
        context: DashboardContext {
            user_id: user,
            tenant_id: Some(scope.tenant_id),
            organization_id: scope.organization_id,
            user_name: name,
            user_email: ctx.email.clone(),
            user_label: label,
        },
        widgets: allowed.into_iter().map(CatalogEntry::from).collect(),
    };
    Ok((response, versions))
}

/// `PUT /dashboards/layout`: array order wins; widgets the caller may not
/// have are dropped; item ids must be unique.
pub async fn put_layout(
    db: &Db,
    registry: &Registry,
    roles: &dyn RoleDirectory,
    ctx: &AuthContext,
    items: Vec<LayoutItemInput>,
) -> Result<Operation, AppError> {
    if registry.widgets().is_empty() {
        return Err(DashboardsError::RegistryUnavailable.into());
    }
    let user = caller_user(ctx)?;
    let scope = caller_scope(ctx)?;
    let id = row_id(LAYOUT_KIND, user, scope.tenant_id, scope.organization_id);
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = kit::current_in::<LayoutState>(conn, ctx, id, None).await?;
        let read = inputs(conn, roles, user, scope).await?;
        let allowed: HashSet<&str> = effective(registry.widgets(), &read, |f| ctx.has(f))
            .into_iter()
            .map(|w| w.id)
            .collect();
        let kept: Vec<LayoutItem> = items
            .into_iter()
            .filter(|i| allowed.contains(i.widget_id.as_str()))
            .enumerate()
            .map(|(n, i)| LayoutItem {
                id: i.id,
                widget_id: i.widget_id,
                order: n as i64,
                priority: n as i64,
                size: Some(i.size.unwrap_or(Size::Md)),
                settings: i.settings,
            })
            .collect();
        let mut seen = HashSet::new();
        if !kept.iter().all(|i| seen.insert(i.id)) {
            return Err(DashboardsError::DuplicateLayoutItems.into());
        }
        let target = LayoutState {
            id,
            user_id: user,
            scope,
            items: kept,
        };
        let how = Write::new(SAVE_LAYOUT, LAYOUT_LABEL);
        let (_, op) = kit::save_in(conn, ctx, None, how, before, Some(target)).await?;
        Ok(op)
    })
    .await
}

/// `PATCH /dashboards/layout/{itemId}`: a new size and/or settings.
pub async fn patch_layout_item(
    db: &Db,
    ctx: &AuthContext,
    item_id: Uuid,
    body: PatchLayoutItem,
) -> Result<Operation, AppError> {
    let user = caller_user(ctx)?;
    let scope = caller_scope(ctx)?;
    let id = row_id(LAYOUT_KIND, user, scope.tenant_id, scope.organization_id);
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = kit::current_in::<LayoutState>(conn, ctx, id, None)
            .await?
            .ok_or(DashboardsError::LayoutNotFound)?;
        let mut state = before.clone();
        let item = state
            .items
            .iter_mut()
            .find(|i| i.id == item_id)
            .ok_or(DashboardsError::LayoutItemNotFound)?;
        item.size = Some(body.size().or(item.size).unwrap_or(Size::Md));
        if let Some(settings) = body.settings() {
            item.settings = Some(settings);
        }
        let how = Write::new(SAVE_LAYOUT, LAYOUT_LABEL);
        let (_, op) = kit::save_in(conn, ctx, None, how, Some(before), Some(state)).await?;
        Ok(op)
    })
    .await
}
