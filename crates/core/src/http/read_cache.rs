//! Cached reads: a list page answered again from memory, in one round trip.
//!
//! A list handler that may be cached ([`keep`]s its answer) hands over the
//! serialized body, the access-log entry the read wrote, and the versions of
//! what the page was computed from: the caller's ACL (`acl_version`) and the
//! named read models it depends on (`read_versions`, bumped by statement-level
//! triggers in the transaction of every write to their tables, see
//! [`versions`]). The next identical request of the same user and selection
//! is answered by [`enforce_access`](super::enforce_access) before its
//! authentication and handler: one statement checks that the session is live,
//! that the caller's user row still has the same tenant and organization, that
//! no version moved, and writes the access-log entry again, in one
//! transaction. When anything moved the entry is dropped and the request
//! takes the normal path; a stale page is never served.
//!
//! Why versions read *in* the page's statement are enough: the page and the
//! versions come from one snapshot, every write that can change the page bumps
//! a version in its own transaction, and versions only grow. If the versions a
//! later check sees equal the stored ones, no write committed in between, so
//! the stored page is still the page.
//!
//! This crate knows nothing of sessions: stoa-auth implements [`ReadCache`].

use std::sync::Arc;

use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use diesel::QueryResult;
use diesel::expression::{
    AppearsOnTable, Expression, SelectableExpression, ValidGrouping, is_aggregate,
};
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Uuid as SqlUuid};
use futures_util::future::LocalBoxFuture;
use uuid::Uuid;

pub use crate::command::access::ReadLog;
use crate::error::AppError;

/// Bodies larger than this are not kept: a page of 100 users is ~50 KiB.
pub const MAX_BODY: usize = 256 * 1024;

/// Who a read was answered to: the session's user as the check will see it,
/// and the ACL version the answer was authorized under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadOwner {
    pub user_id: Uuid,
    /// The user's own tenant and home organization (they key the ACL).
    pub tenant_id: Option<Uuid>,
    pub home_organization_id: Option<Uuid>,
    pub acl_version: i64,
}

/// An answer to keep.
#[derive(Clone, Debug)]
pub struct CachedRead {
    /// The JSON body, as sent.
    pub body: Bytes,
    /// The read models the answer depends on and their versions, read by
    /// [`versions`] in the statement that read the page.
    pub deps: ReadDeps,
    pub versions: Vec<i64>,
    /// `None` for reads that are not access-logged.
    pub log: Option<Arc<ReadLog>>,
}

/// Serves kept answers; stoa-auth implements it for session callers.
pub trait ReadCache: Send + Sync + 'static {
    /// The kept body for `req` when it is still the answer, its access-log
    /// entry written; `None` sends the request down the normal path.
    fn serve(&self, req: &HttpRequest) -> LocalBoxFuture<'static, Option<Bytes>>;

    /// Keeps `read` as the answer to `req` for `owner`.
    fn keep(&self, req: &HttpRequest, owner: ReadOwner, read: CachedRead);
}

/// The cache as app data.
pub type ReadCacheData = web::Data<dyn ReadCache>;

/// Wraps a cache as app data.
pub fn read_cache_data(cache: Arc<dyn ReadCache>) -> ReadCacheData {
    web::Data::from(cache)
}

/// Keeps `read` as the answer to `req` when the app has a cache and the
/// caller can be served from it (`owner` is `None` for API keys).
pub fn keep(req: &HttpRequest, owner: Option<ReadOwner>, read: CachedRead) {
    if let (Some(owner), Some(cache)) = (owner, req.app_data::<ReadCacheData>())
        && read.body.len() <= MAX_BODY
    {
        cache.keep(req, owner, read);
    }
}

/// Answers `value` as JSON and keeps the answer when `versions` is known
/// (the page's statement returned a row) and the caller can be served again.
pub fn answer_json<T: serde::Serialize>(
    req: &HttpRequest,
    owner: Option<ReadOwner>,
    value: &T,
    deps: ReadDeps,
    versions: Option<Vec<i64>>,
    log: Option<ReadLog>,
) -> Result<HttpResponse, AppError> {
    let body = Bytes::from(serde_json::to_vec(value).map_err(AppError::internal)?);
    if let Some(versions) = versions {
        keep(
            req,
            owner,
            CachedRead {
                body: body.clone(),
                deps,
                versions,
                log: log.map(Arc::new),
            },
        );
    }
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(body))
}

