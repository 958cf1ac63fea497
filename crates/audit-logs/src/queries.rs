//! The SQL of the audit-log endpoints: visibility, filters, ordering, rows
//! and the batched name lookups.

use std::collections::{HashMap, HashSet};

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel_async::AsyncPgConnection;
use serde_json::Value;
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::command::access::REPEAT_SPAN;
use stoa_core::command::schema::{access_logs, action_logs};
use stoa_core::{AppError, AppResult};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::dto::{AccessQuery, ActionQuery, SortDir, SortField};
use crate::error::AuditLogError;

/// `true/1/yes/on` are true; anything else false.
pub fn flag(v: &Option<String>) -> bool {
    matches!(
        v.as_deref().map(str::to_ascii_lowercase).as_deref(),
        Some("true" | "1" | "yes" | "on")
    )
}

pub fn instant(name: &str, v: &Option<String>) -> Result<Option<OffsetDateTime>, AuditLogError> {
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
            .map_err(|_| AuditLogError::InvalidQuery(format!("{name}: not an ISO-8601 date"))),
    }
}

pub fn csv_uuids(name: &str, v: &Option<String>) -> Result<Option<Vec<Uuid>>, AuditLogError> {
    match v.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(raw) => raw
            .split(',')
            .map(|s| s.trim().parse::<Uuid>())
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
            .map_err(|_| AuditLogError::InvalidQuery(format!("{name}: expected uuids"))),
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

/// Who may see what: the caller's tenant, own entries unless `view_tenant`.
pub struct Visibility {
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub actors: Option<Vec<Uuid>>,
    pub can_view_tenant: bool,
    /// Entries that touched other tenants are shown to super admins only.
    pub cross_tenant: bool,
    /// For a caller restricted to some organizations: those organizations
    /// (entries elsewhere, and tenant-level entries of others, stay hidden
    /// whatever the selection, `__all__` included) and the caller itself
    /// (its own entries without an organization stay visible).
    pub restricted: Option<(Vec<Uuid>, Option<Uuid>)>,
}

pub fn visibility(
    ctx: &AuthContext,
    organization: Option<Uuid>,
    actors: &Option<String>,
) -> Result<Visibility, AppError> {
    if ctx.tenant_id.is_none() && !ctx.is_super_admin() {
        return Err(AuditLogError::NoTenant.into());
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
        restricted: ctx
            .organization_restriction()
            .map(|allowed| (allowed.to_vec(), ctx.actor_id())),
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
    if let Some((allowed, me)) = &vis.restricted {
        let inside = action_logs::organization_id.eq_any(allowed.clone());
        query = match me {
            Some(me) => query.filter(
                inside.or(action_logs::organization_id
                    .is_null()
                    .and(action_logs::actor_user_id.eq(*me))),
            ),
            None => query.filter(inside),
        };
    }
    if !vis.cross_tenant {
        query = query.filter(action_logs::other_tenant_ids.eq(Vec::<Uuid>::new()));
    }
    if let Some(actors) = &vis.actors {
        query = match actors.as_slice() {
            [one] => query.filter(action_logs::actor_user_id.eq(*one)),
            many => query.filter(action_logs::actor_user_id.eq_any(many.to_vec())),
        };
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
    let mut types: Vec<String> = csv(&q.action_type)
        .into_iter()
        .filter(|t| known.contains(t.as_str()))
        .collect();
    // One value is written `=`, not `= ANY` (actors above too): Postgres 15
    // gives an index scan with `= ANY` no order, so the newest-first page
    // could not read `(tenant, kind, type, created_at)` newest first. It
    // walked the tenant's newest entries and filtered them instead: 70 ms
    // when a bulk job's 100,000 entries were newer than the matches
    // (issue 52, docs/benchmarks.md); 1 ms with `=`.
    query = match types.len() {
        0 => query,
        1 => query.filter(action_logs::action_type.eq(types.swap_remove(0))),
        _ => query.filter(action_logs::action_type.eq_any(types)),
    };
    let mut fields = csv(&q.field_name);
    query = match fields.len() {
        0 => query,
        1 => query.filter(action_logs::primary_changed_field.eq(fields.swap_remove(0))),
        _ => query.filter(action_logs::primary_changed_field.eq_any(fields)),
    };
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

/// The columns the CSV export renders: an export of 1,000 entries then holds
/// their changes only, not their snapshots, payloads and contexts (which
/// made four concurrent exports grow the server by tens of MiB).
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = action_logs)]
pub struct ExportRow {
    pub actor_user_id: Option<Uuid>,
    pub action_label: Option<String>,
    pub action_type: String,
    pub changes_json: Option<Value>,
    pub source_key: String,
    pub created_at: OffsetDateTime,
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

/// The actors' display names for a page of entries: one batched lookup
/// (stoa-auth owns them). Tenant and organization names are selected with
/// the rows instead (`stoa_directory::names`).
pub async fn actor_names(
    conn: &mut AsyncPgConnection,
    directory: &dyn UserDirectory,
    actors: impl Iterator<Item = Option<Uuid>>,
) -> AppResult<HashMap<Uuid, String>> {
    let mut users: Vec<Uuid> = actors.flatten().collect();
    users.sort();
    users.dedup();
    directory.display_names(conn, &users).await
}

pub fn name(map: &HashMap<Uuid, String>, id: Option<Uuid>) -> Option<String> {
    id.and_then(|id| map.get(&id).cloned())
}

/// The filtered access-log query: the caller's tenant and organization, one
/// actor (`None`: system entries), and the request's filters.
pub fn access_filtered(
    q: &AccessQuery,
    vis: &Visibility,
    actor: Option<Uuid>,
    before: Option<OffsetDateTime>,
    after: Option<OffsetDateTime>,
) -> access_logs::BoxedQuery<'static, Pg> {
    let mut query = access_logs::table.into_boxed();
    if let Some(t) = vis.tenant_id {
        query = query.filter(access_logs::tenant_id.eq(t));
    }
    if let Some(o) = vis.organization_id {
        query = query.filter(access_logs::organization_id.eq(o));
    }
    if let Some((allowed, me)) = &vis.restricted {
        let inside = access_logs::organization_id.eq_any(allowed.clone());
        query = match me {
            Some(me) => query.filter(
                inside.or(access_logs::organization_id
                    .is_null()
                    .and(access_logs::actor_user_id.eq(*me))),
            ),
            None => query.filter(inside),
        };
    }
    query = match actor {
        Some(a) => query.filter(access_logs::actor_user_id.eq(a)),
        None => query.filter(access_logs::actor_user_id.is_null()),
    };
    if let Some(kind) = q.resource_kind.clone().filter(|s| !s.is_empty()) {
        query = query.filter(access_logs::resource_kind.eq(kind));
    }
    if let Some(kind) = q.access_type.clone().filter(|s| !s.is_empty()) {
        query = query.filter(access_logs::access_type.eq(kind));
    }
    // Each bound on a read's time also bounds its row's (`stored_at`, at most
    // `REPEAT_SPAN` earlier), the column the `access_reads` indexes hold.
    if let Some(b) = before {
        query = query
            .filter(access_logs::created_at.lt(b))
            .filter(access_logs::stored_at.lt(b));
    }
    if let Some(a) = after {
        query = query.filter(access_logs::created_at.gt(a));
        if let Some(row_after) = a.checked_sub(REPEAT_SPAN) {
            query = query.filter(access_logs::stored_at.gt(row_after));
        }
    }
    query
}

/// Keeps the access-log entries after `key` in the list's order (newest
/// first, then id descending): keyset paging.
pub fn access_after(
    query: access_logs::BoxedQuery<'static, Pg>,
    (created_at, id): (OffsetDateTime, Uuid),
) -> access_logs::BoxedQuery<'static, Pg> {
    use diesel::sql_types::{Bool, Timestamptz, Uuid as SqlUuid};
    // `access_logs` is a view whose `id` and `created_at` come from arrays:
    // the row's `stored_at` (never later than its reads) lets the scan of
    // `access_reads` start at the key.
    query.filter(access_logs::stored_at.le(created_at)).filter(
        diesel::dsl::sql::<Bool>("(access_logs.created_at, access_logs.id) < (")
            .bind::<Timestamptz, _>(created_at)
            .sql(", ")
            .bind::<SqlUuid, _>(id)
            .sql(")"),
    )
}
