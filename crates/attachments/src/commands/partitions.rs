//! Partition writes: create, update (never the code), delete (unused ones,
//! never the defaults).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{
    CREATE_PARTITION, DELETE_PARTITION, PARTITION_KIND, Subject, UPDATE_PARTITION, entry,
    partition_payload,
};
use crate::error::AttachmentsError;
use crate::model::{DEFAULT_CODES, Partition};
use crate::schema::{attachment_partitions as p, attachments as a};

/// Who changes a partition: its tenant's callers within their organization
/// scope (the one rule of `AuthContext::reach`), global ones super admins
/// only.
#[derive(Clone, Debug)]
pub struct PartitionScope {
    pub tenant_id: Uuid,
    pub caller: AuthContext,
}

impl PartitionScope {
    /// Checked on the locked row: a global partition is not found for anyone
    /// but a super admin (as the reference answers), another tenant's or
    /// another organization's is not found, a tenant-wide one is read-only
    /// for a caller restricted to some organizations (403).
    fn check(&self, partition: &Partition) -> Result<(), AppError> {
        if partition.tenant_id.is_none() && !self.caller.is_super_admin() {
            return Err(AttachmentsError::PartitionNotFound.into());
        }
        self.caller
            .require_writable(partition.tenant_id, partition.organization_id, || {
                AttachmentsError::PartitionNotFound.into()
            })
    }

    /// The entry of a change of a partition of this scope's tenant.
    fn entry(
        &self,
        label: &'static str,
        event: &str,
        before: Option<&Partition>,
        after: Option<&Partition>,
    ) -> LogEntry {
        let Some(any) = after.or(before) else {
            return LogEntry::default();
        };
        let subject = Subject {
            kind: PARTITION_KIND,
            label,
            id: any.id,
            before,
            after,
            tenant_id: Some(self.tenant_id),
            organization_id: None,
        };
        entry(subject, event, partition_payload(any.id, &any.code))
    }
}

/// The fields a partition is created or updated with.
#[derive(Clone, Debug)]
pub struct PartitionInput {
    pub code: String,
    pub title: String,
    pub description: Option<String>,
    pub is_public: bool,
    pub requires_ocr: bool,
    pub ocr_model: Option<String>,
    pub storage_driver: String,
    pub config_json: Option<Value>,
}

pub struct CreatePartition {
    pub input: PartitionInput,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
}

impl Command for CreatePartition {
    type Output = Partition;

    fn id(&self) -> &'static str {
        CREATE_PARTITION
    }

    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _actor: &'a Actor,
    ) -> BoxFuture<'a, Result<(Partition, LogEntry), AppError>> {
        Box::pin(async move {
            let i = self.input;
            // A taken code (any tenant's) conflicts without aborting the transaction.
            let created: Option<Partition> = diesel::insert_into(p::table)
                .values((
                    p::code.eq(&i.code),
                    p::title.eq(&i.title),
                    p::description.eq(&i.description),
                    p::is_public.eq(i.is_public),
                    p::requires_ocr.eq(i.requires_ocr),
                    p::ocr_model.eq(&i.ocr_model),
                    p::storage_driver.eq(&i.storage_driver),
                    p::config_json.eq(&i.config_json),
                    p::tenant_id.eq(self.tenant_id),
                    p::organization_id.eq(self.organization_id),
                ))
                .on_conflict(p::code)
                .do_nothing()
                .returning(Partition::as_returning())
                .get_result(conn)
                .await
                .optional()?;
            let created = created.ok_or(AttachmentsError::CodeExists)?;
            let subject = Subject {
                kind: PARTITION_KIND,
                label: "Create attachment partition",
                id: created.id,
                before: None,
                after: Some(&created),
                tenant_id: Some(self.tenant_id),
                organization_id: self.organization_id,
            };
            let payload = partition_payload(created.id, &created.code);
            let log = entry(subject, "attachments.partition.created", payload);
            Ok((created, log))
        })
    }
}

