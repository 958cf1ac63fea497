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
use diesel::expression::SqlLiteral;
use diesel::sql_types::{Array, BigInt};
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
    /// The read models the answer depends on (sorted names) and their
    /// versions, read by [`versions`] in the statement that read the page.
    pub deps: &'static [&'static str],
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
    deps: &'static [&'static str],
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

/// The SQL expression of the current versions of `deps` (sorted names), as an
/// array in name order. A name no write has bumped yet has no row, so its
/// first bump changes the array too. The names are code constants, written
/// into the SQL as quoted literals so the statement text stays fixed per list.
pub fn versions(deps: &[&str]) -> SqlLiteral<Array<BigInt>> {
    let names: Vec<String> = deps
        .iter()
        .map(|d| format!("'{}'", d.replace('\'', "''")))
        .collect();
    diesel::dsl::sql::<Array<BigInt>>(&format!(
        "ARRAY(SELECT stoa_rv.version FROM read_versions stoa_rv \
         WHERE stoa_rv.name IN ({}) ORDER BY stoa_rv.name)",
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_are_quoted_literals() {
        let sql = diesel::debug_query::<diesel::pg::Pg, _>(&diesel::select(versions(&[
            "auth.users",
            "o'brien",
        ])))
        .to_string();
        assert!(sql.contains("IN ('auth.users', 'o''brien')"), "{sql}");
    }
}