/// The cache key of `req`: path and query, as sent.
pub fn target_of(req: &HttpRequest) -> String {
    match req.query_string() {
        "" => req.path().to_string(),
        query => format!("{}?{query}", req.path()),
    }
}

/// What a kept page was computed from: read models (sorted names) and the
/// tenants whose rows it may show.
///
/// A read model's writes bump `<name>@<tenant>` when their triggers know the
/// tenant of each changed row (`stoa_bump_tenant_read_version`), else
/// `<name>` itself. A page of one tenant depends on the sum of `<name>` and
/// `<name>@<tenant>`; a page of every tenant on the sum of all of them. Each
/// version only grows, so an unchanged sum means none of its parts moved:
/// a write in another tenant leaves a tenant's pages kept, and writers of
/// different tenants never wait for one another's version row. Each name is
/// kept in up to eight rows (`shard`, the writing connection's backend pid
/// modulo 8), so writers of one tenant on different connections rarely
/// wait for each other either; the sums read every shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadDeps {
    pub names: &'static [&'static str],
    /// `None`: rows of every tenant (a super admin's unfiltered list).
    pub tenant: Option<Uuid>,
}

impl ReadDeps {
    pub fn new(names: &'static [&'static str], tenant: Option<Uuid>) -> Self {
        Self { names, tenant }
    }
}

/// The SQL expression of the current versions of `deps`, an array in name
/// order. A name no write has bumped yet has no row (counted as 0), so its
/// first bump changes the array too. The names are code constants, written
/// into the SQL as quoted literals, and the tenant is a bind: the statement
/// text stays fixed per list, whichever tenant reads it.
pub fn versions(deps: ReadDeps) -> Versions {
    Versions(deps)
}

/// See [`versions`].
#[derive(Clone, Copy, Debug)]
pub struct Versions(ReadDeps);

impl Expression for Versions {
    type SqlType = Array<BigInt>;
}

impl<QS> AppearsOnTable<QS> for Versions {}

impl<QS> SelectableExpression<QS> for Versions {}

impl<GB> ValidGrouping<GB> for Versions {
    type IsAggregate = is_aggregate::Never;
}

impl QueryId for Versions {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl QueryFragment<Pg> for Versions {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("ARRAY[");
        for (i, name) in self.0.names.iter().enumerate() {
            let name = name.replace('\'', "''");
            out.push_sql(if i == 0 { "" } else { ", " });
            out.push_sql("(SELECT COALESCE(sum(stoa_rv.version), 0)::bigint FROM read_versions stoa_rv WHERE ");
            match &self.0.tenant {
                Some(tenant) => {
                    out.push_sql(&format!("stoa_rv.name IN ('{name}', '{name}@' || "));
                    out.push_bind_param::<SqlUuid, _>(tenant)?;
                    out.push_sql("::text))");
                }
                None => out.push_sql(&format!(
                    "stoa_rv.name = '{name}' OR starts_with(stoa_rv.name, '{name}@'))"
                )),
            }
        }
        out.push_sql("]::bigint[]");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_are_quoted_literals_and_the_tenant_a_bind() {
        let tenant = Uuid::nil();
        let deps = ReadDeps::new(&["auth.users", "o'brien"], Some(tenant));
        let sql =
            diesel::debug_query::<diesel::pg::Pg, _>(&diesel::select(versions(deps))).to_string();
        assert!(
            sql.contains("IN ('auth.users', 'auth.users@' || $1::text)"),
            "{sql}"
        );
        assert!(
            sql.contains("IN ('o''brien', 'o''brien@' || $2::text)"),
            "{sql}"
        );
        let every = ReadDeps::new(&["auth.users"], None);
        let sql =
            diesel::debug_query::<diesel::pg::Pg, _>(&diesel::select(versions(every))).to_string();
        assert!(
            sql.contains("stoa_rv.name = 'auth.users' OR starts_with(stoa_rv.name, 'auth.users@')"),
            "{sql}"
        );
        assert!(!sql.contains('$'), "{sql}");
    }
}
