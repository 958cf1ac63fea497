//! Signing requests in with an API key.
//!
//! Every request makes one database round trip: the key by its prefix (live,
//! unexpired), its creator's liveness and the current `acl_version`, like the
//! session check of stoa-auth. Deleting a key, expiring it or deleting or
//! deactivating its creator therefore takes effect on the very next request,
//! in every server process. Only the resolved ACL is cached in-process, keyed
//! by key, creator scope and selection and tagged with `acl_version`, which
//! every change to roles, ACLs, memberships or organizations bumps.
//!
//! The ACL is the key's roles' ([`AclResolver::resolve_key`], stoa-auth's), bounded by what
//! its creator holds now: the creating user's current ACL and, for a key made
//! through other keys, each of those keys' grants. Demoting or restricting the
//! creator shrinks the key on the next request.
//!
//! `lastUsedAt` is not written per request: uses are recorded in memory and
//! written by [`ApiKeyAuthenticator::flush`] in one batched UPDATE, which the
//! server runs every `STOA_API_KEY_LAST_USED_FLUSH_SECS` (and at shutdown), so
//! a key's `lastUsedAt` lags by at most that interval.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{Array, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::accounts::{AclResolver, KeySubject, Resolved, Selection, Subject};
use stoa_acl::{AuthContext, Authenticator, CredentialKind, Credentials};
use stoa_core::AppError;
use stoa_core::db::Db;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::api_keys;
use crate::secret;

mod live;

pub(crate) use live::{KeyBy, LiveKey, load_live};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct CacheKey {
    key_id: Uuid,
    creator_tenant_id: Option<Uuid>,
    creator_organization_id: Option<Uuid>,
    selection: Selection,
}

const MAX_CACHE_ENTRIES: usize = 50_000;

/// Resolved key ACLs, valid for one `acl_version`.
#[derive(Default)]
struct Cache {
    version: i64,
    entries: HashMap<CacheKey, Resolved>,
}

/// Authenticates API keys; give it to `AuthState::with_api_keys`.
pub struct ApiKeyAuthenticator {
    db: Db,
    /// Resolves the ACLs of keys and of their creators (stoa-auth's).
    acl: Arc<dyn AclResolver>,
    cache: RwLock<Cache>,
    /// Last use per key since the previous flush.
    uses: Mutex<HashMap<Uuid, OffsetDateTime>>,
}

impl ApiKeyAuthenticator {
    pub fn new(db: Db, acl: Arc<dyn AclResolver>) -> Arc<Self> {
        Arc::new(Self {
            db,
            acl,
            cache: RwLock::default(),
            uses: Mutex::default(),
        })
    }

    fn cached(&self, version: i64, key: &CacheKey) -> Option<Resolved> {
        let cache = self.cache.read().unwrap_or_else(|e| e.into_inner());
        (cache.version == version)
            .then(|| cache.entries.get(key).cloned())
            .flatten()
    }

    /// Stores a resolution made after reading `version` (never an older one).
    fn store(&self, version: i64, key: CacheKey, value: Resolved) {
        let mut cache = self.cache.write().unwrap_or_else(|e| e.into_inner());
        if version < cache.version {
            return;
        }
        if version > cache.version || cache.entries.len() >= MAX_CACHE_ENTRIES {
            cache.entries.clear();
            cache.version = version;
        }
        cache.entries.insert(key, value);
    }

    /// Records a use of `key` at `at` for the next flush (the latest use wins).
    pub fn record_use(&self, key: Uuid, at: OffsetDateTime) {
        let mut uses = self.uses.lock().unwrap_or_else(|e| e.into_inner());
        let slot = uses.entry(key).or_insert(at);
        *slot = (*slot).max(at);
    }

    /// Keys used since the last flush.
    pub fn pending_uses(&self) -> usize {
        self.uses.lock().map(|u| u.len()).unwrap_or(0)
    }

