//! Widget assignments of a role or a user: reads with their scope, writes
//! through the kit.

use super::*;

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
