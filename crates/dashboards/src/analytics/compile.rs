//! Compiles a widget data request into one statement.
//!
//! The statement text is built only from the source's declared SQL
//! (relation, columns, field expressions), found by exact name in the
//! registry, and constants of this module; every value is a bind parameter.
//! A name the source does not declare is a 400 before any SQL exists.

use serde_json::Value;
use stoa_acl::slots::{AnalyticsField, AnalyticsSource, FieldKind};
use stoa_core::AppError;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::presets::Range;
use super::request::{Aggregate, Filter, Operator, WidgetDataRequest};
use crate::error::DashboardsError;

/// A value bound to the statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Bind {
    Uuid(Uuid),
    Uuids(Vec<Uuid>),
    Text(String),
    Texts(Vec<String>),
    Time(OffsetDateTime),
    Times(Vec<OffsetDateTime>),
    Int(i64),
    Bool(bool),
}

/// The statement and its parameters (`$1` is `binds[0]`).
#[derive(Debug)]
pub struct Compiled {
    pub sql: String,
    pub binds: Vec<Bind>,
    /// The group field's kind (how keys are read back).
    pub group_kind: Option<FieldKind>,
    pub grouped: bool,
    pub compared: bool,
    /// The source's read model: the statement's `version` column is its
    /// tenant version, and the answer may be kept (`super::cache`).
    pub read_model: Option<&'static str>,
}

/// The tenant's version of `read_model` (a name of code, never of input),
/// as a subquery over `read_versions` with the tenant bound as `tenant`,
/// plus the ACL version (`acl_version`, bumped by every write of roles,
/// memberships, ACLs and organizations): a source may hide rows by other
/// users' grants (`auth:users` hides super admins), so an answer is kept
/// only while no grant moved either. Both only grow, so their sum is
/// unchanged only when neither moved.
pub fn version_sql(read_model: &str, tenant: &str) -> String {
    let name = read_model.replace('\'', "''");
    format!(
        "((SELECT COALESCE(sum(stoa_rv.version), 0)::bigint FROM read_versions stoa_rv \
         WHERE stoa_rv.name IN ('{name}', '{name}@' || {tenant}::text)) \
         + (SELECT COALESCE(max(stoa_av.version), 0)::bigint FROM acl_version stoa_av))"
    )
}

/// The name of the one-row relation every statement defines before the
/// source's SQL, describing the caller (`is_super_admin boolean`): a
/// source hides what its own list endpoint hides from the caller by
/// reading it (`auth:users` hides super admins from everyone else, as
/// `GET /auth/users` does).
pub const CALLER_RELATION: &str = "stoa_caller";

/// The caller's scope: the tenant and, for a caller limited to some
/// organizations, those organizations.
#[derive(Clone, Debug)]
pub struct DataScope {
    pub tenant_id: Uuid,
    pub organizations: Option<Vec<Uuid>>,
    /// Whether the caller is a super admin ([`CALLER_RELATION`]).
    pub super_admin: bool,
}

fn field<'s>(source: &'s AnalyticsSource, name: &str) -> Option<&'s AnalyticsField> {
    source.fields.iter().find(|f| f.name == name)
}

fn bad(message: String) -> AppError {
    DashboardsError::InvalidQuery(message).into()
}

fn numeric(kind: FieldKind) -> bool {
    matches!(kind, FieldKind::Number | FieldKind::Money)
}

struct Builder {
    binds: Vec<Bind>,
}

impl Builder {
    fn bind(&mut self, bind: Bind) -> String {
        self.binds.push(bind);
        format!("${}", self.binds.len())
    }
}

/// A filter value as the field's kind binds it (400 when it cannot be).
fn scalar(field: &AnalyticsField, value: &Value, path: &str) -> Result<Bind, AppError> {
    let invalid = || {
        bad(format!(
            "Invalid filter value for field {}: {path}",
            field.name
        ))
    };
    match field.kind {
        FieldKind::Number | FieldKind::Money => {
            let text = match value {
                Value::Number(n) => n.to_string(),
                Value::String(s) => s.trim().to_string(),
                _ => return Err(invalid()),
            };
            // Postgres reads what f64 reads (no `inf`/`nan`).
            match text.parse::<f64>() {
                Ok(f)
                    if f.is_finite()
                        && !text
                            .chars()
                            .any(|c| c.is_alphabetic() && c != 'e' && c != 'E') =>
                {
                    Ok(Bind::Text(text))
                }
                _ => Err(invalid()),
            }
        }
        FieldKind::Date => match value {
            Value::String(s) => OffsetDateTime::parse(s, &Rfc3339)
                .map(Bind::Time)
                .map_err(|_| invalid()),
            _ => Err(invalid()),
        },
        FieldKind::Text => match value {
            Value::String(s) => Ok(Bind::Text(s.clone())),
            Value::Number(n) => Ok(Bind::Text(n.to_string())),
            Value::Bool(b) => Ok(Bind::Text(b.to_string())),
            _ => Err(invalid()),
        },
    }
}