    /// Writes the recorded uses as `last_used_at` in one UPDATE per 1,000 keys
    /// (never moving a value backwards). On failure the uses are kept for the
    /// next flush. Returns the number of keys written.
    pub async fn flush(&self) -> Result<usize, AppError> {
        let batch = std::mem::take(&mut *self.uses.lock().unwrap_or_else(|e| e.into_inner()));
        if batch.is_empty() {
            return Ok(0);
        }
        // One batch holds uses of keys of several tenants.
        match stoa_core::rls::bypass("api key last use", self.write_uses(&batch)).await {
            Ok(()) => Ok(batch.len()),
            Err(err) => {
                let mut uses = self.uses.lock().unwrap_or_else(|e| e.into_inner());
                for (key, at) in batch {
                    let slot = uses.entry(key).or_insert(at);
                    *slot = (*slot).max(at);
                }
                Err(err)
            }
        }
    }

    async fn write_uses(&self, batch: &HashMap<Uuid, OffsetDateTime>) -> Result<(), AppError> {
        let entries: Vec<(Uuid, OffsetDateTime)> = batch.iter().map(|(k, t)| (*k, *t)).collect();
        let mut conn = self.db.conn().await?;
        for chunk in entries.chunks(1_000) {
            let (ids, times): (Vec<Uuid>, Vec<OffsetDateTime>) = chunk.iter().copied().unzip();
            diesel::sql_query(
                "UPDATE api_keys AS k SET last_used_at = u.used_at \
                 FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, used_at) \
                 WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.used_at)",
            )
            .bind::<Array<SqlUuid>, _>(ids)
            .bind::<Array<Timestamptz>, _>(times)
            .execute(&mut *conn)
            .await?;
        }
        Ok(())
    }

    /// Flushes recorded uses every `every` until the process ends (the
    /// server spawns this once).
    pub async fn run_flusher(self: Arc<Self>, every: Duration) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            if let Err(err) = self.flush().await {
                tracing::warn!(error = %err, "api keys: could not record last use");
            }
        }
    }

    async fn authenticate_key(&self, credentials: &Credentials) -> Result<AuthContext, AppError> {
        let secret = credentials
            .api_key
            .as_deref()
            .ok_or_else(AppError::unauthorized)?;
        // Malformed values are refused without a database round trip.
        let prefix = secret::prefix_of(secret).ok_or_else(AppError::unauthorized)?;
        let now = OffsetDateTime::now_utc();
        let mut conn = self.db.conn().await?;
        let live = load_live(&mut conn, self.acl.as_ref(), KeyBy::Prefix(prefix), now).await?;
        let live = live
            .filter(|k| secret::matches(secret, &k.key_hash))
            .ok_or_else(AppError::unauthorized)?;
        let version = live.version.unwrap_or(0);
        let cache_key = CacheKey {
            key_id: live.id,
            creator_tenant_id: live.creator_tenant_id,
            creator_organization_id: live.creator_organization_id,
            selection: Selection {
                tenant: credentials.selected_tenant.clone(),
                organization: credentials.selected_org.clone(),
                organization_from_cookie: credentials.selected_org_from_cookie,
            },
        };
        let resolved = match self.cached(version, &cache_key) {
            Some(hit) => hit,
            None => {
                let resolved = resolve(self.acl.as_ref(), &mut conn, &live, &cache_key.selection)
                    .await?
                    .ok_or_else(AppError::unauthorized)?;
                self.store(version, cache_key, resolved.clone());
                resolved
            }
        };
        self.record_use(live.id, now);
        Ok(AuthContext {
            user_id: None,
            session_id: None,
            api_key_id: Some(live.id),
            kind: CredentialKind::ApiKey,
            email: None,
            name: None,
            tenant_id: resolved.tenant_id,
            actor_tenant_id: Some(live.tenant_id),
            home_organization_id: live.organization_id,
            guards: Default::default(),
            acl: resolved.acl,
            // Keys' answers are never kept (AuthContext::read_owner).
            acl_version: None,
        })
    }
}