async fn lock_partition(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    scope: &PartitionScope,
) -> Result<Partition, AppError> {
    let found: Option<Partition> = p::table
        .filter(p::id.eq(id))
        .select(Partition::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?;
    // Checked after the lock: what is checked is what gets changed.
    let partition = found.ok_or(AttachmentsError::PartitionNotFound)?;
    scope.check(&partition)?;
    Ok(partition)
}

pub struct UpdatePartition {
    pub id: Uuid,
    pub input: PartitionInput,
    /// Whether the body named these (omitted ones stay as they are).
    pub has_requires_ocr: bool,
    pub has_ocr_model: bool,
    pub has_config_json: bool,
    pub has_storage_driver: bool,
    pub scope: PartitionScope,
}

/// `given` when the body named it, else what `before` had.
fn named<T: Clone>(has: bool, given: &T, before: &T) -> T {
    if has { given.clone() } else { before.clone() }
}

impl Command for UpdatePartition {
    type Output = Partition;

    fn id(&self) -> &'static str {
        UPDATE_PARTITION
    }

    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _actor: &'a Actor,
    ) -> BoxFuture<'a, Result<(Partition, LogEntry), AppError>> {
        Box::pin(async move {
            let before = lock_partition(conn, self.id, &self.scope).await?;
            let i = &self.input;
            if i.code != before.code {
                return Err(AttachmentsError::CodeImmutable.into());
            }
            let after: Partition = diesel::update(p::table.filter(p::id.eq(self.id)))
                .set((
                    p::title.eq(&i.title),
                    p::description.eq(&i.description),
                    p::is_public.eq(i.is_public),
                    p::requires_ocr.eq(named(
                        self.has_requires_ocr,
                        &i.requires_ocr,
                        &before.requires_ocr,
                    )),
                    p::ocr_model.eq(named(self.has_ocr_model, &i.ocr_model, &before.ocr_model)),
                    p::config_json.eq(named(
                        self.has_config_json,
                        &i.config_json,
                        &before.config_json,
                    )),
                    p::storage_driver.eq(named(
                        self.has_storage_driver,
                        &i.storage_driver,
                        &before.storage_driver,
                    )),
                    p::updated_at.eq(OffsetDateTime::now_utc()),
                ))
                .returning(Partition::as_returning())
                .get_result(conn)
                .await?;
            let log = self.scope.entry(
                "Update attachment partition",
                "attachments.partition.updated",
                Some(&before),
                Some(&after),
            );
            Ok((after, log))
        })
    }
}

pub struct DeletePartition {
    pub id: Uuid,
    pub scope: PartitionScope,
}

impl Command for DeletePartition {
    type Output = ();

    fn id(&self) -> &'static str {
        DELETE_PARTITION
    }

    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _actor: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            // Uploads hold the partition row FOR SHARE until they commit, so
            // none can slip in between this check and the delete.
            let before = lock_partition(conn, self.id, &self.scope).await?;
            if DEFAULT_CODES.contains(&before.code.as_str()) {
                return Err(AttachmentsError::DefaultPartition.into());
            }
            let mut users = a::table
                .filter(a::partition_code.eq(&before.code))
                .into_boxed();
            if let Some(tenant) = before.tenant_id {
                users = users.filter(a::tenant_id.eq(tenant));
            }
            let in_use: bool = diesel::select(diesel::dsl::exists(users.select(a::id)))
                .get_result(conn)
                .await?;
            if in_use {
                return Err(AttachmentsError::PartitionInUse.into());
            }
            diesel::delete(p::table.filter(p::id.eq(self.id)))
                .execute(conn)
                .await?;
            let log = self.scope.entry(
                "Delete attachment partition",
                "attachments.partition.deleted",
                Some(&before),
                None,
            );
            Ok(((), log))
        })
    }
}
