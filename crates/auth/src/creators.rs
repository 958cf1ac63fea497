//! Jobs' creators resolved again when the job runs
//! ([`stoa_acl::CreatorResolver`]): users here, API keys through
//! stoa-api-keys (handed over with [`PgCreators::with_api_keys`]).

use std::sync::Arc;

use diesel::prelude::*;
use diesel::sql_types::Uuid as SqlUuid;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::accounts::{Creator, CreatorGone, CreatorResolver, Selection, Subject};
use stoa_acl::{ALL_ORGANIZATIONS, AuthContext, CredentialKind};
use stoa_core::AppError;
use uuid::Uuid;

use crate::acl;
use crate::schema::users;

/// Resolves job creators from stoa-auth's tables.
#[derive(Clone, Default)]
pub struct PgCreators {
    /// Resolves API-key creators (stoa-api-keys); `None` = such jobs fail.
    keys: Option<Arc<dyn CreatorResolver>>,
}

impl PgCreators {
    pub fn new() -> Self {
        Self::default()
    }

    /// Hands creators that are API keys to `keys`.
    pub fn with_api_keys(mut self, keys: Arc<dyn CreatorResolver>) -> Self {
        self.keys = Some(keys);
        self
    }
}

#[derive(Queryable)]
struct LiveUser {
    id: Uuid,
    tenant_id: Option<Uuid>,
    organization_id: Option<Uuid>,
    email: String,
    name: Option<String>,
}

/// Locks what a user's grants rest on — the user, its role links, the
/// roles and their ACLs, its own ACLs — `FOR SHARE`: a demotion, a role
/// edit or a deletion waits for the caller's transaction.
const LOCK_SQL: &str = "
SELECT (SELECT count(*) FROM (SELECT 1 FROM users WHERE id = $1 FOR SHARE) a)
     + (SELECT count(*) FROM (SELECT 1 FROM user_roles WHERE user_id = $1 FOR SHARE) b)
     + (SELECT count(*) FROM (SELECT 1 FROM roles WHERE id IN
           (SELECT role_id FROM user_roles WHERE user_id = $1) FOR SHARE) c)
     + (SELECT count(*) FROM (SELECT 1 FROM role_acls WHERE role_id IN
           (SELECT role_id FROM user_roles WHERE user_id = $1) FOR SHARE) d)
     + (SELECT count(*) FROM (SELECT 1 FROM user_acls WHERE user_id = $1 FOR SHARE) e) AS n
";

/// Locks the grants of `user` for the rest of the caller's transaction (see
/// [`LOCK_SQL`]); an API key's creator is locked by resolving it through
/// [`PgCreators`] as a user.
pub async fn lock_user_grants(conn: &mut AsyncPgConnection, user: Uuid) -> Result<(), AppError> {
    diesel::sql_query(LOCK_SQL)
        .bind::<SqlUuid, _>(user)
        .execute(conn)
        .await?;
    Ok(())
}

/// The user `creator.user_id` as it acts now in the creator's tenant and
/// organization.
async fn resolve_user(
    conn: &mut AsyncPgConnection,
    creator: Creator,
    user_id: Uuid,
) -> Result<Result<AuthContext, CreatorGone>, AppError> {
    lock_user_grants(conn, user_id).await?;
    let user: Option<LiveUser> = users::table
        .filter(users::id.eq(user_id))
        .filter(users::deleted_at.is_null())
        .filter(users::is_active.eq(true))
        .select((
            users::id,
            users::tenant_id,
            users::organization_id,
            users::email,
            users::name,
        ))
        .first(conn)
        .await
        .optional()?;
    let Some(user) = user else {
        return Ok(Err(CreatorGone(
            "the user who created it was deleted or deactivated".into(),
        )));
    };
    let selection = Selection {
        // Only a super admin acts outside its own tenant; resolution ignores
        // the selection for anyone else and the check below refuses.
        tenant: (user.tenant_id != Some(creator.tenant_id)).then(|| creator.tenant_id.to_string()),
        organization: Some(
            creator
                .organization_id
                .map_or_else(|| ALL_ORGANIZATIONS.to_string(), |o| o.to_string()),
        ),
        organization_from_cookie: false,
    };
    let subject = Subject {
        user_id: user.id,
        tenant_id: user.tenant_id,
        home_organization_id: user.organization_id,
    };
    let resolved = match acl::resolve(conn, subject, &selection).await {
        Ok(resolved) => resolved,
        // The organization (or tenant) is no longer within the user's reach.
        Err(err) if err.status().is_client_error() => {
            return Ok(Err(CreatorGone(format!(
                "the user who created it cannot act there any more ({})",
                err.message()
            ))));
        }
        Err(err) => return Err(err),
    };
    if resolved.tenant_id != Some(creator.tenant_id) {
        return Ok(Err(CreatorGone(
            "the user who created it no longer belongs to its tenant".into(),
        )));
    }
    Ok(Ok(AuthContext {
        user_id: Some(user.id),
        session_id: None,
        api_key_id: None,
        kind: CredentialKind::Session,
        email: Some(user.email),
        name: user.name,
        tenant_id: resolved.tenant_id,
        actor_tenant_id: user.tenant_id,
        home_organization_id: user.organization_id,
        acl: resolved.acl,
        acl_version: None,
        guards: Default::default(),
    }))
}

impl CreatorResolver for PgCreators {
    fn resolve_creator<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        creator: Creator,
    ) -> BoxFuture<'a, Result<Result<AuthContext, CreatorGone>, AppError>> {
        Box::pin(async move {
            if creator.api_key_id.is_some() {
                return match &self.keys {
                    Some(keys) => keys.resolve_creator(conn, creator).await,
                    None => Ok(Err(CreatorGone("API keys are not enabled".into()))),
                };
            }
            match creator.user_id {
                Some(user) => resolve_user(conn, creator, user).await,
                None => Ok(Err(CreatorGone("it has no creator".into()))),
            }
        })
    }
}
