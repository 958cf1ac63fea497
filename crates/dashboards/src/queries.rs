//! The SQL of layouts and widget assignments. Table names are constants;
//! every value is bound.

use diesel::sql_types::{Array, BigInt, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_core::AppError;
use stoa_core::prepared::Cached;
use uuid::Uuid;

use crate::model::{LayoutItem, LayoutState, Mode, RoleWidgetsState, Scope, UserWidgetsState};

/// Locks the key of a row until the transaction ends, whether the row exists
/// or not: a first write and its concurrent twin queue up on the same key
/// (rows ids are derived from it, `model::row_id`).
pub async fn lock_key(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
    Cached(
        sql_query("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 7)) IS NULL AS locked")
            .bind::<SqlUuid, _>(id),
    )
    .execute(conn)
    .await?;
    Ok(())
}

#[derive(QueryableByName)]
struct LayoutRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    user_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    tenant_id: Uuid,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    organization_id: Option<Uuid>,
    #[diesel(sql_type = Jsonb)]
    layout_json: Value,
}

/// Items of a stored layout; whatever is not an item is dropped (the
/// reference keeps only objects with an id and a widget id).
pub fn parse_items(json: &Value) -> Vec<LayoutItem> {
    json.as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| serde_json::from_value(item.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}

pub async fn load_layout(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<LayoutState>, AppError> {
    let rows: Vec<LayoutRow> = Cached(
        sql_query(
            "SELECT id, user_id, tenant_id, organization_id, layout_json \
             FROM dashboard_layouts WHERE id = $1",
        )
        .bind::<SqlUuid, _>(id),
    )
    .load(conn)
    .await?;
    Ok(rows.into_iter().next().map(|r| LayoutState {
        id: r.id,
        user_id: r.user_id,
        scope: Scope {
            tenant_id: r.tenant_id,
            organization_id: r.organization_id,
        },
        items: parse_items(&r.layout_json),
    }))
}

pub async fn save_layout(
    conn: &mut AsyncPgConnection,
    state: &LayoutState,
) -> Result<(), AppError> {
    let items = serde_json::to_value(&state.items).map_err(AppError::internal)?;
    Cached(
        sql_query(
            "INSERT INTO dashboard_layouts (id, user_id, tenant_id, organization_id, layout_json) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (id) DO UPDATE SET layout_json = EXCLUDED.layout_json, updated_at = now()",
        )
        .bind::<SqlUuid, _>(state.id)
        .bind::<SqlUuid, _>(state.user_id)
        .bind::<SqlUuid, _>(state.scope.tenant_id)
        .bind::<Nullable<SqlUuid>, _>(state.scope.organization_id)
        .bind::<Jsonb, _>(items),
    )
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete_row(
    conn: &mut AsyncPgConnection,
    table: &'static str,
    id: Uuid,
) -> Result<(), AppError> {
    sql_query(format!("DELETE FROM {table} WHERE id = $1"))
        .bind::<SqlUuid, _>(id)
        .execute(conn)
        .await?;
    Ok(())
}

#[derive(QueryableByName)]
struct WidgetsRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    owner_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    tenant_id: Uuid,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    organization_id: Option<Uuid>,
    #[diesel(sql_type = Text)]
    mode: String,
    #[diesel(sql_type = Array<Text>)]
    widget_ids: Vec<String>,
}

pub async fn load_role_widgets(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<RoleWidgetsState>, AppError> {
    let rows: Vec<WidgetsRow> = Cached(
        sql_query(
            "SELECT id, role_id AS owner_id, tenant_id, organization_id, 'inherit' AS mode, \
             widget_ids FROM dashboard_role_widgets WHERE id = $1",
        )
        .bind::<SqlUuid, _>(id),
    )
    .load(conn)
    .await?;
    Ok(rows.into_iter().next().map(|r| RoleWidgetsState {
        id: r.id,
        role_id: r.owner_id,
        scope: Scope {
            tenant_id: r.tenant_id,
            organization_id: r.organization_id,
        },
        widget_ids: r.widget_ids,
    }))
}

pub async fn save_role_widgets(
    conn: &mut AsyncPgConnection,
    state: &RoleWidgetsState,
) -> Result<(), AppError> {
    Cached(
        sql_query(
            "INSERT INTO dashboard_role_widgets (id, role_id, tenant_id, organization_id, widget_ids) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (id) DO UPDATE SET widget_ids = EXCLUDED.widget_ids, updated_at = now()",
        )
        .bind::<SqlUuid, _>(state.id)
        .bind::<SqlUuid, _>(state.role_id)
        .bind::<SqlUuid, _>(state.scope.tenant_id)
        .bind::<Nullable<SqlUuid>, _>(state.scope.organization_id)
        .bind::<Array<Text>, _>(&state.widget_ids),
    )
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn load_user_widgets(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<UserWidgetsState>, AppError> {
    let rows: Vec<WidgetsRow> = Cached(
        sql_query(
            "SELECT id, user_id AS owner_id, tenant_id, organization_id, mode, widget_ids \
             FROM dashboard_user_widgets WHERE id = $1",
        )
        .bind::<SqlUuid, _>(id),
    )
    .load(conn)
    .await?;
    Ok(rows.into_iter().next().map(|r| UserWidgetsState {
        id: r.id,
        user_id: r.owner_id,
        scope: Scope {
            tenant_id: r.tenant_id,
            organization_id: r.organization_id,
        },
        mode: Mode::parse(&r.mode),
        widget_ids: r.widget_ids,
    }))
}

pub async fn save_user_widgets(
    conn: &mut AsyncPgConnection,
    state: &UserWidgetsState,
) -> Result<(), AppError> {
    Cached(
        sql_query(
            "INSERT INTO dashboard_user_widgets \
             (id, user_id, tenant_id, organization_id, mode, widget_ids) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (id) DO UPDATE SET mode = EXCLUDED.mode, \
             widget_ids = EXCLUDED.widget_ids, updated_at = now()",
        )
        .bind::<SqlUuid, _>(state.id)
        .bind::<SqlUuid, _>(state.user_id)
        .bind::<SqlUuid, _>(state.scope.tenant_id)
        .bind::<Nullable<SqlUuid>, _>(state.scope.organization_id)
        .bind::<Text, _>(state.mode.as_str())
        .bind::<Array<Text>, _>(&state.widget_ids),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// What decides a user's widgets in a scope, read in one statement: the
/// stored layout (GET layout only), the user's own row and the union of
/// the best row of each of the user's roles.
#[derive(QueryableByName, Debug, Default)]
pub struct WidgetInputs {
    #[diesel(sql_type = Nullable<Jsonb>)]
    pub layout: Option<Value>,
    #[diesel(sql_type = Nullable<Text>)]
    pub user_mode: Option<String>,
    #[diesel(sql_type = Nullable<Array<Text>>)]
    pub user_widgets: Option<Vec<String>>,
    #[diesel(sql_type = Array<Text>)]
    pub role_widgets: Vec<String>,
    /// The versions of [`LAYOUT_READ_DEPS`] for the caller's tenant, read in
    /// the same statement (what a kept layout answer is checked against).
    #[diesel(sql_type = Array<BigInt>)]
    pub versions: Vec<i64>,
}

/// What `GET /dashboards/layout` is computed from besides the ACL (which the
/// kept answer's owner carries): the user's name and e-mail, and the
/// dashboards' own tables (layouts, role and user widget lists; their
/// triggers bump it per tenant). Sorted, as `read_cache` expects.
pub const LAYOUT_READ_DEPS: &[&str] = &["auth.users", "dashboards.layouts"];

/// The statement of [`WidgetInputs`]; `roles_sql` is the account
/// interface's `user_role_ids_sql("$3")` (fixed per process, so the
/// statement stays prepared).
pub fn widget_inputs_sql(roles_sql: &str) -> String {
    format!(
        "SELECT \
           (SELECT layout_json FROM dashboard_layouts WHERE id = $1) AS layout, \
           (SELECT mode FROM dashboard_user_widgets WHERE id = $2) AS user_mode, \
           (SELECT widget_ids FROM dashboard_user_widgets WHERE id = $2) AS user_widgets, \
           ARRAY(SELECT DISTINCT w FROM ( \
             SELECT DISTINCT ON (rw.role_id) rw.widget_ids FROM dashboard_role_widgets rw \
             WHERE rw.role_id = ANY({roles_sql}) AND rw.tenant_id = $4 \
               AND (rw.organization_id IS NULL OR rw.organization_id = $5) \
             ORDER BY rw.role_id, (rw.organization_id IS NOT NULL) DESC \
           ) best, unnest(best.widget_ids) w) AS role_widgets, \
           ARRAY[ \
             (SELECT COALESCE(sum(v.version), 0)::bigint FROM read_versions v \
              WHERE v.name IN ('auth.users', 'auth.users@' || $4::text)), \
             (SELECT COALESCE(sum(v.version), 0)::bigint FROM read_versions v \
              WHERE v.name IN ('dashboards.layouts', 'dashboards.layouts@' || $4::text)) \
           ]::bigint[] AS versions"
    )
}

pub async fn widget_inputs(
    conn: &mut AsyncPgConnection,
    sql: &str,
    layout_id: Uuid,
    user_row_id: Uuid,
    user_id: Uuid,
    scope: Scope,
) -> Result<WidgetInputs, AppError> {
    let rows: Vec<WidgetInputs> = Cached(
        sql_query(sql)
            .bind::<SqlUuid, _>(layout_id)
            .bind::<SqlUuid, _>(user_row_id)
            .bind::<SqlUuid, _>(user_id)
            .bind::<SqlUuid, _>(scope.tenant_id)
            .bind::<Nullable<SqlUuid>, _>(scope.organization_id),
    )
    .load(conn)
    .await?;
    Ok(rows.into_iter().next().unwrap_or_default())
}

/// The best row of a role for a scope: the exact organization's, else the
/// tenant-wide one (the reference's specificity rule).
pub async fn best_role_row(
    conn: &mut AsyncPgConnection,
    role_id: Uuid,
    scope: Scope,
) -> Result<Option<RoleWidgetsState>, AppError> {
    #[derive(QueryableByName)]
    struct Id {
        #[diesel(sql_type = SqlUuid)]
        id: Uuid,
    }
    let rows: Vec<Id> = Cached(
        sql_query(
            "SELECT id FROM dashboard_role_widgets WHERE role_id = $1 AND tenant_id = $2 \
             AND (organization_id IS NULL OR organization_id = $3) \
             ORDER BY (organization_id IS NOT NULL) DESC LIMIT 1",
        )
        .bind::<SqlUuid, _>(role_id)
        .bind::<SqlUuid, _>(scope.tenant_id)
        .bind::<Nullable<SqlUuid>, _>(scope.organization_id),
    )
    .load(conn)
    .await?;
    match rows.into_iter().next() {
        Some(row) => load_role_widgets(conn, row.id).await,
        None => Ok(None),
    }
}

/// Stores the default layout a first read built, unless a write got there
/// first (the read is not a user's change: no action-log entry).
pub async fn insert_layout_if_absent(
    conn: &mut AsyncPgConnection,
    state: &LayoutState,
) -> Result<(), AppError> {
    let items = serde_json::to_value(&state.items).map_err(AppError::internal)?;
    Cached(
        sql_query(
            "INSERT INTO dashboard_layouts (id, user_id, tenant_id, organization_id, layout_json) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
        )
        .bind::<SqlUuid, _>(state.id)
        .bind::<SqlUuid, _>(state.user_id)
        .bind::<SqlUuid, _>(state.scope.tenant_id)
        .bind::<Nullable<SqlUuid>, _>(state.scope.organization_id)
        .bind::<Jsonb, _>(items),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Stores the layout a read pruned, only if it is still what was read
/// (a concurrent write wins).
pub async fn replace_layout_if_unchanged(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    read: &Value,
    items: &[LayoutItem],
) -> Result<(), AppError> {
    let items = serde_json::to_value(items).map_err(AppError::internal)?;
    Cached(
        sql_query(
            "UPDATE dashboard_layouts SET layout_json = $3, updated_at = now() \
             WHERE id = $1 AND layout_json = $2",
        )
        .bind::<SqlUuid, _>(id)
        .bind::<Jsonb, _>(read)
        .bind::<Jsonb, _>(items),
    )
    .execute(conn)
    .await?;
    Ok(())
}
