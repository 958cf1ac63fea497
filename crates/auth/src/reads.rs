//! Kept list answers for session callers: stoa-auth's [`ReadCache`].
//!
//! An answer is kept per user, scope selection (tenant and organization
//! headers or cookies), request target (path and query) and locale, tagged
//! with the ACL version it was authorized under and the read versions of its
//! page (see [`stoa_core::http::read_cache`]). Serving it again is one statement: the
//! session check of [`AuthState`](crate::state::AuthState)'s authenticator
//! (session live, user live and active), the user's tenant and home
//! organization unchanged, `acl_version` and the read versions unchanged.
//! An access-logged read's entry is then queued and written behind the answer
//! ([`stoa_core::command::access::log_behind`]); when the queue is full it is
//! written before the answer, a second statement.
//! API-key callers are never served from here: their answers are not kept.
//!
//! Memory is bounded: at most [`MAX_BYTES`] of bodies and request targets,
//! the oldest entries evicted first, and at most 64 distinct paths.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use actix_web::HttpRequest;
use actix_web::web::Bytes;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::{LocalBoxFuture, ready};
use stoa_acl::Credentials;
use stoa_acl::accounts::Selection;
use stoa_core::AppError;
use stoa_core::command::access::{log_behind, log_now};
use stoa_core::db::Db;
use stoa_core::http::read_cache::{CachedRead, ReadCache, ReadOwner, target_of, versions};
use stoa_core::i18n::request_locale;
use stoa_core::prepared::Cached;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{acl_version, sessions, users};
use crate::tokens::{Claims, TokenKeys};

/// The most bytes of bodies and request targets kept per process.
pub const MAX_BYTES: usize = 8 * 1024 * 1024;
/// The most distinct paths answers are kept for. Only list routes keep
/// answers, but one route has many spellings (`/api/auth/%75sers`): past
/// this bound a new spelling is answered without being kept.
const MAX_PATHS: usize = 64;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    user_id: Uuid,
    selection: Selection,
    target: String,
    /// The request's locale (`stoa_core::i18n::request_locale`): an answer
    /// with translated labels (the admin navigation) is one per locale.
    locale: &'static str,
}

struct Entry {
    owner: ReadOwner,
    read: CachedRead,
}

#[derive(Default)]
struct Store {
    entries: HashMap<Key, Arc<Entry>>,
    /// Keys in the order they were first kept (the eviction order).
    order: VecDeque<Key>,
    bytes: usize,
    /// Paths anything was ever kept for: other requests skip the token check.
    paths: HashSet<String>,
}

impl Store {
    fn insert(&mut self, key: Key, entry: Entry) {
        let path = path_of(&key.target);
        if !self.paths.contains(path) {
            if self.paths.len() >= MAX_PATHS {
                return;
            }
            self.paths.insert(path.to_string());
        }
        let size = key.target.len() + entry.read.body.len();
        match self.entries.insert(key.clone(), Arc::new(entry)) {
            Some(old) => self.bytes = self.bytes + size - size_of(&key, &old),
            None => {
                self.bytes += size;
                self.order.push_back(key);
            }
        }
        while self.bytes > MAX_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(old) = self.entries.remove(&oldest) {
                self.bytes -= size_of(&oldest, &old);
            }
        }
    }

    fn remove(&mut self, key: &Key) {
        if let Some(old) = self.entries.remove(key) {
            self.bytes -= size_of(key, &old);
            self.order.retain(|k| k != key);
        }
    }
}

/// What an entry counts against [`MAX_BYTES`].
fn size_of(key: &Key, entry: &Entry) -> usize {
    key.target.len() + entry.read.body.len()
}

fn path_of(target: &str) -> &str {
    target.split_once('?').map_or(target, |(path, _)| path)
}

/// Kept answers of session callers, checked against the database before each use.
#[derive(Clone)]
pub struct SessionReads {
    db: Db,
    keys: TokenKeys,
    store: Arc<Mutex<Store>>,
}

