//! The narrow interfaces through which modules reach accounts (users, roles,
//! ACL resolution) without depending on stoa-auth.
//!
//! stoa-auth owns users, roles and ACLs and implements every trait here
//! (`stoa_auth::PgAccounts`); the server hands the implementation to each
//! module that needs one when it mounts it (`stoa_devices::configure(..,
//! users)`, `stoa_audit_logs::configure(.., users)`,
//! `ApiKeyAuthenticator::new(db, acl)`, `stoa_api_keys::configure(roles, ..)`).
//! A module registers what it receives as app data
//! (`web::Data<dyn UserDirectory>` ...) and its handlers extract it.
//!
//! The traits are split by capability, as lldap splits its backend handlers:
//! - [`UserDirectory`]: look up a user and display names;
//! - [`AclResolver`]: resolve a user's or an API key's ACL;
//! - [`RoleDirectory`]: look roles up for the grant boundary, whose checks
//!   are plain functions over the caller in [`crate::grants`].
//!
//! Every method takes the caller's connection, so a lookup joins the
//! transaction the module is in.

use std::collections::HashMap;
use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use stoa_core::AppError;
use uuid::Uuid;

use crate::ResolvedAcl;
use crate::grants::{RoleGrant, RoleLookupError};

/// The action log's resource kind of a user (a device's parent, for one).
pub const USER_KIND: &str = "auth.user";

/// A live user, as other modules see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserRef {
    pub id: Uuid,
    /// `None` for users outside every tenant (platform super admins).
    pub tenant_id: Option<Uuid>,
    /// The home organization.
    pub organization_id: Option<Uuid>,
}

/// Users and their display names.
pub trait UserDirectory: Send + Sync + 'static {
    /// The live (not deleted) user `id`, of any tenant: the caller checks the
    /// tenant.
    fn user<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, Result<Option<UserRef>, AppError>>;

    /// The names to show for `ids` (the name, else the e-mail), deleted users
    /// included; unknown ids are left out.
    fn display_names<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<HashMap<Uuid, String>, AppError>>;
}

/// What the caller asked to act in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Selection {
    pub tenant: Option<String>,
    pub organization: Option<String>,
    /// The organization came from the cookie (a refusal then clears it).
    pub organization_from_cookie: bool,
}

/// The user facts resolution starts from (read by the per-request session check).
#[derive(Clone, Copy, Debug)]
pub struct Subject {
    pub user_id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub home_organization_id: Option<Uuid>,
}

/// What an API key's grants are resolved from.
#[derive(Clone, Copy, Debug)]
pub struct KeySubject<'a> {
    /// The key's tenant.
    pub tenant_id: Uuid,
    /// The key's organization (its "home"); `None` = not bound to one.
    pub organization_id: Option<Uuid>,
    /// The roles the key carries (deleted ones are ignored).
    pub role_ids: &'a [Uuid],
}

/// A resolved scope: the tenant the request acts in and the grants there.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub tenant_id: Option<Uuid>,
    pub acl: Arc<ResolvedAcl>,
}

/// Effective ACLs of users and API keys.
pub trait AclResolver: Send + Sync + 'static {
    /// A user's effective ACL in the selected tenant and organization (422
    /// `organization_selection_invalid` for a selection outside it).
    fn resolve_user<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        subject: Subject,
        selection: &'a Selection,
    ) -> BoxFuture<'a, Result<Resolved, AppError>>;

    /// An API key's ACL: its roles' ACLs in its tenant, bounded by `ceiling`
    /// (what its creator holds now), with the same selection rules.
    fn resolve_key<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        subject: KeySubject<'a>,
        ceiling: Option<&'a Resolved>,
        selection: &'a Selection,
    ) -> BoxFuture<'a, Result<Resolved, AppError>>;

    /// The SQL expression (type `uuid[]`) of the scope of the live (active,
    /// not deleted) user `user_id_sql` (SQL, e.g. `api_keys.creator_user_id`):
    /// `ARRAY[tenant_id, organization_id]`, NULL when the user is gone. An
    /// API key's per-request check selects it in its one statement, so a
    /// deactivated creator stops the key on the next request.
    fn live_user_scope_sql(&self, user_id_sql: &str) -> String;
}

