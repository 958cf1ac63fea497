//! Where an attachment's objects live and how they are read: every object of
//! an attachment is under `attachments/<tenant>/<id>/` (the original and its
//! image variants), keys built from ids only.

use std::ops::RangeInclusive;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt};
use object_store::{GetOptions, GetRange};
use sha2::{Digest, Sha256};
use stoa_core::storage::{Storage, StorageError, StorageKey, key};
use uuid::Uuid;

/// How many leading bytes content checks look at.
pub const HEAD_BYTES: usize = 8192;

/// The prefix holding every object of one attachment.
pub fn prefix(tenant: Uuid, id: Uuid) -> StorageKey {
    key([
        "attachments".to_string(),
        tenant.to_string(),
        id.to_string(),
    ])
}

/// The uploaded file.
pub fn original(tenant: Uuid, id: Uuid) -> StorageKey {
    key([
        "attachments".to_string(),
        tenant.to_string(),
        id.to_string(),
        "original".to_string(),
    ])
}

/// The prefix holding every resized variant of an attachment.
pub fn variants(tenant: Uuid, id: Uuid) -> StorageKey {
    key([
        "attachments".to_string(),
        tenant.to_string(),
        id.to_string(),
        "variants".to_string(),
    ])
}

/// A resized variant (`variant` is built from validated numbers only).
pub fn variant(tenant: Uuid, id: Uuid, variant: &str) -> StorageKey {
    key([
        "attachments".to_string(),
        tenant.to_string(),
        id.to_string(),
        "variants".to_string(),
        variant.to_string(),
    ])
}

/// What one pass over a stored file learns: its first bytes, its SHA-256 and
/// its length (read in chunks: memory stays bounded whatever the size).
pub struct Scanned {
    pub head: Vec<u8>,
    pub checksum: String,
    pub size: u64,
}

pub async fn scan(storage: &Storage, key: &StorageKey) -> Result<Scanned, StorageError> {
    let (_, mut stream) = storage.get_stream(key).await?;
    let mut hasher = Sha256::new();
    let mut head = Vec::with_capacity(HEAD_BYTES);
    let mut size = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if head.len() < HEAD_BYTES {
            let take = (HEAD_BYTES - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
        }
        size += chunk.len() as u64;
        hasher.update(&chunk);
    }
    Ok(Scanned {
        head,
        checksum: hex::encode(hasher.finalize()),
        size,
    })
}

/// Bytes `range` of the object, streamed (for `Download::ranged`).
pub fn range_stream(
    storage: Storage,
    key: StorageKey,
    range: RangeInclusive<u64>,
) -> BoxStream<'static, Result<Bytes, StorageError>> {
    futures_util::stream::once(async move {
        let options = GetOptions {
            range: Some(GetRange::Bounded(*range.start()..range.end() + 1)),
            ..Default::default()
        };
        let result = storage.store().get_opts(&key, options).await?;
        Ok::<_, StorageError>(result.into_stream().map_err(StorageError::from))
    })
    .try_flatten()
    .boxed()
}

/// Deletes every object of an attachment (original and variants); missing
/// ones are fine, so running it twice is harmless.
pub async fn remove_all(storage: &Storage, tenant: Uuid, id: Uuid) -> Result<(), StorageError> {
    let prefix = prefix(tenant, id);
    for key in storage.list(Some(&prefix)).await? {
        storage.delete(&key).await?;
    }
    storage.delete(&original(tenant, id)).await
}

/// Bytes `range` of the object, in memory (small ranges only).
pub async fn read_range(
    storage: &Storage,
    key: &StorageKey,
    range: RangeInclusive<u64>,
) -> Result<Bytes, StorageError> {
    let options = GetOptions {
        range: Some(GetRange::Bounded(*range.start()..range.end() + 1)),
        ..Default::default()
    };
    Ok(storage
        .store()
        .get_opts(key, options)
        .await?
        .bytes()
        .await?)
}
