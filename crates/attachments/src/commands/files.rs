//! Attachment writes: record an upload within the tenant's quota, change
//! its metadata, delete it (its objects go after commit), move attachments
//! to another record.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use uuid::Uuid;

use super::{
    ATTACHMENT_KIND, CREATE_ATTACHMENT, CREATED_EVENT, DELETE_ATTACHMENT, DELETED_EVENT, Subject,
    TRANSFER_ATTACHMENTS, UPDATE_ATTACHMENT, UPDATED_EVENT, entry,
};
use crate::access::sees;
use crate::error::AttachmentsError;
use crate::model::Attachment;
use crate::schema::{attachment_partitions as p, attachments as a};

/// The entry of a change of an attachment (`before` → `after`), under the
/// record it is attached to, with its event (the deletion's names the
/// stored object for [`crate::cleanup`]).
fn attachment_entry(
    label: &'static str,
    event: &str,
    before: Option<&Attachment>,
    after: Option<&Attachment>,
) -> LogEntry {
    let Some(any) = after.or(before) else {
        return LogEntry::default();
    };
    let mut payload = json!({"id": any.id, "organizationId": any.organization_id,
                             "tenantId": any.tenant_id});
    if after.is_none() {
        payload["storageKey"] = json!(any.storage_key);
    }
    let subject = Subject {
        kind: ATTACHMENT_KIND,
        label,
        id: any.id,
        before,
        after,
        tenant_id: Some(any.tenant_id),
        organization_id: Some(any.organization_id),
    };
    LogEntry {
        parent_resource_kind: Some(any.entity_id.clone()),
        parent_resource_id: Some(any.record_id.clone()),
        ..entry(subject, event, payload)
    }
}

/// The attachment `id` locked for a write by `caller` (404 when absent or
/// out of its reach).
async fn locked(
    conn: &mut AsyncPgConnection,
    caller: &AuthContext,
    id: Uuid,
) -> Result<Attachment, AppError> {
    let found: Option<Attachment> = a::table
        .filter(a::id.eq(id))
        .filter(a::tenant_id.eq(caller.tenant()?))
        .select(Attachment::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?;
    match found {
        Some(row) if sees(caller, &row) => Ok(row),
        _ => Err(AttachmentsError::NotFound.into()),
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
            let log = attachment_entry("Upload attachment", CREATED_EVENT, None, Some(&created));
            Ok((created, log))
        })
    }
}

/// Deletes the row; the stored file and its variants go after commit
/// ([`crate::cleanup`] reacts to the event, at least once).
pub struct DeleteAttachment {
    pub id: Uuid,
    pub caller: AuthContext,
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
            let row = locked(conn, &self.caller, self.id).await?;
            diesel::delete(a::table.filter(a::id.eq(row.id)))
                .execute(conn)
                .await?;
            let log = attachment_entry("Delete attachment", DELETED_EVENT, Some(&row), None);
            Ok((row, log))
        })
    }
}

/// Replaces what the body names of an attachment's metadata; omitted parts stay.
pub struct UpdateAttachment {
    pub id: Uuid,
    pub caller: AuthContext,
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
            let before = locked(conn, &self.caller, self.id).await?;
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
            let log = attachment_entry(
                "Update attachment",
                UPDATED_EVENT,
                Some(&before),
                Some(&after),
            );
            Ok((after, log))
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
    pub caller: AuthContext,
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
            let tenant = self.caller.tenant()?;
            let rows: Vec<Attachment> = a::table
                .filter(a::id.eq_any(&self.ids))
                .filter(a::tenant_id.eq(tenant))
                .filter(a::entity_id.eq(&self.entity_id))
                .select(Attachment::as_select())
                .order(a::id)
                .for_update()
                .load(conn)
                .await?;
            let rows: Vec<Attachment> = rows
                .into_iter()
                .filter(|r| sees(&self.caller, r))
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
            let log = LogEntry {
                action_label: Some("Transfer attachments".into()),
                resource_kind: Some(ATTACHMENT_KIND.into()),
                parent_resource_kind: Some(self.entity_id.clone()),
                parent_resource_id: Some(self.to_record_id.clone()),
                context: Some(json!({"moved": moved, "to": self.to_record_id})),
                tenant_id: Some(tenant),
                ..Default::default()
            };
            Ok((rows.len(), log))
        })
    }
}