/// Roles with what they grant, for the grant boundary
/// ([`crate::grants::check_roles`]).
pub trait RoleDirectory: Send + Sync + 'static {
    /// The live roles `ids` with their ACLs in their own tenant (missing ids
    /// are left out).
    fn role_grants<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<Vec<RoleGrant>, AppError>>;

    /// Role references — ids or (case-insensitive) names — resolved to live
    /// roles of `tenant`, in the order given, without duplicates.
    fn resolve_roles<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        references: &'a [String],
    ) -> BoxFuture<'a, Result<Result<Vec<RoleGrant>, RoleLookupError>, AppError>>;

    /// The live roles of `tenant` as `(id, name)`, by name then id: every
    /// one, or only those among `ids` (unknown ids, deleted roles and other
    /// tenants' roles are left out).
    fn tenant_roles<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        ids: Option<&'a [Uuid]>,
    ) -> BoxFuture<'a, Result<Vec<(Uuid, String)>, AppError>>;

    /// The SQL expression (type `text[]`) of the names of the live roles whose ids the uuid
    /// array `ids_column` holds (SQL, e.g. `api_keys.role_ids`), in the
    /// array's order, NULL for a missing or deleted role. Other modules'
    /// list queries select it in their own statement (no lookup after the
    /// page).
    fn role_names_sql(&self, ids_column: &str) -> String;

    /// The SQL expression (type `uuid[]`) of the ids of the live roles the
    /// user `user_id_sql` (SQL, e.g. `$2` or `l.user_id`) holds, for
    /// other modules' statements that pick rows by the user's roles
    /// (dashboards' role widgets) without a lookup first.
    fn user_role_ids_sql(&self, user_id_sql: &str) -> String;
}

/// Every account interface: what the owner of accounts implements.
pub trait Accounts: UserDirectory + AclResolver + RoleDirectory {}

impl<T: UserDirectory + AclResolver + RoleDirectory> Accounts for T {}

/// Who put work on the queue: the scope a job keeps, resolved again when it
/// runs (`stoa_jobs::JobContext::creator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Creator {
    pub tenant_id: Uuid,
    /// The organization the creator's writes went to (`None` = every
    /// organization the creator may see).
    pub organization_id: Option<Uuid>,
    /// The user (`None` for an API key acting on its own).
    pub user_id: Option<Uuid>,
    pub api_key_id: Option<Uuid>,
}

/// Why a creator can no longer act (deleted, deactivated, key revoked,
/// tenant or organization out of reach): the job ends with this message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CreatorGone(pub String);

/// Rebuilds the [`crate::AuthContext`] of a job's creator when the job runs:
/// its current grants in the job's tenant, with the job's organization
/// selected. stoa-auth implements it (users; API keys through
/// stoa-api-keys), so a job handler needs neither crate.
pub trait CreatorResolver: Send + Sync + 'static {
    /// The creator as it stands now, or [`CreatorGone`]. Inside a
    /// transaction the rows the answer rests on (the user, its role links,
    /// role and user ACLs; a key) are locked `FOR SHARE`, so a demotion or a
    /// deletion made meanwhile waits for the transaction to end: nothing the
    /// transaction writes under the answer lands after the demotion. The
    /// write guards are not attached (the caller holds the registry).
    fn resolve_creator<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        creator: Creator,
    ) -> BoxFuture<'a, Result<Result<crate::AuthContext, CreatorGone>, AppError>>;
}

/// A session opened for a user without a login (onboarding's first user).
#[derive(Clone, Debug)]
pub struct IssuedSession {
    pub user_id: Uuid,
    /// The signed access token (`auth_token`).
    pub access_token: String,
    /// The raw refresh (session) token (`session_token`); only its hash is
    /// stored.
    pub session_token: String,
}

/// What onboarding (self-service sign-up) needs of accounts: the password
/// policy and hashing, whether an e-mail is taken, the first user of the new
/// tenant (provisioned through [`crate::NewTenant`]) and a session for it.
pub trait Onboarding: Send + Sync + 'static {
    /// `Err(message)` naming every rule of the password policy `password`
    /// breaks.
    fn check_password(&self, password: &str) -> Result<(), String>;

    /// Hashes `password` (argon2id, off the async threads) once it passes
    /// the policy (400 naming the rules otherwise).
    fn hash_password<'a>(&'a self, password: &'a str) -> BoxFuture<'a, Result<String, AppError>>;

    /// Whether `password` matches `hash` (constant time, off the async
    /// threads).
    fn verify_password<'a>(
        &'a self,
        password: &'a str,
        hash: &'a str,
    ) -> BoxFuture<'a, Result<bool, AppError>>;

    /// Whether a live (not deleted) user of any tenant has `email`
    /// (compared trimmed and case-insensitively).
    fn email_taken<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        email: &'a str,
    ) -> BoxFuture<'a, Result<bool, AppError>>;

    /// The first user of a tenant being provisioned: the e-mail normalised
    /// and checked (400 when it is not an address), a fresh id
    /// ([`crate::NewTenant::user_ids`] lists it once provisioned).
    fn first_user(
        &self,
        email: &str,
        password_hash: Option<String>,
        role: &'static str,
    ) -> Result<crate::FirstUser, AppError>;

    /// Opens a session for the live user `user_id` on `conn` (the caller's
    /// transaction: a rollback leaves no session) and signs its access token.
    fn issue_session<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        user_id: Uuid,
    ) -> BoxFuture<'a, Result<IssuedSession, AppError>>;
}
