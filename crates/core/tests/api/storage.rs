//! Object storage: files round-trip through the local directory store, the
//! in-memory store and (when the test harness started an S3-compatible
//! server) S3; streamed writes are invisible until finished and leave nothing
//! when aborted; keys cannot climb out of the store.

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use stoa_core::outbound::{Outbound, OutboundConfig};
use stoa_core::storage::{S3Config, Storage, StorageConfig, StorageKey, key};

/// A directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("stoa-storage-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// Every regular file below the directory.
    pub fn files(&self) -> Vec<PathBuf> {
        fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else {
                    out.push(path);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.0, &mut out);
        out
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes, streams, reads, sizes, lists and deletes through `storage`.
async fn round_trip(storage: &Storage, prefix: &str) {
    let small = key([prefix, "tenant-a", "note.txt"]);
    storage
        .put(&small, Bytes::from_static(b"hello"))
        .await
        .unwrap();
    assert_eq!(
        storage.get(&small).await.unwrap(),
        Bytes::from_static(b"hello")
    );

    // A streamed write in chunks larger and smaller than the part size.
    let big = key([prefix, "tenant-a", "big.bin"]);
    let mut expected = Vec::new();
    let mut writer = storage.writer(&big).await.unwrap();
    for i in 0..40u8 {
        let chunk = vec![i; 150 * 1024 + usize::from(i)];
        expected.extend_from_slice(&chunk);
        writer.write(Bytes::from(chunk)).await.unwrap();
    }
    assert_eq!(
        storage.size(&big).await.unwrap(),
        None,
        "invisible before finish"
    );
    assert_eq!(writer.finish().await.unwrap(), expected.len() as u64);
    assert_eq!(
        storage.size(&big).await.unwrap(),
        Some(expected.len() as u64)
    );
    let (size, mut stream) = storage.get_stream(&big).await.unwrap();
    assert_eq!(size, expected.len() as u64);
    let mut read = Vec::new();
    while let Some(chunk) = stream.next().await {
        read.extend_from_slice(&chunk.unwrap());
    }
    assert!(read == expected, "streamed content differs");

    // An aborted write leaves nothing.
    let aborted = key([prefix, "tenant-a", "aborted.bin"]);
    let mut writer = storage.writer(&aborted).await.unwrap();
    writer
        .write(Bytes::from(vec![1u8; 300 * 1024]))
        .await
        .unwrap();
    writer.abort().await.unwrap();
    assert_eq!(storage.size(&aborted).await.unwrap(), None);

    let listed = storage.list(Some(&key([prefix]))).await.unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");

    storage.delete(&small).await.unwrap();
    storage.delete(&big).await.unwrap();
    storage.delete(&big).await.unwrap(); // deleting twice is fine
    assert!(matches!(
        storage.get(&small).await,
        Err(stoa_core::storage::StorageError::NotFound)
    ));
    assert!(storage.list(Some(&key([prefix]))).await.unwrap().is_empty());
}

#[actix_web::test]
async fn files_round_trip_through_the_local_store() {
    let dir = TempDir::new();
    let storage = Storage::from_config(
        &StorageConfig::Local { dir: dir.0.clone() },
        &OutboundConfig::default(),
    )
    .unwrap();
    assert_eq!(storage.kind(), "local");
    round_trip(&storage, "rt").await;

    // Files really are under STOA_DATA_DIR/files, and nothing is left behind.
    let k = key(["attachments", "t1", "a.txt"]);
    storage
        .put(&k, Bytes::from_static(b"on disk"))
        .await
        .unwrap();
    let on_disk = dir.0.join("files/attachments/t1/a.txt");
    assert_eq!(std::fs::read(&on_disk).unwrap(), b"on disk");
    storage.delete(&k).await.unwrap();
    assert!(dir.files().is_empty(), "{:?}", dir.files());
}

#[actix_web::test]
async fn files_round_trip_through_the_memory_store() {
    round_trip(&Storage::memory(), "rt").await;
}

#[actix_web::test]
async fn keys_cannot_leave_the_store() {
    let dir = TempDir::new();
    let storage = Storage::local(dir.0.join("files")).unwrap();
    let sneaky = key(["..", "..", "etc", "passwd/../x"]);
    storage
        .put(&sneaky, Bytes::from_static(b"x"))
        .await
        .unwrap();
    let files = dir.files();
    assert_eq!(files.len(), 1);
    assert!(files[0].starts_with(dir.0.join("files")), "{files:?}");
    assert!(StorageKey::parse("a/../b").is_err());
}

/// `cargo xtask test` starts an S3-compatible server (moto) when it can and
/// passes its URL in `STOA_TEST_S3_ENDPOINT`.
#[actix_web::test]
async fn files_round_trip_through_s3() {
    let Ok(endpoint) = std::env::var("STOA_TEST_S3_ENDPOINT") else {
        println!(
            "skipped: no S3-compatible server (STOA_TEST_S3_ENDPOINT is unset; `cargo xtask test` \
             sets it when it could start moto)"
        );
        return;
    };
    let bucket = format!("stoa-{}", uuid::Uuid::new_v4().simple());
    let outbound = OutboundConfig {
        first_byte_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        ..OutboundConfig::default()
    };
    // Create the bucket (object_store does not manage buckets).
    let res = Outbound::new(&outbound)
        .unwrap()
        .trusted()
        .request(
            reqwest::Method::PUT,
            &format!("{}/{bucket}", endpoint.trim_end_matches('/')),
        )
        .unwrap()
        .send()
        .await
        .unwrap();
    assert!(
        res.is_success(),
        "create bucket: {} {}",
        res.status,
        res.text()
    );
    let storage = Storage::from_config(
        &StorageConfig::S3(S3Config {
            bucket,
            region: "us-east-1".into(),
            endpoint: Some(endpoint),
            access_key_id: Some("testing".into()),
            secret_access_key: Some(stoa_core::config::Secret::new("testing")),
            virtual_hosted: false,
        }),
        &outbound,
    )
    .unwrap();
    assert_eq!(storage.kind(), "s3");
    round_trip(&storage, "rt").await;
}
