//! Multipart uploads streamed into [`Storage`](crate::storage::Storage).
//!
//! A route takes actix-multipart's [`Multipart`] extractor and calls
//! [`receive`] with its own [`UploadPolicy`]. Each file part is written to the
//! store chunk by chunk as it arrives (never held whole in memory); a file
//! passing `max_file_bytes` stops the upload with 413 and leaves no file:
//! the object being written is aborted and files already stored by this
//! request are deleted. A declared `Content-Length` beyond what the policy
//! could accept is refused with 413 before anything is read. Text parts are
//! collected (each bounded by `max_field_bytes`).

use actix_multipart::{Field, Multipart, MultipartError};
use actix_web::HttpRequest;
use actix_web::http::StatusCode;
use actix_web::http::header::CONTENT_LENGTH;
use futures_util::StreamExt;

use crate::error::AppError;
use crate::storage::{Storage, StorageKey};

pub use actix_multipart;

/// Limits of one upload route.
#[derive(Clone, Copy, Debug)]
pub struct UploadPolicy {
    /// Largest file part, in bytes; past it the request answers 413.
    pub max_file_bytes: u64,
    /// Most file parts in one request (400 past it).
    pub max_files: usize,
    /// Largest text part, in bytes (413 past it).
    pub max_field_bytes: usize,
    /// Most text parts (400 past it).
    pub max_fields: usize,
}

impl UploadPolicy {
    /// One file of at most `max_file_bytes`, a few small text fields.
    pub const fn single(max_file_bytes: u64) -> Self {
        Self {
            max_file_bytes,
            max_files: 1,
            max_field_bytes: 16 * 1024,
            max_fields: 16,
        }
    }

    /// The largest request body this policy can accept (parts' headers and
    /// boundaries included, with generous room).
    pub fn max_request_bytes(&self) -> u64 {
        let files = self.max_file_bytes.saturating_mul(self.max_files as u64);
        let fields = (self.max_field_bytes as u64).saturating_mul(self.max_fields as u64);
        let parts = (self.max_files + self.max_fields) as u64;
        files
            .saturating_add(fields)
            .saturating_add(parts.saturating_mul(1024))
            .saturating_add(1024)
    }
}

/// What a file part looked like before it was stored.
#[derive(Clone, Debug)]
pub struct FileMeta {
    /// The form field's name.
    pub field: String,
    /// The client's file name (untrusted: display only).
    pub file_name: Option<String>,
    /// The part's declared content type (untrusted).
    pub content_type: Option<String>,
}

/// A file part written to storage.
#[derive(Clone, Debug)]
pub struct StoredFile {
    pub meta: FileMeta,
    pub key: StorageKey,
    pub size: u64,
}

/// A received upload: stored files and text fields, in arrival order.
#[derive(Clone, Debug, Default)]
pub struct Upload {
    pub files: Vec<StoredFile>,
    pub fields: Vec<(String, String)>,
}

impl Upload {
    /// The first text field named `name`.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Deletes the stored files (when the request fails after the upload,
    /// e.g. its metadata row cannot be written).
    pub async fn discard(&self, storage: &Storage) {
        for file in &self.files {
            if let Err(err) = storage.delete(&file.key).await {
                tracing::warn!(storage.key = %file.key, error = %err, "could not delete an uploaded file");
            }
        }
    }
}

/// Reads the multipart body, streaming each file part to the key `key_for`
/// picks for it (the caller decides: tenant, record id, a fresh uuid; never
/// the client's file name).
pub async fn receive(
    req: &HttpRequest,
    mut payload: Multipart,
    storage: &Storage,
    policy: &UploadPolicy,
    mut key_for: impl FnMut(&FileMeta) -> StorageKey,
) -> Result<Upload, AppError> {
    let limit = policy.max_request_bytes();
    if let Some(declared) = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        && declared > limit
    {
        return Err(too_large(policy.max_file_bytes));
    }
    let mut upload = Upload::default();
    let result = receive_parts(&mut payload, storage, policy, &mut key_for, &mut upload).await;
    match result {
        Ok(()) => Ok(upload),
        Err(err) => {
            upload.discard(storage).await;
            Err(err)
        }
    }
}

