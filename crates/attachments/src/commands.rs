//! Every write of the module as a command: the change, its action-log entry
//! and its events commit together. None is undoable: the reference has no
//! undo for attachments, and undoing a deletion could not bring back the
//! removed file (see README.md).

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, Event, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::AttachmentsError;
use crate::model::{Attachment, DEFAULT_CODES, Partition};
use crate::schema::{attachment_partitions as p, attachments as a};

pub const PARTITION_KIND: &str = "attachments.partition";
pub const ATTACHMENT_KIND: &str = "attachments.attachment";
pub const CREATE_PARTITION: &str = "attachments.partitions.create";
pub const UPDATE_PARTITION: &str = "attachments.partitions.update";
pub const DELETE_PARTITION: &str = "attachments.partitions.delete";
pub const CREATE_ATTACHMENT: &str = "attachments.attachments.create";
pub const DELETE_ATTACHMENT: &str = "attachments.attachments.delete";
/// Emitted after a deletion; [`crate::cleanup`] removes the stored objects.
pub const DELETED_EVENT: &str = "attachments.attachment.deleted";
pub const CREATED_EVENT: &str = "attachments.attachment.created";

fn snapshot<T: serde::Serialize>(value: &T) -> Option<Value> {
    serde_json::to_value(value).ok()
}

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
            let entry = LogEntry {
                action_label: Some("Create attachment partition".into()),
                resource_kind: Some(PARTITION_KIND.into()),
                resource_id: Some(created.id.to_string()),
                snapshot_after: snapshot(&created),
                tenant_id: Some(self.tenant_id),
                organization_id: self.organization_id,
                events: vec![Event::new(
                    "attachments.partition.created",
                    json!({"id": created.id, "code": created.code}),
                )],
                ..Default::default()
            };
            Ok((created, entry))
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
            let i = self.input;
            if i.code != before.code {
                return Err(AttachmentsError::CodeImmutable.into());
            }
            let after: Partition = diesel::update(p::table.filter(p::id.eq(self.id)))
                .set((
                    p::title.eq(&i.title),
                    p::description.eq(&i.description),
                    p::is_public.eq(i.is_public),
                    p::requires_ocr.eq(if self.has_requires_ocr {
                        i.requires_ocr
                    } else {
                        before.requires_ocr
                    }),
                    p::ocr_model.eq(if self.has_ocr_model {
                        i.ocr_model.clone()
                    } else {
                        before.ocr_model.clone()
                    }),
                    p::config_json.eq(if self.has_config_json {
                        i.config_json.clone()
                    } else {
                        before.config_json.clone()
                    }),
                    p::storage_driver.eq(if self.has_storage_driver {
                        i.storage_driver.clone()
                    } else {
                        before.storage_driver.clone()
                    }),
                    p::updated_at.eq(OffsetDateTime::now_utc()),
                ))
                .returning(Partition::as_returning())
                .get_result(conn)
                .await?;
            let entry = LogEntry {
                action_label: Some("Update attachment partition".into()),
                resource_kind: Some(PARTITION_KIND.into()),
                resource_id: Some(after.id.to_string()),
                snapshot_before: snapshot(&before),
                snapshot_after: snapshot(&after),
                tenant_id: Some(self.scope.tenant_id),
                events: vec![Event::new(
                    "attachments.partition.updated",
                    json!({"id": after.id, "code": after.code}),
                )],
                ..Default::default()
            };
            Ok((after, entry))
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
            let entry = LogEntry {
                action_label: Some("Delete attachment partition".into()),
                resource_kind: Some(PARTITION_KIND.into()),
                resource_id: Some(before.id.to_string()),
                snapshot_before: snapshot(&before),
                tenant_id: Some(self.scope.tenant_id),
                events: vec![Event::new(
                    "attachments.partition.deleted",
                    json!({"id": before.id, "code": before.code}),
                )],
                ..Default::default()
            };
            Ok(((), entry))
        })
    }
}

