//! Object storage for files (attachments, image variants), configured once.
//!
//! [`Storage`] wraps an [`object_store::ObjectStore`]: a local directory under
//! `STOA_DATA_DIR` by default, an S3-compatible bucket when `STOA_S3_BUCKET`
//! (and the other `STOA_S3_*` settings) is set, or memory in tests. Writes
//! stream through [`StorageWriter`] (a multipart upload: bounded buffering,
//! nothing visible under the key until [`StorageWriter::finish`], nothing left
//! behind by [`StorageWriter::abort`]). Keys are [`StorageKey`]s built from
//! segments, so input can never climb out of the store (`..` and `/` inside a
//! segment are encoded).
//!
//! S3 goes through the same rustls/ring TLS setup as [`crate::outbound`]; the
//! endpoint is the operator's, so the address guard does not apply.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::StatusCode;
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use object_store::aws::AmazonS3Builder;
use object_store::client::{ClientOptions, HttpClient, HttpConnector};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};

use crate::config::{ConfigError, Env, Secret};
use crate::error::ApiError;
use crate::outbound::{OutboundConfig, tls_config};

/// Where an object lives in the store: `/`-separated segments.
pub use object_store::path::Path as StorageKey;

/// Builds a key from segments, encoding anything a segment must not contain
/// (`/`, `..`, control characters), e.g. `key(["attachments", tenant, id])`.
pub fn key<I, S>(segments: I) -> StorageKey
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    segments
        .into_iter()
        .map(|s| object_store::path::PathPart::from(s.as_ref().to_string()))
        .collect()
}

/// Storage settings.
#[derive(Clone, Debug)]
pub enum StorageConfig {
    /// `STOA_DATA_DIR` (default `data`): files under `<dir>/files`.
    Local { dir: PathBuf },
    /// `STOA_S3_*`.
    S3(S3Config),
}

/// An S3-compatible bucket.
#[derive(Clone, Debug)]
pub struct S3Config {
    /// `STOA_S3_BUCKET`
    pub bucket: String,
    /// `STOA_S3_REGION` (default `us-east-1`)
    pub region: String,
    /// `STOA_S3_ENDPOINT`: the service's URL for S3-compatible servers
    /// (MinIO, Ceph, R2, ...); unset = AWS. `http://` endpoints are allowed.
    pub endpoint: Option<String>,
    /// `STOA_S3_ACCESS_KEY_ID`
    pub access_key_id: Option<String>,
    /// `STOA_S3_SECRET_ACCESS_KEY`
    pub secret_access_key: Option<Secret>,
    /// `STOA_S3_VIRTUAL_HOSTED` (default false = path-style, which
    /// S3-compatible servers expect).
    pub virtual_hosted: bool,
}

pub const DEFAULT_DATA_DIR: &str = "data";

impl StorageConfig {
    /// Reads `STOA_DATA_DIR` and `STOA_S3_*`: any `STOA_S3_*` variable
    /// selects S3 and then `STOA_S3_BUCKET` is required.
    pub fn from_env(env: &Env<'_>) -> Result<Self, ConfigError> {
        let s3_set = env
            .0
            .iter()
            .any(|(k, v)| k.starts_with("STOA_S3_") && !v.trim().is_empty());
        if !s3_set {
            return Ok(Self::Local {
                dir: PathBuf::from(env.get("STOA_DATA_DIR").unwrap_or(DEFAULT_DATA_DIR)),
            });
        }
        let endpoint = env.get("STOA_S3_ENDPOINT").map(|e| e.trim().to_string());
        if let Some(endpoint) = &endpoint
            && crate::http::origin_of(endpoint).is_none()
        {
            return Err(ConfigError {
                var: "STOA_S3_ENDPOINT",
                message: format!("`{endpoint}` must be an http:// or https:// URL"),
            });
        }
        let access_key_id = env.get("STOA_S3_ACCESS_KEY_ID").map(String::from);
        let secret_access_key = env.get("STOA_S3_SECRET_ACCESS_KEY").map(Secret::new);
        if access_key_id.is_some() != secret_access_key.is_some() {
            return Err(ConfigError {
                var: "STOA_S3_SECRET_ACCESS_KEY",
                message: "set both STOA_S3_ACCESS_KEY_ID and STOA_S3_SECRET_ACCESS_KEY, or neither"
                    .into(),
            });
        }
        Ok(Self::S3(S3Config {
            bucket: env.required("STOA_S3_BUCKET")?,
            region: env.get("STOA_S3_REGION").unwrap_or("us-east-1").to_string(),
            endpoint,
            access_key_id,
            secret_access_key,
            virtual_hosted: env.flag("STOA_S3_VIRTUAL_HOSTED", false)?,
        }))
    }
}

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("file not found")]
    NotFound,
    #[error("storage setup failed: {0}")]
    Setup(String),
    /// The store failed or could not be reached (after object_store's
    /// retries): 503, the store's own message goes to the log only.
    #[error("Storage unavailable")]
    Backend(#[source] object_store::Error),
}

