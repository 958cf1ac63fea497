//! The example's identity: who calls (a static token per user), who a job's
//! creator is when the job runs, and the users deals may be owned by. These
//! are the traits stoa-auth implements in stoa; an embedder implements them
//! over its own users (here the `users` table of its own migration).
//!
//! - [`Authenticator`]: a request's bearer token → the caller's
//!   [`AuthContext`] (tenant, organization, granted features);
//! - [`CreatorResolver`]: a queued job's creator → its [`AuthContext`] as
//!   it stands when the job runs (the bulk jobs act as their creator);
//! - [`UserDirectory`]: deal owners are checked and named through it.

use std::collections::HashMap;
use std::sync::Arc;

use diesel::QueryableByName;
use diesel::sql_types::{Array, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::{
    AuthContext, Authenticator, CredentialKind, Credentials, ResolvedAcl, UserDirectory, UserRef,
};
use stoa_acl::{Creator, CreatorGone, CreatorResolver};
use stoa_core::AppError;
use stoa_core::command::WriteGuards;
use stoa_core::db::Db;
use uuid::Uuid;

/// The example's users, reached by token (requests) or by id (jobs).
pub struct Identity {
    /// Where a request's caller is looked up (the jobs' and the owner
    /// checks' lookups run on the caller's connection).
    db: Db,
    /// Token → user. A real embedder verifies signed tokens or sessions;
    /// a fixed table keeps the example to what stoa needs from it.
    tokens: HashMap<String, Uuid>,
}

impl Identity {
    pub fn new(db: Db, tokens: impl IntoIterator<Item = (String, Uuid)>) -> Arc<Self> {
        Arc::new(Self {
            db,
            tokens: tokens.into_iter().collect(),
        })
    }
}

/// A live user as the identity reads it.
#[derive(QueryableByName)]
struct Member {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    tenant_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    organization_id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Array<Text>)]
    features: Vec<String>,
}

/// The live user `id`. `FOR SHARE`: inside a job's unit the row stays as
/// read until the unit commits (a deactivation waits for it), as the
/// [`CreatorResolver`] contract asks.
async fn member(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Member>, AppError> {
    let found = diesel::sql_query(
        "SELECT id, tenant_id, organization_id, name, features FROM users \
         WHERE id = $1 AND active FOR SHARE",
    )
    .bind::<SqlUuid, _>(id)
    .get_result::<Member>(conn)
    .await;
    match found {
        Ok(m) => Ok(Some(m)),
        Err(diesel::result::Error::NotFound) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// The caller's context: its tenant, its one organization selected (writes
/// go there, reads see the whole tenant) and its features.
fn context_of(m: Member, organization: Option<Uuid>) -> AuthContext {
    let selected = organization.unwrap_or(m.organization_id);
    AuthContext {
        user_id: Some(m.id),
        session_id: None,
        api_key_id: None,
        kind: CredentialKind::Session,
        email: None,
        name: Some(m.name),
        tenant_id: Some(m.tenant_id),
        actor_tenant_id: Some(m.tenant_id),
        home_organization_id: Some(m.organization_id),
        acl: Arc::new(ResolvedAcl {
            is_super_admin: false,
            features: m.features,
            roles: Vec::new(),
            allowed_organization_ids: None,
            selected_organization_id: Some(selected),
            visible_organization_ids: None,
        }),
        // No ACL version: list answers are not kept for these callers.
        acl_version: None,
        // No write guards in this program.
        guards: WriteGuards::default(),
    }
}

impl Authenticator for Identity {
    fn authenticate<'a>(
        &'a self,
        credentials: &'a Credentials,
    ) -> BoxFuture<'a, Result<AuthContext, AppError>> {
        Box::pin(async move {
            let token = credentials
                .bearer
                .as_deref()
                .or(credentials.api_key.as_deref());
            let Some(user) = token.and_then(|t| self.tokens.get(t)) else {
                return Err(AppError::unauthorized());
            };
            // The extractor runs this across tenants (`stoa_core::rls::bypass`):
            // the user is found before its tenant is known.
            let mut conn = self.db.conn().await?;
            let member = member(&mut conn, *user)
                .await?
                .ok_or_else(AppError::unauthorized)?;
            Ok(context_of(member, None))
        })
    }
}

impl CreatorResolver for Identity {
    fn resolve_creator<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        creator: Creator,
    ) -> BoxFuture<'a, Result<Result<AuthContext, CreatorGone>, AppError>> {
        Box::pin(async move {
            let Some(user) = creator.user_id else {
                return Ok(Err(CreatorGone("this program has no API keys".into())));
            };
            Ok(match member(conn, user).await? {
                Some(m) if m.tenant_id == creator.tenant_id => {
                    Ok(context_of(m, creator.organization_id))
                }
                Some(_) => Err(CreatorGone("the user left the job's tenant".into())),
                None => Err(CreatorGone("the user is deactivated or deleted".into())),
            })
        })
    }
}

#[derive(QueryableByName)]
struct Named {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
}

impl UserDirectory for Identity {
    fn user<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, Result<Option<UserRef>, AppError>> {
        Box::pin(async move {
            Ok(member(conn, id).await?.map(|m| UserRef {
                id: m.id,
                tenant_id: Some(m.tenant_id),
                organization_id: Some(m.organization_id),
            }))
        })
    }

    fn display_names<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<HashMap<Uuid, String>, AppError>> {
        Box::pin(async move {
            let named = diesel::sql_query("SELECT id, name FROM users WHERE id = ANY($1)")
                .bind::<Array<SqlUuid>, _>(ids)
                .load::<Named>(conn)
                .await?;
            Ok(named.into_iter().map(|n| (n.id, n.name)).collect())
        })
    }
}