/// An attachment whose file is already in storage.
#[derive(Clone, Debug)]
pub struct NewAttachment {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub entity_id: String,
    pub record_id: String,
    pub partition_code: String,
    pub file_name: String,
    pub mime_type: String,
    pub file_size: i64,
    pub checksum: String,
    pub storage_driver: String,
    pub storage_key: String,
    pub tags: Vec<String>,
    pub assignments: Value,
    pub custom_fields: Option<Value>,
    pub content: Option<String>,
}

/// Records an uploaded file, within the tenant's quota.
pub struct CreateAttachment {
    pub row: NewAttachment,
    pub quota_bytes: u64,
}

#[derive(QueryableByName)]
struct Used {
    #[diesel(sql_type = BigInt)]
    used: i64,
}

impl Command for CreateAttachment {
    type Output = Attachment;

    fn id(&self) -> &'static str {
        CREATE_ATTACHMENT
    }

    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _actor: &'a Actor,
    ) -> BoxFuture<'a, Result<(Attachment, LogEntry), AppError>> {
        Box::pin(async move {
            let row = self.row;
            // The partition must still exist, and stays until this commits
            // (its deletion takes the row FOR UPDATE).
            let partition: Option<Uuid> = p::table
                .filter(p::code.eq(&row.partition_code))
                .select(p::id)
                .for_share()
                .first(conn)
                .await
                .optional()?;
            if partition.is_none() {
                return Err(AttachmentsError::PartitionNotConfigured.into());
            }
            // One upload of a tenant at a time past this point: the sum read
            // here cannot be outdated by a concurrent upload before commit.
            diesel::sql_query(
                "SELECT pg_advisory_xact_lock(hashtextextended('attachments.quota:' || $1, 0))",
            )
            .bind::<Text, _>(row.tenant_id.to_string())
            .execute(conn)
            .await?;
            let used: Used = diesel::sql_query(
                "SELECT COALESCE(sum(file_size), 0)::bigint AS used FROM attachments WHERE tenant_id = $1::uuid",
            )
            .bind::<Text, _>(row.tenant_id.to_string())
            .get_result(conn)
            .await?;
            let total = u64::try_from(used.used.max(0))
                .unwrap_or(0)
                .saturating_add(u64::try_from(row.file_size).unwrap_or(u64::MAX));
            if total > self.quota_bytes {
                return Err(AttachmentsError::QuotaExceeded.into());
            }
            let created: Attachment = diesel::insert_into(a::table)
                .values((
                    a::id.eq(row.id),
                    a::tenant_id.eq(row.tenant_id),
                    a::organization_id.eq(row.organization_id),
                    a::entity_id.eq(&row.entity_id),
                    a::record_id.eq(&row.record_id),
                    a::partition_code.eq(&row.partition_code),
                    a::file_name.eq(&row.file_name),
                    a::mime_type.eq(&row.mime_type),
                    a::file_size.eq(row.file_size),
                    a::checksum.eq(&row.checksum),
                    a::storage_driver.eq(&row.storage_driver),
                    a::storage_key.eq(&row.storage_key),
                    a::tags.eq(&row.tags),
                    a::assignments.eq(&row.assignments),
                    a::custom_fields.eq(&row.custom_fields),
                    a::content.eq(&row.content),
                ))
                .returning(Attachment::as_returning())
                .get_result(conn)
                .await?;
            let entry = LogEntry {
                action_label: Some("Upload attachment".into()),
                resource_kind: Some(ATTACHMENT_KIND.into()),
                resource_id: Some(created.id.to_string()),
                parent_resource_kind: Some(created.entity_id.clone()),
                parent_resource_id: Some(created.record_id.clone()),
                snapshot_after: snapshot(&created),
                tenant_id: Some(created.tenant_id),
                organization_id: Some(created.organization_id),
                events: vec![Event::new(
                    CREATED_EVENT,
                    json!({"id": created.id, "organizationId": created.organization_id,
                           "tenantId": created.tenant_id}),
                )],
                ..Default::default()
            };
            Ok((created, entry))
        })
    }
}

