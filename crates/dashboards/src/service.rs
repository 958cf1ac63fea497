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

/// A required id of a query string (400 `<name> is required` / `Invalid <name>`).
pub fn required_id(value: Option<&str>, name: &'static str) -> Result<Uuid, AppError> {
    let text = value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .ok_or(DashboardsError::IdRequired(name))?;
    Uuid::parse_str(text).map_err(|_| DashboardsError::InvalidId(name).into())
}

/// The scope of an assignment read: a super admin may name another tenant
/// or organization; everyone else reads their own.
pub fn read_scope(
    ctx: &AuthContext,
    tenant: Option<&str>,
    organization: Option<&str>,
) -> Result<Scope, AppError> {
    let parse = |v: Option<&str>, name: &'static str| -> Result<Option<Uuid>, AppError> {
        match v.map(str::trim).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => Uuid::parse_str(v)
                .map(Some)
                .map_err(|_| DashboardsError::InvalidId(name).into()),
        }
    };
    let mut scope = caller_scope(ctx)?;
    if ctx.is_super_admin() {
        if let Some(t) = parse(tenant, "tenantId")? {
            scope.tenant_id = t;
        }
        if let Some(o) = parse(organization, "organizationId")? {
            scope.organization_id = Some(o);
        }
    }
    Ok(scope)
}

fn scope_view(scope: Scope) -> ScopeView {
    ScopeView {
        tenant_id: Some(scope.tenant_id),
        organization_id: scope.organization_id,
    }
}

/// 400 naming the unknown widget ids.
fn unknown_widgets(unknown: Vec<String>) -> AppError {
    DashboardsError::UnknownWidgets(unknown).into()
}

pub async fn get_role_widgets(
    db: &Db,
    roles: &dyn RoleDirectory,
    ctx: &AuthContext,
    role: Uuid,
    scope: Scope,
) -> Result<RoleWidgets, AppError> {
    let mut conn = db.conn().await?;
    reach::visible_role(&mut conn, roles, ctx, role, scope.tenant_id).await?;
    let row = queries::best_role_row(&mut conn, role, scope).await?;
    Ok(RoleWidgets {
        has_custom: row.is_some(),
        widget_ids: row.map(|r| r.widget_ids).unwrap_or_default(),
        scope: scope_view(scope),
    })
}

/// `PUT /dashboards/roles/widgets`: the role's widgets in the caller's scope;
/// an empty list removes the row (the role then inherits a tenant-wide row,
/// or shows every widget).
pub async fn put_role_widgets(
    db: &Db,
    registry: &Registry,
    accounts: &dyn Accounts,
    ctx: &AuthContext,
    role: Uuid,
    widget_ids: Vec<String>,
) -> Result<(Vec<String>, Operation), AppError> {
    let ids = known_ids(registry.widgets(), &widget_ids).map_err(unknown_widgets)?;
    let scope = caller_scope(ctx)?;
    let id = row_id(
        ROLE_WIDGETS_KIND,
        role,
        scope.tenant_id,
        scope.organization_id,
    );
    let row = RoleWidgetsState {
        id,
        role_id: role,
        scope,
        widget_ids: ids.clone(),
    };
    let target = (!ids.is_empty()).then_some(row.clone());
    let how = Write::new(SAVE_ROLE_WIDGETS, ROLE_WIDGETS_LABEL);
    let op = assign(db, ctx, accounts, how, row, target).await?;
    Ok((ids, op))
}

/// Writes `target` (`None`: removes the row) over the row `row` names, in
/// one transaction through the kit. With no row to remove the kit has no
/// state to check, so `row` is checked as the removal would be (its scope,
/// its role or user): the answer does not tell whether a row existed.
async fn assign<R: Resource<Services = dyn Accounts>>(
    db: &Db,
    ctx: &AuthContext,
    accounts: &dyn Accounts,
    how: Write,
    row: R,
    target: Option<R>,
) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = kit::current_in::<R>(conn, ctx, row.id(), None).await?;
        if before.is_none() && target.is_none() {
            kit::may_write(ctx, &row)?;
            R::check_delete(conn, ctx, Some(accounts), &row).await?;
        }
        let (_, op) = kit::save_in(conn, ctx, Some(accounts), how, before, target).await?;
        Ok(op)
    })
    .await
}

pub async fn get_user_widgets(
    db: &Db,
    registry: &Registry,
    accounts: (&dyn UserDirectory, &dyn AclResolver, &dyn RoleDirectory),
    ctx: &AuthContext,
    user: Uuid,
    scope: Scope,
) -> Result<UserWidgets, AppError> {
    let (users, acl, roles) = accounts;
    let mut conn = db.conn().await?;
    let target = reach::reachable_user(&mut conn, users, acl, ctx, user, scope.tenant_id).await?;
    let read = inputs(&mut conn, roles, user, scope).await?;
    // The target's own grants in that scope decide what it can see.
    let selection = Selection {
        tenant: Some(scope.tenant_id.to_string()),
        organization: scope.organization_id.map(|o| o.to_string()),
        organization_from_cookie: false,
    };
    let subject = Subject {
        user_id: user,
        tenant_id: target.tenant_id,
        home_organization_id: target.organization_id,
    };
    let features = match acl.resolve_user(&mut conn, subject, &selection).await {
        Ok(resolved) => Some(resolved.acl),
        // The target cannot act in that organization: it sees nothing there.
        Err(err) if err.status() == StatusCode::UNPROCESSABLE_ENTITY => None,
        Err(err) => return Err(err),
    };
    let effective_ids = match &features {
        Some(acl) => effective(registry.widgets(), &read, |f| {
            stoa_acl::feature_granted(&acl.features, f, acl.is_super_admin)
        })
        .into_iter()
        .map(|w| w.id.to_string())
        .collect(),
        None => Vec::new(),
    };
    let mode = read
        .user_mode
        .as_deref()
        .map(Mode::parse)
        .unwrap_or_default();
    Ok(UserWidgets {
        mode,
        widget_ids: match mode {
            Mode::Override => read.user_widgets.clone().unwrap_or_default(),
            Mode::Inherit => Vec::new(),
        },
        has_custom: mode == Mode::Override,
        effective_widget_ids: effective_ids,
        scope: scope_view(scope),
    })
}

/// `PUT /dashboards/users/widgets`: `override` stores the list (even an
/// empty one: the user then sees no widget); `inherit` removes the row.
pub async fn put_user_widgets(
    db: &Db,
    registry: &Registry,
    accounts: &dyn Accounts,
    ctx: &AuthContext,
    user: Uuid,
    mode: Mode,
    widget_ids: Vec<String>,
) -> Result<(Vec<String>, Operation), AppError> {
    let ids = match mode {
        Mode::Override => known_ids(registry.widgets(), &widget_ids).map_err(unknown_widgets)?,
        Mode::Inherit => Vec::new(),
    };
    let scope = caller_scope(ctx)?;
    let id = row_id(
        USER_WIDGETS_KIND,
        user,
        scope.tenant_id,
        scope.organization_id,
    );
    let row = UserWidgetsState {
        id,
        user_id: user,
        scope,
        mode,
        widget_ids: ids.clone(),
    };
    let target = (mode == Mode::Override).then_some(row.clone());
    let how = Write::new(SAVE_USER_WIDGETS, USER_WIDGETS_LABEL);
    let op = assign(db, ctx, accounts, how, row, target).await?;
    Ok((ids, op))
}
