//! The writes of the library and transfer routes, each in one transaction
//! (the routes only parse and answer).

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::Value;
use stoa_acl::{AuthContext, RecordTarget};
use stoa_core::AppError;
use stoa_core::command::{Command, Operation, execute};
use stoa_core::db::Db;
use uuid::Uuid;

use crate::access::sees;
use crate::commands::{DeleteAttachment, TransferAttachments, UpdateAttachment};
use crate::error::AttachmentsError;
use crate::model::Attachment;
use crate::schema::{attachment_partitions as p, attachments as a};
use crate::upload::writable_record;

/// Runs `command` as `ctx` in a transaction of its own (`execute` opens one
/// on a connection outside any).
pub(crate) async fn run<C: Command>(
    db: &Db,
    ctx: &AuthContext,
    command: C,
) -> Result<(C::Output, Operation), AppError> {
    let mut conn = db.conn().await?;
    execute(&mut conn, &ctx.actor(), command).await
}

/// Attachment `id` as the library shows it, with its partition's title
/// (404 outside the caller's reach).
pub async fn detail(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<(Attachment, Option<String>), AppError> {
    let mut conn = db.conn().await?;
    let row: Option<Attachment> = a::table
        .filter(a::id.eq(id))
        .filter(a::tenant_id.eq(ctx.tenant()?))
        .select(Attachment::as_select())
        .first(&mut conn)
        .await
        .optional()?;
    let row = row
        .filter(|r| sees(ctx, r))
        .ok_or(AttachmentsError::NotFound)?;
    let title: Option<String> = p::table
        .filter(p::code.eq(&row.partition_code))
        .select(p::title)
        .first(&mut conn)
        .await
        .optional()?;
    Ok((row, title))
}

/// What a metadata change names (omitted parts stay as they are).
pub struct MetadataChange {
    pub tags: Option<Vec<String>>,
    pub assignments: Option<Value>,
    /// `Some(None)` clears the custom fields.
    pub custom_fields: Option<Option<Value>>,
}

/// Changes the metadata of attachment `id` (404 outside the caller's reach).
pub async fn update(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
    change: MetadataChange,
) -> Result<(Attachment, Operation), AppError> {
    let command = UpdateAttachment {
        id,
        caller: ctx.clone(),
        tags: change.tags,
        assignments: change.assignments,
        custom_fields: change.custom_fields,
    };
    run(db, ctx, command).await
}

/// Deletes attachment `id`; its objects leave storage after commit.
pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    let command = DeleteAttachment {
        id,
        caller: ctx.clone(),
    };
    Ok(run(db, ctx, command).await?.1)
}

/// Which attachments move where.
pub struct Transfer {
    pub ids: Vec<Uuid>,
    pub entity_id: String,
    pub from_record_id: Option<String>,
    pub to_record_id: String,
}

/// Moves attachments to another record of their entity. The target record
/// is asked of its owner (`target`) in the write's transaction: 404 / 403
/// before anything moves; its organization becomes the attachments'.
pub async fn transfer(
    db: &Db,
    ctx: &AuthContext,
    target: Option<RecordTarget>,
    transfer: Transfer,
) -> Result<(usize, Operation), AppError> {
    let actor = ctx.actor();
    let caller = ctx.clone();
    db.transaction::<_, AppError, _>(|conn| {
        Box::pin(async move {
            let to_organization = writable_record(
                conn,
                target.as_ref(),
                &caller,
                "toRecordId",
                &transfer.to_record_id,
            )
            .await?;
            let command = TransferAttachments {
                ids: transfer.ids,
                entity_id: transfer.entity_id,
                from_record_id: transfer.from_record_id,
                to_record_id: transfer.to_record_id,
                to_organization,
                caller,
            };
            execute(conn, &actor, command).await
        })
    })
    .await
}
