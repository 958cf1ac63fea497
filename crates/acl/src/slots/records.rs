//! The record-target slot: modules whose records others hang things on
//! (attachments' files of a deal, media of a product) answer where a record
//! lives; the caller's reach is decided here, once.

use std::sync::Arc;

use diesel::OptionalExtension;
use diesel::sql_types::Uuid as SqlUuid;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_core::AppError;
use uuid::Uuid;

use crate::context::AuthContext;

/// What answers, for the module owning an entity, where one of its records
/// lives. It reads the owner's own tables on the caller's connection (inside
/// the consumer's transaction); the reach of the caller is decided once, by
/// [`RecordTarget::require_writable`] with [`AuthContext::reach`].
pub trait RecordChecker: Send + Sync {
    /// The organization of record `record_id` of `tenant` (`Some(None)`: a
    /// tenant-wide record); `None` when that tenant has no such record (an
    /// id that is not even well-formed included: never an error).
    fn organization_of<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        record_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Option<Uuid>>, AppError>>;
}

/// An entity whose records other modules may hang things on (attachments:
/// files of a deal, media of a product), answered by its owner so no module
/// reads another's tables.
#[derive(Clone)]
pub struct RecordTarget {
    /// The entity id as attachments name it, e.g. `catalog:catalog_product`.
    pub entity_id: &'static str,
    pub module: &'static str,
    /// Every feature needed to attach to its records (to see them).
    pub features: &'static [&'static str],
    pub checker: Arc<dyn RecordChecker>,
}

impl std::fmt::Debug for RecordTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordTarget")
            .field("entity_id", &self.entity_id)
            .field("features", &self.features)
            .finish_non_exhaustive()
    }
}

impl RecordTarget {
    /// The record `record_id` for a write of `auth` attached to it: 403
    /// (naming the features) without the target's features, `not_found` when
    /// the caller's tenant has no such record or it lies in an organization
    /// the caller does not see, 403 `organization_out_of_scope` when the
    /// caller may only read it; else the record's organization.
    pub async fn require_writable(
        &self,
        conn: &mut AsyncPgConnection,
        auth: &AuthContext,
        record_id: &str,
        not_found: impl FnOnce() -> AppError,
    ) -> Result<Option<Uuid>, AppError> {
        auth.require_all(self.features)?;
        let tenant = auth.tenant()?;
        let Some(organization) = self
            .checker
            .organization_of(conn, tenant, record_id)
            .await?
        else {
            return Err(not_found());
        };
        auth.require_writable(Some(tenant), organization, not_found)?;
        Ok(organization)
    }
}

/// The usual [`RecordChecker`]: a row of the owner's `table` (a constant of
/// the owning module, never input) keyed by a uuid `id`, with `tenant_id`
/// and a non-null `organization_id` (deals, products). An id that is not a
/// uuid is no record.
pub struct OrganizationColumn(pub &'static str);

#[derive(diesel::QueryableByName)]
struct OrganizationRow {
    #[diesel(sql_type = SqlUuid)]
    organization_id: Uuid,
}

impl RecordChecker for OrganizationColumn {
    fn organization_of<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        record_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Option<Uuid>>, AppError>> {
        Box::pin(async move {
            let Ok(id) = Uuid::parse_str(record_id.trim()) else {
                return Ok(None);
            };
            let table = self.0;
            let row: Option<OrganizationRow> = diesel::sql_query(format!(
                "SELECT organization_id FROM {table} WHERE id = $1 AND tenant_id = $2"
            ))
            .bind::<SqlUuid, _>(id)
            .bind::<SqlUuid, _>(tenant)
            .get_result(conn)
            .await
            .optional()?;
            Ok(row.map(|r| Some(r.organization_id)))
        })
    }
}