/// The field's expression as compared: numbers as numeric, text as text.
fn compared(field: &AnalyticsField) -> String {
    match field.kind {
        FieldKind::Number | FieldKind::Money => format!("({})::numeric", field.sql),
        FieldKind::Text => format!("({})::text", field.sql),
        FieldKind::Date => format!("({})", field.sql),
    }
}

fn placeholder_cast(kind: FieldKind, array: bool) -> &'static str {
    match (kind, array) {
        (FieldKind::Number | FieldKind::Money, false) => "::numeric",
        (FieldKind::Number | FieldKind::Money, true) => "::numeric[]",
        _ => "",
    }
}

fn filter_sql(
    b: &mut Builder,
    source: &AnalyticsSource,
    filter: &Filter,
    index: usize,
) -> Result<String, AppError> {
    let f = field(source, &filter.field)
        .ok_or_else(|| bad(format!("Invalid filter field: {}", filter.field)))?;
    let expr = compared(f);
    let path = format!("filters.{index}.value");
    let value = filter.value.as_ref().filter(|v| !v.is_null());
    let op = match filter.operator {
        Operator::IsNull => return Ok(format!("{expr} IS NULL")),
        Operator::IsNotNull => return Ok(format!("{expr} IS NOT NULL")),
        Operator::In | Operator::NotIn => {
            let members: Vec<&Value> = match value {
                Some(Value::Array(items)) => items.iter().collect(),
                Some(one) => vec![one],
                None => Vec::new(),
            };
            let binds = members
                .into_iter()
                .map(|v| scalar(f, v, &path))
                .collect::<Result<Vec<_>, _>>()?;
            let array = match f.kind {
                FieldKind::Date => Bind::Times(
                    binds
                        .into_iter()
                        .filter_map(|b| match b {
                            Bind::Time(t) => Some(t),
                            _ => None,
                        })
                        .collect(),
                ),
                _ => Bind::Texts(
                    binds
                        .into_iter()
                        .filter_map(|b| match b {
                            Bind::Text(t) => Some(t),
                            _ => None,
                        })
                        .collect(),
                ),
            };
            let p = b.bind(array);
            let cast = placeholder_cast(f.kind, true);
            // `in []` matches nothing, `not_in []` everything (ANY of an empty array is false).
            return Ok(if filter.operator == Operator::In {
                format!("{expr} = ANY({p}{cast})")
            } else {
                format!("NOT ({expr} = ANY({p}{cast}))")
            });
        }
        Operator::Eq => "=",
        Operator::Neq => "<>",
        Operator::Gt => ">",
        Operator::Gte => ">=",
        Operator::Lt => "<",
        Operator::Lte => "<=",
    };
    match (filter.operator, value) {
        (Operator::Eq, None) => Ok(format!("{expr} IS NULL")),
        (Operator::Neq, None) => Ok(format!("{expr} IS NOT NULL")),
        // A comparison with null matches nothing, as in SQL.
        (_, None) => Ok("FALSE".into()),
        (_, Some(v)) => {
            let p = b.bind(scalar(f, v, &path)?);
            Ok(format!(
                "{expr} {op} {p}{}",
                placeholder_cast(f.kind, false)
            ))
        }
    }
}

fn aggregate_sql(aggregate: Aggregate, f: &AnalyticsField) -> String {
    let e = f.sql;
    match aggregate {
        Aggregate::Count => format!("count({e})"),
        Aggregate::Sum => format!("coalesce(sum(({e})::numeric), 0)"),
        Aggregate::Avg => format!("coalesce(avg(({e})::numeric), 0)"),
        Aggregate::Min => format!("min(({e})::numeric)"),
        Aggregate::Max => format!("max(({e})::numeric)"),
    }
}

