//! Runs a widget data request for a caller: the checks, the one statement,
//! and the result's shape.

use diesel::pg::Pg;
use diesel::query_builder::BoxedSqlQuery;
use diesel::sql_types::{Array, BigInt, Bool, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::{Number, Value};
use stoa_acl::slots::FieldKind;
use stoa_acl::{AuthContext, Registry};
use stoa_core::AppError;
use time::OffsetDateTime;

use super::cache;
use super::compile::{Bind, Compiled, DataScope, compile, version_sql};
use super::request::{
    BatchEntry, BatchResult, ComparisonResult, DataPoint, Metadata, WidgetData, WidgetDataRequest,
};
use crate::error::DashboardsError;

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Nullable<Text>)]
    value: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    previous: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    groups: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    version: Option<i64>,
}

#[derive(QueryableByName)]
struct VersionRow {
    #[diesel(sql_type = BigInt)]
    version: i64,
}

/// The statement's answer: kept (`cache`) while the source's tenant version
/// is unchanged, else read (one statement either way for a source without a
/// read model; a kept answer costs one small statement, a moved one two).
async fn answer(
    conn: &mut AsyncPgConnection,
    sql: String,
    binds: Vec<Bind>,
    read_model: Option<&'static str>,
    tenant: uuid::Uuid,
) -> Result<cache::Answer, AppError> {
    let key = read_model.map(|_| cache::key(&sql, &binds));
    if let (Some(model), Some(key)) = (read_model, &key)
        && let Some((kept_version, kept)) = cache::get(key)
    {
        let check = format!("SELECT {} AS version", version_sql(model, "$1"));
        let now: Vec<VersionRow> = sql_query(check)
            .bind::<SqlUuid, _>(tenant)
            .load(conn)
            .await?;
        if now.iter().map(|r| r.version).next() == Some(kept_version) {
            return Ok(kept);
        }
        cache::forget(key);
    }
    let rows: Vec<Row> = bound(sql_query(sql).into_boxed(), binds).load(conn).await?;
    let row = rows
        .into_iter()
        .next()
        .ok_or_else(|| AppError::internal("widget data: no row"))?;
    let answer = cache::Answer {
        value: row.value,
        previous: row.previous,
        groups: row.groups,
    };
    if let (Some(key), Some(version)) = (key, row.version) {
        cache::put(key, version, answer.clone());
    }
    Ok(answer)
}

/// The caller's data scope (400 `Tenant context is required` without a tenant).
pub fn scope_of(ctx: &AuthContext) -> Result<DataScope, AppError> {
    let tenant_id = ctx.tenant_id.ok_or(DashboardsError::TenantRequired)?;
    Ok(DataScope {
        tenant_id,
        organizations: ctx.acl.visible_organization_ids.clone(),
        super_admin: ctx.is_super_admin(),
    })
}

fn number(text: Option<&str>) -> Value {
    text.and_then(|t| t.parse::<f64>().ok())
        .and_then(Number::from_f64)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

fn bound<'a>(
    mut query: BoxedSqlQuery<'a, Pg, diesel::query_builder::SqlQuery>,
    binds: Vec<Bind>,
) -> BoxedSqlQuery<'a, Pg, diesel::query_builder::SqlQuery> {
    for bind in binds {
        query = match bind {
            Bind::Uuid(v) => query.bind::<SqlUuid, _>(v),
            Bind::Uuids(v) => query.bind::<Array<SqlUuid>, _>(v),
            Bind::Text(v) => query.bind::<Text, _>(v),
            Bind::Texts(v) => query.bind::<Array<Text>, _>(v),
            Bind::Time(v) => query.bind::<Timestamptz, _>(v),
            Bind::Times(v) => query.bind::<Array<Timestamptz>, _>(v),
            Bind::Int(v) => query.bind::<BigInt, _>(v),
            Bind::Bool(v) => query.bind::<Bool, _>(v),
        };
    }
    query
}

