//! Resized image variants: parameters validated before anything is read
//! (and, when configured, limited to a list of sizes), the decoded size
//! checked from the image header before any pixel is allocated (a
//! decompression bomb is a 400), decoding and resizing on a few threads of
//! their own (a bounded pool), never past the original's size, variants
//! kept in storage up to a cap per image, renders of variants not stored
//! yet throttled per client address, and one render per image at a time
//! however many requests ask for it at once.

mod render;

pub use render::render;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use stoa_core::AppError;
use stoa_core::rate_limit::{Decision, MemoryRateLimiter, RateLimiter, Rule};
use stoa_core::storage::{Storage, StorageError, StorageKey};
use tokio::sync::Semaphore;

use crate::config::AttachmentsConfig;
use crate::error::AttachmentsError;

/// Largest side a client may ask for.
pub const MAX_SIDE: u32 = 4000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crop {
    Cover,
    Contain,
}

/// Validated resize parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub crop: Crop,
}

impl Size {
    /// Width and height are integers 1..=4000, `cropType` `cover` or
    /// `contain`; anything else is 400 `Invalid size parameters`.
    pub fn parse(
        width: Option<&str>,
        height: Option<&str>,
        crop: Option<&str>,
    ) -> Result<Self, AttachmentsError> {
        let side = |v: Option<&str>| -> Result<Option<u32>, AttachmentsError> {
            match v.map(str::trim) {
                None | Some("") => Ok(None),
                Some(s) => match s.parse::<u32>() {
                    Ok(n) if (1..=MAX_SIDE).contains(&n) => Ok(Some(n)),
                    _ => Err(AttachmentsError::InvalidSize),
                },
            }
        };
        let crop = match crop.map(str::trim) {
            None | Some("") | Some("cover") => Crop::Cover,
            Some("contain") => Crop::Contain,
            Some(_) => return Err(AttachmentsError::InvalidSize),
        };
        Ok(Self {
            width: side(width)?,
            height: side(height)?,
            crop,
        })
    }

    /// 400 `Invalid size parameters` when a list of sizes is configured
    /// (`OM_ATTACHMENT_IMAGE_SIZES`) and a given side is not in it.
    pub fn check_allowed(&self, sizes: Option<&[u32]>) -> Result<(), AttachmentsError> {
        let Some(sizes) = sizes else {
            return Ok(());
        };
        let allowed = |side: Option<u32>| side.is_none_or(|n| sizes.contains(&n));
        if allowed(self.width) && allowed(self.height) {
            Ok(())
        } else {
            Err(AttachmentsError::InvalidSize)
        }
    }

    /// The variant's name in storage (from validated numbers only).
    pub fn variant_name(&self) -> String {
        let side = |v: Option<u32>| v.map_or_else(|| "auto".to_string(), |n| n.to_string());
        let crop = match self.crop {
            Crop::Cover => "cover",
            Crop::Contain => "contain",
        };
        format!("w{}-h{}-c{crop}", side(self.width), side(self.height))
    }
}

type RenderJob = Box<dyn FnOnce() + Send>;

/// The threads that decode and resize: a fixed few, not tokio's blocking
/// pool. glibc keeps a freed 36 MB decode buffer in the arena of the thread
/// that freed it; on the blocking pool (which also serves file I/O) renders
/// landed on dozens of threads and their arenas, and 32 concurrent resizes
/// of a 12 MP photo held 440 MiB. On `image_workers` threads of their own
/// the buffers are reused: the peak is bounded by the worker count.
struct RenderPool {
    jobs: Mutex<std::sync::mpsc::Sender<RenderJob>>,
}

impl RenderPool {
    fn new(workers: usize) -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<RenderJob>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..workers.max(1) {
            let rx = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("stoa-image-{i}"))
                .spawn(move || {
                    loop {
                        // The lock is held only while waiting for a job; a
                        // closed channel (the renderer dropped) ends the thread.
                        let job = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        match job {
                            Ok(job) => job(),
                            Err(_) => break,
                        }
                    }
                });
            if let Err(err) = spawned {
                tracing::error!(error = %err, "cannot start an image rendering thread");
            }
        }
        Self {
            jobs: Mutex::new(tx),
        }
    }

    /// Runs `work` on a pool thread; `None` when the pool is gone.
    async fn run<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: RenderJob = Box::new(move || {
            // A panicking decoder fails this render, not the worker thread.
            if let Ok(value) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
                let _ = tx.send(value);
            }
        });
        self.jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(job)
            .ok()?;
        rx.await.ok()
    }
}

/// Where a variant goes and who asks for it.
pub struct VariantRequest<'a> {
    pub original: &'a StorageKey,
    /// The prefix holding every variant of the image (counted against the cap).
    pub variants: &'a StorageKey,
    pub variant: &'a StorageKey,
    pub size: Size,
    /// The client's address (`None`: unknown, all such clients share one
    /// throttle).
    pub client: Option<&'a str>,
}

