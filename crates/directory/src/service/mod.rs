//! What other modules may ask of the directory: [`DirectoryService`], and
//! [`PgDirectory`], the Postgres implementation. Every function takes a
//! connection so callers can compose it into their own transaction (`stoa
//! init` creates a tenant, an organization and a user in one). The SQL, the
//! trait's implementation and `PgDirectory`'s other queries are in
//! `queries/`.
//!
//! The write path of the directory's own endpoints is here too: handlers
//! call [`tenants`] and [`organizations`], which check the caller's scope,
//! open the transaction and run the command (`commands/`), which runs the
//! queries.

pub mod organizations;
pub mod tenants;

use diesel_async::AsyncPgConnection;
use uuid::Uuid;

use crate::dto::CreateOrganization;
use crate::error::DirectoryError;
use crate::model::{OrganizationRow, TenantRow};

type Result<T> = std::result::Result<T, DirectoryError>;

/// What other modules may ask of the directory.
#[expect(
    async_fn_in_trait,
    reason = "implemented and called inside the workspace only, where no caller needs a `Send` bound"
)]
pub trait DirectoryService {
    /// A live tenant.
    async fn tenant(&self, conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<TenantRow>>;
    /// A live organization of `tenant`.
    async fn organization(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        id: Uuid,
    ) -> Result<Option<OrganizationRow>>;
    /// The live organizations of `tenant` that are in `roots` or below one of them.
    async fn subtree_ids(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        roots: &[Uuid],
    ) -> Result<Vec<Uuid>>;
    async fn create_tenant(&self, conn: &mut AsyncPgConnection, name: &str) -> Result<Uuid>;
    async fn create_organization(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        input: CreateOrganization,
    ) -> Result<Uuid>;
}

/// The Postgres implementation.
#[derive(Clone, Copy, Debug, Default)]
pub struct PgDirectory;
