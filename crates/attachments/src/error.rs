//! Failures of attachment operations, with the reference's messages, mapped
//! to the API's JSON errors in one place.

use actix_web::http::StatusCode;
use stoa_core::{ApiError, AppError};

#[derive(Debug, thiserror::Error)]
pub enum AttachmentsError {
    #[error("Expected multipart/form-data")]
    NotMultipart,
    #[error("entityId, recordId and file are required")]
    UploadFieldsRequired,
    #[error("Select a specific organization before uploading an attachment.")]
    OrganizationRequired,
    #[error("{0} may only contain letters, digits, '_', ':', '.' and '-' (no '..')")]
    InvalidIdentifier(&'static str),
    #[error("The file is empty.")]
    EmptyFile,
    #[error("Executable file types are not allowed as attachments.")]
    Executable,
    #[error("Active content uploads are not allowed.")]
    ActiveContent,
    #[error("File content does not match its image type.")]
    NotAnImage,
    #[error("Storage partition is not configured.")]
    PartitionNotConfigured,
    #[error("Unknown storage partition.")]
    UnknownPartition,
    #[error("Public storage partitions cannot be selected explicitly for this upload.")]
    PublicPartitionSelected,
    #[error("Files of this entity type cannot go to a public storage partition.")]
    PublicPartitionUndeclared,
    #[error(
        "Record not found: {0} must name an existing record of entityId in your organizations."
    )]
    RecordNotFound(&'static str),
    #[error("Attachment exceeds the maximum upload size.")]
    TooLarge,
    #[error("Attachment storage quota exceeded for this tenant.")]
    QuotaExceeded,
    #[error("Invalid {0}")]
    InvalidField(&'static str),
    #[error("entityId and recordId are required")]
    ListIdsRequired,
    #[error("Attachment id is required")]
    IdRequired,
    #[error("Attachment not found")]
    NotFound,
    #[error("Attachments not found")]
    NoneFound,
    #[error("File not available")]
    FileUnavailable,
    #[error("Partition misconfigured")]
    PartitionMisconfigured,
    #[error("Unauthorized")]
    Unauthorized,
    #[error("Invalid size parameters")]
    InvalidSize,
    #[error("Unsupported media type")]
    UnsupportedMedia,
    #[error("Image exceeds pixel limit")]
    PixelLimit,
    #[error("Invalid image content")]
    InvalidImage,
    #[error("Failed to render image")]
    RenderFailed,
    #[error("Invalid payload")]
    InvalidPayload,
    #[error("Invalid query")]
    InvalidQuery,
    #[error("Attachment partitions are managed by the environment in demo/onboarding mode.")]
    PartitionsLocked,
    #[error("Partition code already exists.")]
    CodeExists,
    #[error("Partition code cannot be changed.")]
    CodeImmutable,
    #[error("Partition id is required")]
    PartitionIdRequired,
    #[error("Partition not found")]
    PartitionNotFound,
    #[error("Default partitions cannot be removed.")]
    DefaultPartition,
    #[error("Partition is in use and cannot be removed.")]
    PartitionInUse,
}

impl ApiError for AttachmentsError {
    fn status(&self) -> StatusCode {
        match self {
            Self::TooLarge | Self::QuotaExceeded => StatusCode::PAYLOAD_TOO_LARGE,
            Self::PublicPartitionSelected
            | Self::PublicPartitionUndeclared
            | Self::PartitionsLocked => StatusCode::FORBIDDEN,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::NotFound
            | Self::NoneFound
            | Self::FileUnavailable
            | Self::PartitionNotFound
            | Self::RecordNotFound(_) => StatusCode::NOT_FOUND,
            Self::CodeExists | Self::PartitionInUse => StatusCode::CONFLICT,
            Self::PartitionMisconfigured | Self::RenderFailed => StatusCode::INTERNAL_SERVER_ERROR,
            Self::NotMultipart
            | Self::UploadFieldsRequired
            | Self::OrganizationRequired
            | Self::InvalidIdentifier(_)
            | Self::EmptyFile
            | Self::Executable
            | Self::ActiveContent
            | Self::NotAnImage
            | Self::PartitionNotConfigured
            | Self::UnknownPartition
            | Self::InvalidField(_)
            | Self::ListIdsRequired
            | Self::IdRequired
            | Self::InvalidSize
            | Self::UnsupportedMedia
            | Self::PixelLimit
            | Self::InvalidImage
            | Self::InvalidPayload
            | Self::InvalidQuery
            | Self::CodeImmutable
            | Self::PartitionIdRequired
            | Self::DefaultPartition => StatusCode::BAD_REQUEST,
        }
    }
}

impl From<AttachmentsError> for AppError {
    fn from(err: AttachmentsError) -> Self {
        AppError::from_api(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_messages() {
        let cases = [
            (AttachmentsError::QuotaExceeded, 413),
            (AttachmentsError::TooLarge, 413),
            (AttachmentsError::PartitionsLocked, 403),
            (AttachmentsError::CodeExists, 409),
            (AttachmentsError::PartitionInUse, 409),
            (AttachmentsError::NotFound, 404),
            (AttachmentsError::PixelLimit, 400),
            (AttachmentsError::Unauthorized, 401),
            (AttachmentsError::PartitionMisconfigured, 500),
        ];
        for (err, status) in cases {
            let message = err.to_string();
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{message}");
            // 500s do not show their cause.
            if status != 500 {
                assert_eq!(app.body()["error"], message);
            }
        }
    }
}