/// The bounded pool, the renders in flight and the render throttle.
pub struct Renderer {
    pool: RenderPool,
    permits: Arc<Semaphore>,
    in_flight: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    max_pixels: u64,
    max_variants: usize,
    limiter: MemoryRateLimiter,
    rule: Rule,
    renders: AtomicU64,
}

impl Renderer {
    pub fn new(config: &AttachmentsConfig) -> Self {
        Self {
            pool: RenderPool::new(config.image_workers.max(1)),
            permits: Arc::new(Semaphore::new(config.image_workers.max(1))),
            in_flight: Mutex::new(HashMap::new()),
            max_pixels: config.max_image_pixels,
            max_variants: config.max_variants_per_image,
            limiter: MemoryRateLimiter::new(config.rate_limit_enabled),
            rule: config.renders_per_client,
            renders: AtomicU64::new(0),
        }
    }

    /// Counts one render for `client`: 429 with `Retry-After` past the limit.
    fn throttle(&self, client: Option<&str>) -> Result<(), AppError> {
        let key = format!("attachments:render:ip:{}", client.unwrap_or("unknown"));
        match self.limiter.record(&key, &self.rule) {
            Decision::Allowed { .. } => Ok(()),
            Decision::Limited { retry_after } => {
                Err(AppError::too_many_requests(retry_after.as_secs().max(1)))
            }
        }
    }

    /// How many variants this process rendered (a cache hit renders none).
    pub fn renders(&self) -> u64 {
        self.renders.load(Ordering::Relaxed)
    }

    fn slot(&self, key: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(key.to_string()).or_default().clone()
    }

    fn release(&self, key: &str, slot: &Arc<tokio::sync::Mutex<()>>) {
        let mut map = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        // Two references: the map's and the caller's; others still wait on it.
        if Arc::strong_count(slot) <= 2 {
            map.remove(key);
        }
    }

    /// The variant `req.variant`, rendered from `req.original` when it is
    /// not stored yet (a miss: counted against the client's throttle) and
    /// kept while the image has fewer than the cap's variants. Returns the
    /// bytes and their content type.
    pub async fn variant(
        &self,
        storage: &Storage,
        req: VariantRequest<'_>,
    ) -> Result<(Bytes, &'static str), AppError> {
        if let Some(found) = cached(storage, req.variant).await? {
            return Ok(found);
        }
        // One render per image at a time: concurrent requests for one
        // missing variant wait for a single render, and the count of stored
        // variants cannot be outdated by another render of the same image
        // in this process.
        let name = req.variants.to_string();
        let slot = self.slot(&name);
        let result = async {
            let _turn = slot.lock().await;
            // Whoever held the slot before may have rendered it.
            if let Some(found) = cached(storage, req.variant).await? {
                return Ok(found);
            }
            self.throttle(req.client)?;
            let stored = storage
                .list(Some(req.variants))
                .await
                .map_err(AppError::from_api)?
                .len();
            let source = storage.get(req.original).await.map_err(|e| match e {
                StorageError::NotFound => AppError::from_api(AttachmentsError::FileUnavailable),
                other => AppError::from_api(other),
            })?;
            let permit = self
                .permits
                .clone()
                .acquire_owned()
                .await
                .map_err(AppError::internal)?;
            let max_pixels = self.max_pixels;
            let size = req.size;
            self.renders.fetch_add(1, Ordering::Relaxed);
            let rendered = self
                .pool
                .run(move || {
                    let _permit = permit;
                    render(&source, size, max_pixels)
                })
                .await
                .ok_or_else(|| AppError::from_api(AttachmentsError::RenderFailed))??;
            let (bytes, content_type) = rendered;
            let bytes = Bytes::from(bytes);
            if stored < self.max_variants {
                let mut kept = Vec::with_capacity(bytes.len() + 16);
                kept.extend_from_slice(content_type.as_bytes());
                kept.push(b'\n');
                kept.extend_from_slice(&bytes);
                storage
                    .put(req.variant, Bytes::from(kept))
                    .await
                    .map_err(AppError::from_api)?;
            }
            Ok((bytes, content_type))
        }
        .await;
        self.release(&name, &slot);
        result
    }
}

/// A stored variant: its content type on the first line, then the bytes.
async fn cached(
    storage: &Storage,
    key: &StorageKey,
) -> Result<Option<(Bytes, &'static str)>, AppError> {
    match storage.get(key).await {
        Ok(stored) => {
            let Some(split) = stored.iter().position(|b| *b == b'\n') else {
                return Ok(None);
            };
            let content_type = match &stored[..split] {
                b"image/jpeg" => "image/jpeg",
                b"image/png" => "image/png",
                _ => return Ok(None),
            };
            Ok(Some((stored.slice(split + 1..), content_type)))
        }
        Err(StorageError::NotFound) => Ok(None),
        Err(err) => Err(AppError::from_api(err)),
    }
}

#[cfg(test)]
mod tests;