async fn receive_parts(
    payload: &mut Multipart,
    storage: &Storage,
    policy: &UploadPolicy,
    key_for: &mut impl FnMut(&FileMeta) -> StorageKey,
    upload: &mut Upload,
) -> Result<(), AppError> {
    while let Some(field) = payload.next().await {
        let mut field = field.map_err(multipart_error)?;
        let name = field.name().unwrap_or_default().to_string();
        let file_name = field
            .content_disposition()
            .and_then(|cd| cd.get_filename())
            .map(String::from);
        if let Some(file_name) = file_name {
            if upload.files.len() >= policy.max_files {
                return Err(AppError::bad_request(format!(
                    "Too many files: at most {} per request",
                    policy.max_files
                )));
            }
            let meta = FileMeta {
                field: name,
                file_name: Some(file_name),
                content_type: field.content_type().map(ToString::to_string),
            };
            let key = key_for(&meta);
            let size = store_file(&mut field, storage, &key, policy.max_file_bytes).await?;
            upload.files.push(StoredFile { meta, key, size });
        } else {
            if upload.fields.len() >= policy.max_fields {
                return Err(AppError::bad_request(format!(
                    "Too many form fields: at most {}",
                    policy.max_fields
                )));
            }
            let value = read_text(&mut field, &name, policy.max_field_bytes).await?;
            upload.fields.push((name, value));
        }
    }
    Ok(())
}

/// Streams one part into the store; aborts the write on any failure.
async fn store_file(
    field: &mut Field,
    storage: &Storage,
    key: &StorageKey,
    max: u64,
) -> Result<u64, AppError> {
    let mut writer = storage.writer(key).await.map_err(AppError::from_api)?;
    let outcome: Result<(), AppError> = async {
        while let Some(chunk) = field.next().await {
            let chunk = chunk.map_err(multipart_error)?;
            if writer.written() + chunk.len() as u64 > max {
                return Err(too_large(max));
            }
            writer.write(chunk).await.map_err(AppError::from_api)?;
        }
        Ok(())
    }
    .await;
    match outcome {
        Ok(()) => writer.finish().await.map_err(AppError::from_api),
        Err(err) => {
            if let Err(abort) = writer.abort().await {
                tracing::warn!(storage.key = %key, error = %abort, "could not abort an upload");
            }
            Err(err)
        }
    }
}

async fn read_text(field: &mut Field, name: &str, max: usize) -> Result<String, AppError> {
    let mut buf = Vec::new();
    while let Some(chunk) = field.next().await {
        let chunk = chunk.map_err(multipart_error)?;
        if buf.len() + chunk.len() > max {
            return Err(AppError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("Form field `{name}` is larger than {max} bytes"),
            ));
        }
        buf.extend_from_slice(&chunk);
    }
    let text = String::from_utf8(buf)
        .map_err(|_| AppError::bad_request(format!("Form field `{name}` is not UTF-8 text")))?;
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(AppError::bad_request(format!(
            "Form field `{name}` must not contain control characters"
        )));
    }
    Ok(text)
}

fn too_large(max: u64) -> AppError {
    AppError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("File is larger than the limit of {max} bytes"),
    )
    .with_code("upload_too_large")
    .with_field("maxBytes", max)
}

fn multipart_error(err: MultipartError) -> AppError {
    match err {
        MultipartError::ContentTypeMissing
        | MultipartError::ContentTypeParse
        | MultipartError::ContentTypeIncompatible => AppError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Expected a multipart/form-data body",
        ),
        other => AppError::bad_request(format!("Invalid multipart body: {other}")),
    }
}