impl SessionReads {
    /// Answers kept for sessions signed with `keys`, checked on `db`.
    pub fn new(db: Db, keys: TokenKeys) -> Self {
        Self {
            db,
            keys,
            store: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Kept answers.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key of a session request and its verified claims; `None` for an
    /// API-key request or a token that does not verify.
    fn key(&self, req: &HttpRequest) -> Option<(Key, Claims)> {
        let credentials = Credentials::from_request(req);
        if credentials.api_key.is_some() {
            return None;
        }
        let token = credentials
            .bearer
            .as_deref()
            .or(credentials.cookie_token.as_deref())?;
        let claims = self.keys.verify(token)?;
        let key = Key {
            user_id: claims.sub,
            selection: Selection {
                tenant: credentials.selected_tenant,
                organization: credentials.selected_org,
                organization_from_cookie: credentials.selected_org_from_cookie,
            },
            target: target_of(req),
            locale: request_locale(req),
        };
        Some((key, claims))
    }
}

impl ReadCache for SessionReads {
    fn serve(&self, req: &HttpRequest) -> LocalBoxFuture<'static, Option<Bytes>> {
        // A route nothing was kept for costs one set lookup: no token check.
        if !self.lock().paths.contains(req.path()) {
            return Box::pin(ready(None));
        }
        let Some((key, claims)) = self.key(req) else {
            return Box::pin(ready(None));
        };
        let Some(entry) = self.lock().entries.get(&key).cloned() else {
            return Box::pin(ready(None));
        };
        let reads = self.clone();
        Box::pin(async move {
            let fresh = match reads.db.conn().await {
                Ok(mut conn) => still_the_answer(&reads.db, &mut conn, &claims, &entry).await,
                Err(err) => Err(err.into()),
            };
            match fresh {
                Ok(true) => Some(entry.read.body.clone()),
                // Anything moved (or the check failed): the normal path
                // answers, and keeps its answer again.
                Ok(false) | Err(_) => {
                    reads.lock().remove(&key);
                    None
                }
            }
        })
    }

    fn keep(&self, req: &HttpRequest, owner: ReadOwner, read: CachedRead) {
        let Some((key, claims)) = self.key(req) else {
            return;
        };
        if claims.sub == owner.user_id {
            self.lock().insert(key, Entry { owner, read });
        }
    }
}

/// One statement: whether `entry` is still the answer for the session of
/// `claims`; when it is, its access-log entry is logged (see the module docs).
async fn still_the_answer(
    db: &Db,
    conn: &mut AsyncPgConnection,
    claims: &Claims,
    entry: &Entry,
) -> Result<bool, AppError> {
    let (owner, read) = (&entry.owner, &entry.read);
    // The first five filters are the authenticator's own liveness check
    // (`AuthState::authenticate_session`): change both together.
    let live = sessions::table
        .inner_join(users::table)
        .filter(sessions::id.eq(claims.sid))
        .filter(sessions::user_id.eq(claims.sub))
        .filter(sessions::expires_at.gt(OffsetDateTime::now_utc()))
        .filter(users::deleted_at.is_null())
        .filter(users::is_active.eq(true))
        .filter(users::tenant_id.is_not_distinct_from(owner.tenant_id))
        .filter(users::organization_id.is_not_distinct_from(owner.home_organization_id))
        .filter(
            acl_version::table
                .select(acl_version::version)
                .single_value()
                .eq(owner.acl_version),
        )
        .filter(versions(read.deps).eq(&read.versions));
    let live: Vec<Uuid> = Cached(live.select(users::id)).load(conn).await?;
    if live.is_empty() {
        return Ok(false);
    }
    if let Some(log) = &read.log
        && !log.ids.is_empty()
        && !log_behind(db, log)
    {
        log_now(conn, log).await?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(bytes: usize) -> Entry {
        Entry {
            owner: ReadOwner {
                user_id: Uuid::nil(),
                tenant_id: None,
                home_organization_id: None,
                acl_version: 1,
            },
            read: CachedRead {
                body: Bytes::from(vec![b' '; bytes]),
                deps: stoa_core::http::read_cache::ReadDeps::new(&[], None),
                versions: Vec::new(),
                log: None,
            },
        }
    }

    fn key(target: &str) -> Key {
        Key {
            user_id: Uuid::nil(),
            selection: Selection::default(),
            target: target.into(),
            locale: "en",
        }
    }

    #[test]
    fn the_oldest_answers_go_first_when_the_budget_is_spent() {
        let mut store = Store::default();
        let third = MAX_BYTES / 3;
        // Targets count too: each entry is `third` bytes in all.
        store.insert(key("/a?x=1"), entry(third - 6));
        store.insert(key("/b"), entry(third - 2));
        // Replacing an answer keeps its place and counts its new size once.
        store.insert(key("/a?x=1"), entry(third - 6));
        assert_eq!((store.entries.len(), store.bytes), (2, 2 * third));
        store.insert(key("/c"), entry(third - 2 + 3));
        assert!(!store.entries.contains_key(&key("/a?x=1")));
        assert_eq!((store.entries.len(), store.bytes), (2, 2 * third + 3));
        store.remove(&key("/b"));
        assert_eq!((store.order.len(), store.bytes), (1, third + 3));
        assert!(store.paths.contains("/a") && store.paths.contains("/c"));
    }

    #[test]
    fn spellings_of_a_path_are_bounded() {
        let mut store = Store::default();
        for i in 0..MAX_PATHS + 10 {
            store.insert(key(&format!("/api/auth/%75sers{i}")), entry(1));
        }
        assert_eq!(store.paths.len(), MAX_PATHS);
        assert_eq!(store.entries.len(), MAX_PATHS);
        // Known paths still keep new queries.
        store.insert(key("/api/auth/%75sers0?page=2"), entry(1));
        assert_eq!(store.entries.len(), MAX_PATHS + 1);
    }
}
