//! One handler per file: extract, check, call the service, answer.

pub mod delete;
pub mod file;
pub mod image;
pub mod library;
pub mod partitions;
pub mod record_list;
pub mod transfer;
pub mod upload;

/// The tag of every attachments endpoint in the OpenAPI document.
pub const TAG: &str = "Attachments";

/// A uuid from a path or query value; anything else (traversal, NUL,
/// encoded separators) is refused with `err`.
pub fn parse_id(
    raw: Option<&str>,
    err: crate::error::AttachmentsError,
) -> Result<uuid::Uuid, crate::error::AttachmentsError> {
    raw.map(str::trim)
        .filter(|s| s.len() == 36)
        .and_then(|s| s.parse().ok())
        .ok_or(err)
}