/// Where a caller may delete: its tenant, and within it the organizations
/// it sees (`None`: all of them).
#[derive(Clone, Debug)]
pub struct AttachmentScope {
    pub tenant_id: Uuid,
    pub organizations: Option<Vec<Uuid>>,
}

impl AttachmentScope {
    pub fn covers(&self, row: &Attachment) -> bool {
        row.tenant_id == self.tenant_id
            && self
                .organizations
                .as_ref()
                .is_none_or(|orgs| orgs.contains(&row.organization_id))
    }
}

/// Deletes the row; the stored file and its variants go after commit
/// ([`crate::cleanup`] reacts to the event, at least once).
pub struct DeleteAttachment {
    pub id: Uuid,
    pub scope: AttachmentScope,
}

impl Command for DeleteAttachment {
    type Output = Attachment;

    fn id(&self) -> &'static str {
        DELETE_ATTACHMENT
    }

    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _actor: &'a Actor,
    ) -> BoxFuture<'a, Result<(Attachment, LogEntry), AppError>> {
        Box::pin(async move {
            let found: Option<Attachment> = a::table
                .filter(a::id.eq(self.id))
                .filter(a::tenant_id.eq(self.scope.tenant_id))
                .select(Attachment::as_select())
                .for_update()
                .first(conn)
                .await
                .optional()?;
            let row = match found {
                Some(row) if self.scope.covers(&row) => row,
                _ => return Err(AttachmentsError::NotFound.into()),
            };
            diesel::delete(a::table.filter(a::id.eq(row.id)))
                .execute(conn)
                .await?;
            let entry = LogEntry {
                action_label: Some("Delete attachment".into()),
                resource_kind: Some(ATTACHMENT_KIND.into()),
                resource_id: Some(row.id.to_string()),
                parent_resource_kind: Some(row.entity_id.clone()),
                parent_resource_id: Some(row.record_id.clone()),
                snapshot_before: snapshot(&row),
                tenant_id: Some(row.tenant_id),
                organization_id: Some(row.organization_id),
                events: vec![Event::new(
                    DELETED_EVENT,
                    json!({"id": row.id, "organizationId": row.organization_id,
                           "tenantId": row.tenant_id, "storageKey": row.storage_key}),
                )],
                ..Default::default()
            };
            Ok((row, entry))
        })
    }
}

pub const UPDATE_ATTACHMENT: &str = "attachments.attachments.update";
pub const TRANSFER_ATTACHMENTS: &str = "attachments.attachments.transfer";

/// Replaces what the body names of an attachment's metadata; omitted parts stay.
pub struct UpdateAttachment {
    pub id: Uuid,
    pub scope: AttachmentScope,
    pub tags: Option<Vec<String>>,
    pub assignments: Option<Value>,
    /// `Some(None)` clears the custom fields.
    pub custom_fields: Option<Option<Value>>,
}

impl Command for UpdateAttachment {
    type Output = Attachment;

