//! The auth module's shared state and the [`Authenticator`] it provides.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use stoa_acl::{AuthContext, Authenticator, CredentialKind, Credentials, Registry};
use stoa_core::AppError;
use stoa_core::db::Db;
use stoa_core::rate_limit::{MemoryRateLimiter, RateLimiter};
use stoa_mail::Mailer;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::acl::{self, Selection, Subject};
use crate::cache::{AclCache, CacheKey};
use crate::config::AuthConfig;
use crate::error::AuthError;
use crate::schema::{acl_version, sessions, users};
use crate::tokens::TokenKeys;

/// Everything the auth handlers and the authenticator share.
pub struct AuthState {
    pub db: Db,
    pub config: AuthConfig,
    pub keys: TokenKeys,
    pub registry: Arc<Registry>,
    pub limiter: Arc<dyn RateLimiter>,
    pub mailer: Arc<dyn Mailer>,
    pub cache: AclCache,
    /// Authenticates API keys (stoa-api-keys provides it); `None` = keys are refused.
    pub api_keys: Option<Arc<dyn Authenticator>>,
}

impl AuthState {
    /// Builds the state with the in-process rate limiter and the configured mailer.
    pub fn new(
        db: Db,
        config: AuthConfig,
        registry: Arc<Registry>,
    ) -> Result<Self, stoa_mail::MailError> {
        let mailer = stoa_mail::mailer(
            db.clone(),
            config.smtp_url.as_ref().map(|s| s.expose()),
            &config.mail_from,
        )?;
        Ok(Self {
            keys: TokenKeys::new(config.jwt_secret.expose()),
            limiter: Arc::new(MemoryRateLimiter::new(config.rate_limits.enabled)),
            mailer,
            cache: AclCache::default(),
            api_keys: None,
            registry,
            db,
            config,
        })
    }
}

impl AuthState {
    /// The list answers kept for this state's sessions (one per process:
    /// register it with `AppContext::with_reads`).
    pub fn reads(&self) -> crate::reads::SessionReads {
        crate::reads::SessionReads::new(self.db.clone(), self.keys.clone())
    }

    /// Hands API-key credentials to `keys`.
    pub fn with_api_keys(mut self, keys: Arc<dyn Authenticator>) -> Self {
        self.api_keys = Some(keys);
        self
    }

    /// A signed access token for `user` in session `sid`.
    pub fn access_token(
        &self,
        user: &crate::queries::UserRow,
        sid: Uuid,
        roles: Vec<String>,
    ) -> Result<String, AppError> {
        self.keys
            .sign(&crate::queries::claims_for(
                user,
                sid,
                roles,
                self.config.access_ttl,
            ))
            .map_err(AppError::internal)
    }
}

/// 401, clearing the auth cookies when the rejected token came from one.
pub fn unauthorized(clear_cookies: bool) -> AppError {
    if clear_cookies {
        AuthError::StaleSessionCookie.into()
    } else {
        AuthError::Unauthorized.into()
    }
}

/// What the per-request check reads about a session's user.
#[derive(Queryable)]
struct LiveSession {
    user_id: Uuid,
    tenant_id: Option<Uuid>,
    organization_id: Option<Uuid>,
    email: String,
    name: Option<String>,
    version: Option<i64>,
}

impl AuthState {
    async fn authenticate_session(
        &self,
        credentials: &Credentials,
    ) -> Result<AuthContext, AppError> {
        let from_cookie = credentials.bearer.is_none();
        let token = credentials
            .bearer
            .as_deref()
            .or(credentials.cookie_token.as_deref())
            .ok_or(AuthError::Unauthorized)?;
        let claims = self
            .keys
            .verify(token)
            .ok_or_else(|| unauthorized(from_cookie))?;
        let mut conn = self.db.conn().await?;
        // The one round trip of a cached request: session and user are live,
        // and the current ACL version. Kept list answers repeat these
        // filters (`reads::still_the_answer`): change both together.
        let live: Option<LiveSession> = sessions::table
            .inner_join(users::table)
            .filter(sessions::id.eq(claims.sid))
            .filter(sessions::user_id.eq(claims.sub))
            .filter(sessions::expires_at.gt(OffsetDateTime::now_utc()))
            .filter(users::deleted_at.is_null())
            .filter(users::is_active.eq(true))
            .select((
                users::id,
                users::tenant_id,
                users::organization_id,
                users::email,
                users::name,
                acl_version::table
                    .select(acl_version::version)
                    .single_value(),
            ))
            .first(&mut *conn)
            .await
            .optional()?;
        let live = live.ok_or_else(|| unauthorized(from_cookie))?;
        let version = live.version.unwrap_or(0);
        let selection = Selection {
            tenant: credentials.selected_tenant.clone(),
            organization: credentials.selected_org.clone(),
            organization_from_cookie: credentials.selected_org_from_cookie,
        };
        let key = CacheKey {
            user_id: live.user_id,
            tenant_id: live.tenant_id,
            home_organization_id: live.organization_id,
            selection,
        };
        let resolved = match self.cache.get(version, &key) {
            Some(hit) => hit,
            None => {
                let subject = Subject {
                    user_id: live.user_id,
                    tenant_id: live.tenant_id,
                    home_organization_id: live.organization_id,
                };
                let resolved = acl::resolve(&mut conn, subject, &key.selection).await?;
                self.cache.put(version, key, resolved.clone());
                resolved
            }
        };
        Ok(AuthContext {
            user_id: Some(live.user_id),
            session_id: Some(claims.sid),
            api_key_id: None,
            kind: CredentialKind::Session,
            email: Some(live.email),
            name: live.name,
            tenant_id: resolved.tenant_id,
            actor_tenant_id: live.tenant_id,
            home_organization_id: live.organization_id,
            guards: Default::default(),
            acl: resolved.acl,
            acl_version: Some(version),
        })
    }
}

impl Authenticator for AuthState {
    fn authenticate<'a>(
        &'a self,
        credentials: &'a Credentials,
    ) -> BoxFuture<'a, Result<AuthContext, AppError>> {
        Box::pin(async move {
            let has_token = credentials.bearer.is_some() || credentials.cookie_token.is_some();
            let key = credentials.api_key.as_ref().and(self.api_keys.as_ref());
            let mut ctx = match (has_token, key) {
                (false, None) => Err(AuthError::Unauthorized.into()),
                (false, Some(keys)) => keys.authenticate(credentials).await,
                // A valid session token wins; an invalid one falls back to the key.
                (true, None) => self.authenticate_session(credentials).await,
                (true, Some(keys)) => match self.authenticate_session(credentials).await {
                    Err(err) if err.status() == actix_web::http::StatusCode::UNAUTHORIZED => {
                        keys.authenticate(credentials).await
                    }
                    other => other,
                },
            }?;
            // Every write of the caller passes the registry's write guards;
            // what they log about a refusal goes through the pool.
            ctx.guards = self
                .registry
                .write_guards()
                .clone()
                .logging_to(self.db.clone());
            Ok(ctx)
        })
    }
}
