//! Every write of the module as a command: the change, its action-log entry
//! and its events commit together. None is undoable: the reference has no
//! undo for attachments, and undoing a deletion could not bring back the
//! removed file (see README.md). That is also why they do not go through
//! the resource kit (`stoa_acl::resource`), whose entries are undoable
//! states; the organization rule is still the one of
//! `AuthContext::reach`.
//!
//! - [`partitions`]: create, update, delete a partition;
//! - [`files`]: record an upload, change its metadata, delete it, move
//!   attachments to another record.

mod files;
mod partitions;

use serde_json::{Value, json};
use stoa_core::command::{Event, LogEntry};
use uuid::Uuid;

pub use files::{
    CreateAttachment, DeleteAttachment, NewAttachment, TransferAttachments, UpdateAttachment,
};
pub use partitions::{
    CreatePartition, DeletePartition, PartitionInput, PartitionScope, UpdatePartition,
};

pub const PARTITION_KIND: &str = "attachments.partition";
pub const ATTACHMENT_KIND: &str = "attachments.attachment";
pub const CREATE_PARTITION: &str = "attachments.partitions.create";
pub const UPDATE_PARTITION: &str = "attachments.partitions.update";
pub const DELETE_PARTITION: &str = "attachments.partitions.delete";
pub const CREATE_ATTACHMENT: &str = "attachments.attachments.create";
pub const UPDATE_ATTACHMENT: &str = "attachments.attachments.update";
pub const DELETE_ATTACHMENT: &str = "attachments.attachments.delete";
pub const TRANSFER_ATTACHMENTS: &str = "attachments.attachments.transfer";
/// Emitted after a deletion; [`crate::cleanup`] removes the stored objects.
pub const DELETED_EVENT: &str = "attachments.attachment.deleted";
pub const CREATED_EVENT: &str = "attachments.attachment.created";
pub const UPDATED_EVENT: &str = "attachments.attachment.updated";

fn snapshot<T: serde::Serialize>(value: &T) -> Option<Value> {
    serde_json::to_value(value).ok()
}

/// What an entry says of the record it is about.
struct Subject<'a, T> {
    kind: &'static str,
    label: &'static str,
    id: Uuid,
    before: Option<&'a T>,
    after: Option<&'a T>,
    tenant_id: Option<Uuid>,
    organization_id: Option<Uuid>,
}

/// The entry of one change (`before` → `after`) with its one event.
fn entry<T: serde::Serialize>(subject: Subject<'_, T>, event: &str, payload: Value) -> LogEntry {
    LogEntry {
        action_label: Some(subject.label.into()),
        resource_kind: Some(subject.kind.into()),
        resource_id: Some(subject.id.to_string()),
        snapshot_before: subject.before.and_then(snapshot),
        snapshot_after: subject.after.and_then(snapshot),
        tenant_id: subject.tenant_id,
        organization_id: subject.organization_id,
        events: vec![Event::new(event, payload)],
        ..Default::default()
    }
}

/// The payload of a partition's events.
fn partition_payload(id: Uuid, code: &str) -> Value {
    json!({"id": id, "code": code})
}