impl From<object_store::Error> for StorageError {
    fn from(err: object_store::Error) -> Self {
        match err {
            object_store::Error::NotFound { .. } => Self::NotFound,
            other => Self::Backend(other),
        }
    }
}

impl ApiError for StorageError {
    fn status(&self) -> StatusCode {
        match self {
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Setup(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Backend(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// The object store modules keep files in (cheap to clone).
#[derive(Clone, Debug)]
pub struct Storage {
    store: Arc<dyn ObjectStore>,
    /// Bytes buffered before a part is written (S3 needs ≥ 5 MiB parts).
    chunk_size: usize,
    kind: &'static str,
}

impl Storage {
    /// The store `config` describes; `outbound` supplies the S3 client's timeouts.
    pub fn from_config(
        config: &StorageConfig,
        outbound: &OutboundConfig,
    ) -> Result<Self, StorageError> {
        match config {
            StorageConfig::Local { dir } => Self::local(dir.join("files")),
            StorageConfig::S3(s3) => Self::s3(s3, outbound),
        }
    }

    /// Files under `dir` (created when missing).
    pub fn local(dir: impl Into<PathBuf>) -> Result<Self, StorageError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)
            .map_err(|e| StorageError::Setup(format!("cannot create {}: {e}", dir.display())))?;
        let store = LocalFileSystem::new_with_prefix(&dir)?.with_automatic_cleanup(true);
        Ok(Self {
            store: Arc::new(store),
            chunk_size: 256 * 1024,
            kind: "local",
        })
    }

    /// A store in process memory (tests).
    pub fn memory() -> Self {
        Self {
            store: Arc::new(InMemory::new()),
            chunk_size: 256 * 1024,
            kind: "memory",
        }
    }

    /// An S3-compatible bucket.
    pub fn s3(config: &S3Config, outbound: &OutboundConfig) -> Result<Self, StorageError> {
        let mut builder = AmazonS3Builder::new()
            .with_bucket_name(&config.bucket)
            .with_region(&config.region)
            .with_virtual_hosted_style_request(config.virtual_hosted)
            .with_http_connector(TrustedConnector {
                connect_timeout: outbound.connect_timeout,
                read_timeout: outbound.idle_timeout,
            });
        if let Some(endpoint) = &config.endpoint {
            builder = builder
                .with_endpoint(endpoint)
                .with_allow_http(endpoint.starts_with("http://"));
        }
        if let (Some(id), Some(secret)) = (&config.access_key_id, &config.secret_access_key) {
            builder = builder
                .with_access_key_id(id)
                .with_secret_access_key(secret.expose());
        }
        Ok(Self {
            store: Arc::new(builder.build()?),
            chunk_size: 5 * 1024 * 1024,
            kind: "s3",
        })
    }

    /// `local`, `s3` or `memory`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The underlying store, for operations this wrapper does not cover.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// Stores a small object in one request.
    pub async fn put(&self, key: &StorageKey, bytes: Bytes) -> Result<(), StorageError> {
        self.store.put(key, PutPayload::from(bytes)).await?;
        Ok(())
    }

    /// Starts a streamed write to `key`.
    pub async fn writer(&self, key: &StorageKey) -> Result<StorageWriter, StorageError> {
        let upload = self.store.put_multipart(key).await?;
        Ok(StorageWriter {
            inner: WriteMultipart::new_with_chunk_size(upload, self.chunk_size),
            written: 0,
        })
    }

    /// Reads a whole object (use [`Storage::get_stream`] for large ones).
    pub async fn get(&self, key: &StorageKey) -> Result<Bytes, StorageError> {
        Ok(self.store.get(key).await?.bytes().await?)
    }

    /// An object's size and its content as a stream of chunks.
    pub async fn get_stream(
        &self,
        key: &StorageKey,
    ) -> Result<(u64, BoxStream<'static, Result<Bytes, StorageError>>), StorageError> {
        let result = self.store.get(key).await?;
        let size = result.meta.size;
        Ok((
            size,
            result.into_stream().map(|c| c.map_err(Into::into)).boxed(),
        ))
    }

    /// The object's size, or `None` when there is none under `key`.
    pub async fn size(&self, key: &StorageKey) -> Result<Option<u64>, StorageError> {
        match self.store.head(key).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// Deletes the object; deleting a missing one is not an error.
    pub async fn delete(&self, key: &StorageKey) -> Result<(), StorageError> {
        match self.store.delete(key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(err) => Err(err.into()),
        }
    }

    /// Every key under `prefix` (tests, maintenance).
    pub async fn list(&self, prefix: Option<&StorageKey>) -> Result<Vec<StorageKey>, StorageError> {
        let mut keys = Vec::new();
        let mut stream = self.store.list(prefix);
        while let Some(meta) = stream.next().await {
            keys.push(meta?.location);
        }
        Ok(keys)
    }
}

/// A streamed write; dropping it without [`finish`](Self::finish) leaves no
/// object (call [`abort`](Self::abort) to also clean up staged parts now).
pub struct StorageWriter {
    inner: WriteMultipart,
    written: u64,
}

impl StorageWriter {
    /// Appends a chunk, waiting while too many parts are in flight so memory
    /// stays bounded.
    pub async fn write(&mut self, chunk: Bytes) -> Result<(), StorageError> {
        self.written += chunk.len() as u64;
        self.inner.put(chunk);
        self.inner.wait_for_capacity(4).await?;
        Ok(())
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Makes the object visible under its key.
    pub async fn finish(self) -> Result<u64, StorageError> {
        self.inner.finish().await?;
        Ok(self.written)
    }

    /// Discards everything written.
    pub async fn abort(self) -> Result<(), StorageError> {
        self.inner.abort().await?;
        Ok(())
    }
}

/// Gives object_store a reqwest client with stoa's TLS setup (rustls + ring)
/// instead of its own, which would need a process-wide crypto provider.
#[derive(Debug)]
struct TrustedConnector {
    connect_timeout: Duration,
    read_timeout: Duration,
}

impl HttpConnector for TrustedConnector {
    fn connect(&self, _options: &ClientOptions) -> object_store::Result<HttpClient> {
        let setup = |e: String| object_store::Error::Generic {
            store: "S3",
            source: e.into(),
        };
        let tls = tls_config().map_err(|e| setup(e.to_string()))?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .no_proxy()
            .connect_timeout(self.connect_timeout)
            // Idle time between reads, not a total: large files take longer.
            .read_timeout(self.read_timeout)
            .build()
            .map_err(|e| setup(e.to_string()))?;
        Ok(HttpClient::new(client))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AppError;

    #[test]
    fn a_failing_store_is_503_without_its_details() {
        let err = StorageError::from(object_store::Error::Generic {
            store: "S3",
            source: "PUT http://s3.internal/bucket/key?uploadId=secret failed".into(),
        });
        assert_eq!(err.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body = AppError::from_api(err).body().to_string();
        assert!(body.contains("Storage unavailable"), "{body}");
        assert!(!body.contains("secret"), "{body}");
        assert_eq!(
            StorageError::NotFound.status(),
            StatusCode::NOT_FOUND,
            "a missing file stays 404"
        );
    }
}