    fn id(&self) -> &'static str {
        UPDATE_ATTACHMENT
    }

    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _actor: &'a Actor,
    ) -> BoxFuture<'a, Result<(Attachment, LogEntry), AppError>> {
        Box::pin(async move {
            let found: Option<Attachment> = a::table
                .filter(a::id.eq(self.id))
                .filter(a::tenant_id.eq(self.scope.tenant_id))
                .select(Attachment::as_select())
                .for_update()
                .first(conn)
                .await
                .optional()?;
            let before = match found {
                Some(row) if self.scope.covers(&row) => row,
                _ => return Err(AttachmentsError::NotFound.into()),
            };
            let after: Attachment = diesel::update(a::table.filter(a::id.eq(before.id)))
                .set((
                    a::tags.eq(self.tags.unwrap_or_else(|| before.tags.clone())),
                    a::assignments.eq(self
                        .assignments
                        .unwrap_or_else(|| before.assignments.clone())),
                    a::custom_fields.eq(self
                        .custom_fields
                        .unwrap_or_else(|| before.custom_fields.clone())),
                ))
                .returning(Attachment::as_returning())
                .get_result(conn)
                .await?;
            let entry = LogEntry {
                action_label: Some("Update attachment".into()),
                resource_kind: Some(ATTACHMENT_KIND.into()),
                resource_id: Some(after.id.to_string()),
                snapshot_before: snapshot(&before),
                snapshot_after: snapshot(&after),
                tenant_id: Some(after.tenant_id),
                organization_id: Some(after.organization_id),
                events: vec![Event::new(
                    "attachments.attachment.updated",
                    json!({"id": after.id, "organizationId": after.organization_id,
                           "tenantId": after.tenant_id}),
                )],
                ..Default::default()
            };
            Ok((after, entry))
        })
    }
}

/// Moves attachments of one entity to another record; assignments that
/// pointed at the old record follow.
pub struct TransferAttachments {
    pub ids: Vec<Uuid>,
    pub entity_id: String,
    pub from_record_id: Option<String>,
    pub to_record_id: String,
    /// The target record's organization when its entity's owner answered
    /// for it: the moved attachments go there.
    pub to_organization: Option<Uuid>,
    pub scope: AttachmentScope,
}

impl Command for TransferAttachments {
    type Output = usize;

    fn id(&self) -> &'static str {
        TRANSFER_ATTACHMENTS
    }

    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _actor: &'a Actor,
    ) -> BoxFuture<'a, Result<(usize, LogEntry), AppError>> {
        Box::pin(async move {
            let rows: Vec<Attachment> = a::table
                .filter(a::id.eq_any(&self.ids))
                .filter(a::tenant_id.eq(self.scope.tenant_id))
                .filter(a::entity_id.eq(&self.entity_id))
                .select(Attachment::as_select())
                .order(a::id)
                .for_update()
                .load(conn)
                .await?;
            let rows: Vec<Attachment> = rows
                .into_iter()
                .filter(|r| self.scope.covers(r))
                .filter(|r| {
                    self.from_record_id
                        .as_ref()
                        .is_none_or(|f| *f == r.record_id)
                })
                .collect();
            if rows.is_empty() {
                return Err(AttachmentsError::NoneFound.into());
            }
            let mut moved = Vec::new();
            for row in &rows {
                let old = self
                    .from_record_id
                    .clone()
                    .unwrap_or_else(|| row.record_id.clone());
                let mut assignments = row.assignment_list();
                for item in &mut assignments {
                    if item.kind == self.entity_id && item.id == old {
                        item.id = self.to_record_id.clone();
                    }
                }
                // Re-pointing may produce duplicates: the last one wins.
                let assignments = crate::upload::normalize_assignments(assignments)
                    .map_err(AppError::from_api)?;
                diesel::update(a::table.filter(a::id.eq(row.id)))
                    .set((
                        a::organization_id.eq(self.to_organization.unwrap_or(row.organization_id)),
                        a::record_id.eq(&self.to_record_id),
                        a::assignments
                            .eq(serde_json::to_value(&assignments)
                                .unwrap_or(Value::Array(Vec::new()))),
                    ))
                    .execute(conn)
                    .await?;
                moved.push(json!({"id": row.id, "from": row.record_id}));
            }
            let entry = LogEntry {
                action_label: Some("Transfer attachments".into()),
                resource_kind: Some(ATTACHMENT_KIND.into()),
                parent_resource_kind: Some(self.entity_id.clone()),
                parent_resource_id: Some(self.to_record_id.clone()),
                context: Some(json!({"moved": moved, "to": self.to_record_id})),
                tenant_id: Some(self.scope.tenant_id),
                ..Default::default()
            };
            Ok((rows.len(), entry))
        })
    }
}
