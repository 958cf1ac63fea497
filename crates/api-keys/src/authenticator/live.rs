//! The one statement every use of an API key starts with: the key by its
//! prefix or id, live and unexpired, its creator's liveness (through
//! stoa-auth's SQL) and the current `acl_version`.

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Nullable, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::accounts::AclResolver;
use stoa_core::prepared::Cached;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{acl_version, api_keys};

/// What the per-request check reads.
pub(crate) struct LiveKey {
    pub(crate) id: Uuid,
    pub(crate) key_hash: String,
    pub(crate) tenant_id: Uuid,
    pub(crate) organization_id: Option<Uuid>,
    pub(crate) role_ids: Vec<Uuid>,
    pub(crate) creator_key_ids: Vec<Uuid>,
    pub(crate) creator_user_id: Uuid,
    pub(crate) creator_tenant_id: Option<Uuid>,
    pub(crate) creator_organization_id: Option<Uuid>,
    pub(crate) version: Option<i64>,
}

type LiveRow = (
    Uuid,
    String,
    Uuid,
    Option<Uuid>,
    Vec<Uuid>,
    Vec<Uuid>,
    Uuid,
    Option<Vec<Option<Uuid>>>,
    Option<i64>,
);

/// Which key [`load_live`] reads.
pub(crate) enum KeyBy<'a> {
    /// The key a request's secret names (its prefix).
    Prefix(&'a str),
    /// A key by id.
    Id(Uuid),
    /// A key by id, only if it belongs to the tenant.
    IdInTenant(Uuid, Uuid),
}

/// The key `by`, if it is live at `now` (not deleted, not expired, its
/// creator active): the one statement every use of a key starts with, the
/// request check, a job acting as its key and a rule calling as it.
pub(crate) async fn load_live(
    conn: &mut AsyncPgConnection,
    acl: &dyn AclResolver,
    by: KeyBy<'_>,
    now: OffsetDateTime,
) -> QueryResult<Option<LiveKey>> {
    // The creator's liveness and scope come from stoa-auth's SQL (its
    // interface), selected in this one statement.
    let creator = acl.live_user_scope_sql("api_keys.creator_user_id");
    let mut query = api_keys::table
        .filter(api_keys::deleted_at.is_null())
        .filter(
            api_keys::expires_at
                .is_null()
                .or(api_keys::expires_at.gt(now)),
        )
        .filter(sql::<Bool>(&format!("{creator} IS NOT NULL")))
        .select((
            api_keys::id,
            api_keys::key_hash,
            api_keys::tenant_id,
            api_keys::organization_id,
            api_keys::role_ids,
            api_keys::creator_key_ids,
            api_keys::creator_user_id,
            sql::<Nullable<Array<Nullable<SqlUuid>>>>(&creator),
            acl_version::table
                .select(acl_version::version)
                .single_value(),
        ))
        .into_boxed();
    query = match by {
        KeyBy::Prefix(prefix) => query.filter(api_keys::key_prefix.eq(prefix.to_string())),
        KeyBy::Id(id) => query.filter(api_keys::id.eq(id)),
        KeyBy::IdInTenant(id, tenant) => query
            .filter(api_keys::id.eq(id))
            .filter(api_keys::tenant_id.eq(tenant)),
    };
    // Kept prepared per connection ([`Cached`]): the creator's SQL is a
    // literal, which diesel never caches, so every request parsed and
    // planned this statement again (0.5-0.8 ms of Postgres per key
    // request: keys answered feature checks at 32% of a session's rate,
    // issue 52). Its text is the same for every key of a `by` variant.
    let row: Option<LiveRow> = Cached(query.limit(1)).get_result(conn).await.optional()?;
    Ok(row.map(|r| {
        let (creator_tenant_id, creator_organization_id) = match r.7.as_deref() {
            Some(&[tenant, organization]) => (tenant, organization),
            _ => (None, None),
        };
        LiveKey {
            id: r.0,
            key_hash: r.1,
            tenant_id: r.2,
            organization_id: r.3,
            role_ids: r.4,
            creator_key_ids: r.5,
            creator_user_id: r.6,
            creator_tenant_id,
            creator_organization_id,
            version: r.8,
        }
    }))
}