impl ApiKeyAuthenticator {
    /// The principal of key `key_id` acting for a business rule of `tenant`
    /// in `organization` (`CALL_OPEN_MERCATO`): the same live checks as a
    /// request signed in with the key (not deleted, not expired, its creator
    /// active) and the same ACL (its roles now, bounded by its creator now,
    /// `organization` selected), with kind `BusinessRule`. 403 naming the
    /// reason when the key is not a live key of `tenant`; the selection's
    /// 422 when the key may not act in `organization`.
    pub async fn principal_for(
        &self,
        key_id: Uuid,
        tenant: Uuid,
        organization: Uuid,
    ) -> Result<AuthContext, AppError> {
        let now = OffsetDateTime::now_utc();
        let mut conn = self.db.conn().await?;
        let live = load_live(
            &mut conn,
            self.acl.as_ref(),
            KeyBy::IdInTenant(key_id, tenant),
            now,
        )
        .await?;
        let live = live.ok_or_else(|| {
            AppError::new(
                actix_web::http::StatusCode::FORBIDDEN,
                "the API key is not available (unknown in this tenant, revoked or expired, \
                 or its creator is inactive)",
            )
        })?;
        let selection = Selection {
            tenant: None,
            organization: Some(organization.to_string()),
            organization_from_cookie: false,
        };
        let resolved = resolve(self.acl.as_ref(), &mut conn, &live, &selection)
            .await?
            .ok_or_else(|| {
                AppError::new(
                    actix_web::http::StatusCode::FORBIDDEN,
                    "the API key is not available (a key of its creator chain is gone)",
                )
            })?;
        self.record_use(live.id, now);
        Ok(AuthContext {
            user_id: None,
            session_id: None,
            api_key_id: Some(live.id),
            kind: CredentialKind::BusinessRule,
            email: None,
            name: None,
            tenant_id: resolved.tenant_id,
            actor_tenant_id: Some(live.tenant_id),
            home_organization_id: live.organization_id,
            guards: Default::default(),
            acl: resolved.acl,
            acl_version: None,
        })
    }
}

/// A key of the creator chain, as its grants are resolved.
#[derive(Queryable)]
struct ChainKey {
    id: Uuid,
    tenant_id: Uuid,
    organization_id: Option<Uuid>,
    role_ids: Vec<Uuid>,
}

/// The key's ACL bounded by its creators; `None` when a key of its creator
/// chain is gone (deleting a key deletes the keys made through it, so this
/// is a safety net).
pub(crate) async fn resolve(
    acl: &dyn AclResolver,
    conn: &mut AsyncPgConnection,
    key: &LiveKey,
    selection: &Selection,
) -> Result<Option<Resolved>, AppError> {
    let creator = acl
        .resolve_user(
            conn,
            Subject {
                user_id: key.creator_user_id,
                tenant_id: key.creator_tenant_id,
                home_organization_id: key.creator_organization_id,
            },
            &Selection::default(),
        )
        .await?;
    let mut ceiling = creator;
    if !key.creator_key_ids.is_empty() {
        let now = OffsetDateTime::now_utc();
        let chain: Vec<ChainKey> = api_keys::table
            .filter(api_keys::id.eq_any(&key.creator_key_ids))
            .filter(api_keys::deleted_at.is_null())
            .filter(
                api_keys::expires_at
                    .is_null()
                    .or(api_keys::expires_at.gt(now)),
            )
            .select((
                api_keys::id,
                api_keys::tenant_id,
                api_keys::organization_id,
                api_keys::role_ids,
            ))
            .load(conn)
            .await?;
        // From the key the user made down to the one that made this key.
        for id in &key.creator_key_ids {
            let Some(link) = chain.iter().find(|c| c.id == *id) else {
                return Ok(None);
            };
            let subject = KeySubject {
                tenant_id: link.tenant_id,
                organization_id: link.organization_id,
                role_ids: &link.role_ids,
            };
            let selection = Selection::default();
            ceiling = acl
                .resolve_key(conn, subject, Some(&ceiling), &selection)
                .await?;
        }
    }
    let subject = KeySubject {
        tenant_id: key.tenant_id,
        organization_id: key.organization_id,
        role_ids: &key.role_ids,
    };
    acl.resolve_key(conn, subject, Some(&ceiling), selection)
        .await
        .map(Some)
}

impl Authenticator for ApiKeyAuthenticator {
    fn authenticate<'a>(
        &'a self,
        credentials: &'a Credentials,
    ) -> BoxFuture<'a, Result<AuthContext, AppError>> {
        Box::pin(self.authenticate_key(credentials))
    }
}