/// Compiles `req` for the caller (entity features: 403) without running it.
pub fn prepare(
    registry: &Registry,
    ctx: &AuthContext,
    req: &WidgetDataRequest,
    now: OffsetDateTime,
) -> Result<Compiled, AppError> {
    let source = registry
        .analytics_source(&req.entity_type)
        .ok_or_else(|| DashboardsError::InvalidEntityType(req.entity_type.clone()))?;
    if !source.features.iter().all(|f| ctx.has(f)) {
        return Err(DashboardsError::Forbidden.into());
    }
    let scope = scope_of(ctx)?;
    let ranges = req.date_range.as_ref().map(|r| r.preset.ranges(now));
    compile(source, req, &scope, ranges)
}

/// Runs one request: one statement (see [`answer`] for kept answers).
pub async fn widget_data(
    conn: &mut AsyncPgConnection,
    registry: &Registry,
    ctx: &AuthContext,
    req: &WidgetDataRequest,
) -> Result<WidgetData, AppError> {
    let now = OffsetDateTime::now_utc();
    let compiled = prepare(registry, ctx, req, now)?;
    let Compiled {
        sql,
        binds,
        group_kind,
        grouped,
        compared,
        read_model,
    } = compiled;
    let tenant = scope_of(ctx)?.tenant_id;
    let row = answer(conn, sql, binds, read_model, tenant).await?;
    let mut data = Vec::new();
    if grouped {
        let groups: Vec<(Value, Option<String>)> = row
            .groups
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(AppError::internal)?
            .unwrap_or_default();
        let labels = req
            .group_by
            .as_ref()
            .and_then(|g| g.resolve_labels)
            .unwrap_or(false);
        for (key, value) in groups {
            let key = match (group_kind, &key) {
                (Some(FieldKind::Number | FieldKind::Money), Value::String(s)) => number(Some(s)),
                _ => key,
            };
            let label = match (&key, labels) {
                (Value::String(s), true) if !s.is_empty() => Some(s.clone()),
                (Value::Number(n), true) => Some(n.to_string()),
                _ => None,
            };
            data.push(DataPoint {
                group_key: key,
                group_label: label,
                value: number(value.as_deref()),
                exact_value: value,
            });
        }
    }
    let value = number(row.value.as_deref());
    let comparison = match (compared, &value, number(row.previous.as_deref())) {
        (true, Value::Number(cur), Value::Number(prev)) => {
            let (cur, prev) = (cur.as_f64().unwrap_or(0.0), prev.as_f64().unwrap_or(0.0));
            let change = if prev == 0.0 {
                if cur == 0.0 { 0.0 } else { 100.0 }
            } else {
                (cur - prev) / prev.abs() * 100.0
            };
            let direction = if cur > prev {
                "up"
            } else if cur < prev {
                "down"
            } else {
                "unchanged"
            };
            Some(ComparisonResult {
                value: number(row.previous.as_deref()),
                change,
                direction,
            })
        }
        _ => None,
    };
    let record_count = if grouped {
        data.len() as i64
    } else {
        i64::from(!value.is_null())
    };
    Ok(WidgetData {
        value,
        exact_value: row.value,
        data,
        comparison,
        metadata: Metadata {
            fetched_at: stoa_core::serde_util::timestamp::format(now),
            record_count,
            currency: None,
        },
    })
}

/// Runs every entry on one connection; each fails alone.
pub async fn batch(
    conn: &mut AsyncPgConnection,
    registry: &Registry,
    ctx: &AuthContext,
    entries: Vec<BatchEntry>,
) -> Vec<BatchResult> {
    let mut results = Vec::with_capacity(entries.len());
    for entry in entries {
        let result = match widget_data(conn, registry, ctx, &entry.request).await {
            Ok(data) => BatchResult {
                id: entry.id,
                ok: true,
                data: Some(data),
                error: None,
            },
            Err(err) => {
                // A server error was logged where it was built; the client
                // gets the generic message.
                let error = if err.status().is_server_error() {
                    "An error occurred while processing your request".to_string()
                } else {
                    err.message().to_string()
                };
                BatchResult {
                    id: entry.id,
                    ok: false,
                    data: None,
                    error: Some(error),
                }
            }
        };
        results.push(result);
    }
    results
}
