//! Jobs created by an API key, resolved again when they run
//! ([`stoa_acl::CreatorResolver`]; stoa-auth's `PgCreators` hands key
//! creators here).
//!
//! The key (live, unexpired) is locked `FOR SHARE` and its creating user is
//! resolved through the user resolver first, which locks that user's grants
//! and fails when the user is gone: deleting the key or demoting, deleting
//! or deactivating its creator waits for the job's transaction and ends the
//! job at its next unit. The key's grants are then its roles' bounded by its
//! creator chain, exactly as for a request.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::accounts::{AclResolver, Creator, CreatorGone, CreatorResolver, Selection};
use stoa_acl::{ALL_ORGANIZATIONS, AuthContext, CredentialKind};
use stoa_core::AppError;
use time::OffsetDateTime;

use crate::authenticator::{KeyBy, load_live, resolve};
use crate::schema::api_keys;

/// Resolves creators that are API keys.
pub struct KeyCreators {
    acl: Arc<dyn AclResolver>,
    /// Resolves (and locks) the key's creating user.
    users: Arc<dyn CreatorResolver>,
}

impl KeyCreators {
    pub fn new(acl: Arc<dyn AclResolver>, users: Arc<dyn CreatorResolver>) -> Self {
        Self { acl, users }
    }

    async fn resolve_key(
        &self,
        conn: &mut AsyncPgConnection,
        creator: Creator,
    ) -> Result<Result<AuthContext, CreatorGone>, AppError> {
        let Some(key_id) = creator.api_key_id else {
            return Ok(Err(CreatorGone("it has no creator".into())));
        };
        let gone = || {
            Ok(Err(CreatorGone(
                "its API key was deleted or expired".into(),
            )))
        };
        let now = OffsetDateTime::now_utc();
        let locked: Option<uuid::Uuid> = api_keys::table
            .filter(api_keys::id.eq(key_id))
            .filter(api_keys::tenant_id.eq(creator.tenant_id))
            .select(api_keys::creator_user_id)
            .for_share()
            .first(conn)
            .await
            .optional()?;
        let Some(user) = locked else {
            return gone();
        };
        let owner = Creator {
            tenant_id: creator.tenant_id,
            organization_id: None,
            user_id: Some(user),
            api_key_id: None,
        };
        if let Err(gone) = self.users.resolve_creator(conn, owner).await? {
            return Ok(Err(CreatorGone(format!("its API key's creator: {gone}"))));
        }
        let live = load_live(conn, self.acl.as_ref(), KeyBy::Id(key_id), now).await?;
        let Some(live) = live else {
            return gone();
        };
        let selection = Selection {
            tenant: None,
            organization: Some(
                creator
                    .organization_id
                    .map_or_else(|| ALL_ORGANIZATIONS.to_string(), |o| o.to_string()),
            ),
            organization_from_cookie: false,
        };
        let resolved = match resolve(self.acl.as_ref(), conn, &live, &selection).await {
            Ok(Some(resolved)) => resolved,
            Ok(None) => return gone(),
            Err(err) if err.status().is_client_error() => {
                return Ok(Err(CreatorGone(format!(
                    "its API key cannot act there any more ({})",
                    err.message()
                ))));
            }
            Err(err) => return Err(err),
        };
        Ok(Ok(AuthContext {
            user_id: None,
            session_id: None,
            api_key_id: Some(live.id),
            kind: CredentialKind::ApiKey,
            email: None,
            name: None,
            tenant_id: resolved.tenant_id,
            actor_tenant_id: Some(live.tenant_id),
            home_organization_id: live.organization_id,
            acl: resolved.acl,
            acl_version: None,
            guards: Default::default(),
        }))
    }
}

impl CreatorResolver for KeyCreators {
    fn resolve_creator<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        creator: Creator,
    ) -> BoxFuture<'a, Result<Result<AuthContext, CreatorGone>, AppError>> {
        Box::pin(self.resolve_key(conn, creator))
    }
}