/// Compiles `req` over `source` for `scope`; `ranges` are the date range's
/// current and previous periods (when the request has one).
pub fn compile(
    source: &AnalyticsSource,
    req: &WidgetDataRequest,
    scope: &DataScope,
    ranges: Option<(Range, Range)>,
) -> Result<Compiled, AppError> {
    let metric = field(source, &req.metric.field).ok_or_else(|| {
        bad(format!(
            "Invalid metric field: {} for entity type: {}",
            req.metric.field, source.entity_type
        ))
    })?;
    if req.metric.aggregate != Aggregate::Count && !numeric(metric.kind) {
        return Err(bad(format!(
            "Invalid metric field: {} for entity type: {} (only number fields can be summed, averaged, or compared)",
            req.metric.field, source.entity_type
        )));
    }
    let date = match &req.date_range {
        Some(range) => {
            let f = field(source, &range.field)
                .filter(|f| f.kind == FieldKind::Date)
                .ok_or_else(|| bad(format!("Invalid dateRange field: {}", range.field)))?;
            Some(f)
        }
        None => None,
    };
    let group = match &req.group_by {
        Some(g) => Some(
            field(source, &g.field)
                .ok_or_else(|| bad(format!("Invalid groupBy field: {}", g.field)))?,
        ),
        None => None,
    };

    let mut b = Builder { binds: Vec::new() };
    let tenant = b.bind(Bind::Uuid(scope.tenant_id));
    let super_admin = b.bind(Bind::Bool(scope.super_admin));
    let mut base = vec![format!("{} = {tenant}", source.tenant_column)];
    if let (Some(orgs), Some(column)) = (&scope.organizations, source.organization_column) {
        let p = b.bind(Bind::Uuids(orgs.clone()));
        base.push(format!("{column} = ANY({p})"));
    }
    for (i, filter) in req.filters.iter().flatten().enumerate() {
        let condition = filter_sql(&mut b, source, filter, i)?;
        base.push(format!("({condition})"));
    }
    let mut current = base.clone();
    let mut previous = None;
    if let (Some(f), Some((cur, prev))) = (date, ranges) {
        let (s, e) = (b.bind(Bind::Time(cur.start)), b.bind(Bind::Time(cur.end)));
        current.push(format!("({}) >= {s} AND ({}) < {e}", f.sql, f.sql));
        if req.comparison.is_some() {
            let (s, e) = (b.bind(Bind::Time(prev.start)), b.bind(Bind::Time(prev.end)));
            let mut p = base.clone();
            p.push(format!("({}) >= {s} AND ({}) < {e}", f.sql, f.sql));
            previous = Some(p.join(" AND "));
        }
    }
    let current = current.join(" AND ");
    let agg = aggregate_sql(req.metric.aggregate, metric);
    let relation = source.relation;
    let value = format!("(SELECT ({agg})::text FROM {relation} WHERE {current})");
    let previous_sql = match &previous {
        Some(p) => format!("(SELECT ({agg})::text FROM {relation} WHERE {p})"),
        None => "NULL::text".into(),
    };
    let groups_sql = match (group, &req.group_by) {
        (Some(g), Some(spec)) => {
            let limit = b.bind(Bind::Int(spec.limit.unwrap_or(100).clamp(1, 100)));
            if g.kind == FieldKind::Date {
                let unit = spec
                    .granularity
                    .unwrap_or(super::request::Granularity::Day)
                    .unit();
                // Periods in UTC, keyed by their ISO start; the latest `limit`
                // periods, returned in date order. Rows are grouped by the
                // truncated time and only the groups formatted (formatting
                // each row cost more than the aggregate).
                let period = format!("date_trunc('{unit}', ({}) AT TIME ZONE 'UTC')", g.sql);
                format!(
                    "(SELECT coalesce(json_agg(json_build_array(\
                     to_char(g.t, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), g.v) ORDER BY g.t ASC NULLS LAST), '[]'::json)::text \
                     FROM (SELECT {period} AS t, ({agg})::text AS v FROM {relation} WHERE {current} \
                     GROUP BY 1 ORDER BY 1 DESC NULLS LAST LIMIT {limit}) g)"
                )
            } else {
                let key = format!("({})::text", g.sql);
                format!(
                    "(SELECT coalesce(json_agg(json_build_array(g.k, g.v) ORDER BY g.n DESC NULLS LAST, g.k ASC NULLS LAST), '[]'::json)::text \
                     FROM (SELECT {key} AS k, ({agg})::text AS v, {agg} AS n FROM {relation} WHERE {current} \
                     GROUP BY 1 ORDER BY 3 DESC NULLS LAST, 1 ASC NULLS LAST LIMIT {limit}) g)"
                )
            }
        }
        _ => "NULL::text".into(),
    };
    let version_column = match source.read_model {
        Some(model) => version_sql(model, &tenant),
        None => "NULL::bigint".into(),
    };
    Ok(Compiled {
        sql: format!(
            "WITH {CALLER_RELATION} AS (SELECT {super_admin}::boolean AS is_super_admin) \
             SELECT {value} AS value, {previous_sql} AS previous, {groups_sql} AS groups, \
             {version_column} AS version"
        ),
        binds: b.binds,
        group_kind: group.map(|g| g.kind),
        grouped: group.is_some(),
        compared: previous.is_some(),
        read_model: source.read_model,
    })
}
