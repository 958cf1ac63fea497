//! Resized image variants: parameters validated before anything is read,
//! the decoded size checked from the image header before any pixel is
//! allocated (a decompression bomb is a 400), decoding and resizing on
//! a few threads of their own (a bounded pool), variants kept in
//! storage, and one render per missing variant however many requests ask for
//! it at once.

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use stoa_core::AppError;
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

/// The bounded pool and the renders in flight.
pub struct Renderer {
    pool: RenderPool,
    permits: Arc<Semaphore>,
    in_flight: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    max_pixels: u64,
    renders: AtomicU64,
}

impl Renderer {
    pub fn new(config: &AttachmentsConfig) -> Self {
        Self {
            pool: RenderPool::new(config.image_workers.max(1)),
            permits: Arc::new(Semaphore::new(config.image_workers.max(1))),
            in_flight: Mutex::new(HashMap::new()),
            max_pixels: config.max_image_pixels,
            renders: AtomicU64::new(0),
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

    /// The variant under `variant_key`, rendered from `original` when it is
    /// not stored yet. Returns the bytes and their content type.
    pub async fn variant(
        &self,
        storage: &Storage,
        original: &StorageKey,
        variant_key: &StorageKey,
        size: Size,
    ) -> Result<(Bytes, &'static str), AppError> {
        if let Some(found) = cached(storage, variant_key).await? {
            return Ok(found);
        }
        let name = variant_key.to_string();
        let slot = self.slot(&name);
        let result = async {
            let _turn = slot.lock().await;
            // Whoever held the slot before may have rendered it.
            if let Some(found) = cached(storage, variant_key).await? {
                return Ok(found);
            }
            let source = storage.get(original).await.map_err(|e| match e {
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
            let mut stored = Vec::with_capacity(bytes.len() + 16);
            stored.extend_from_slice(content_type.as_bytes());
            stored.push(b'\n');
            stored.extend_from_slice(&bytes);
            storage
                .put(variant_key, Bytes::from(stored))
                .await
                .map_err(AppError::from_api)?;
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

/// A reader over an image in memory, its format guessed from the content.
type MemoryReader<'a> = ImageReader<Cursor<&'a [u8]>>;

fn reader(bytes: &[u8]) -> Result<(MemoryReader<'_>, ImageFormat), AttachmentsError> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|_| AttachmentsError::InvalidImage)?;
    match reader.format() {
        Some(f @ (ImageFormat::Jpeg | ImageFormat::Png | ImageFormat::WebP | ImageFormat::Gif)) => {
            Ok((reader, f))
        }
        _ => Err(AttachmentsError::UnsupportedMedia),
    }
}

/// Decodes within the pixel cap (read from the header first) and resizes.
/// JPEG stays JPEG; the other formats become PNG (transparency kept).
pub fn render(
    bytes: &[u8],
    size: Size,
    max_pixels: u64,
) -> Result<(Vec<u8>, &'static str), AppError> {
    let (header, _) = reader(bytes)?;
    let (w, h) = header
        .into_dimensions()
        .map_err(|_| AttachmentsError::InvalidImage)?;
    if u64::from(w) * u64::from(h) > max_pixels {
        return Err(AttachmentsError::PixelLimit.into());
    }
    let (mut reader, format) = reader(bytes)?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(w);
    limits.max_image_height = Some(h);
    // The decoded pixels (at most 16 bytes each) plus room for the decoder.
    limits.max_alloc = Some(
        max_pixels
            .saturating_mul(16)
            .saturating_add(64 * 1024 * 1024),
    );
    reader.limits(limits);
    let image = reader.decode().map_err(|e| match e {
        image::ImageError::Limits(_) => AttachmentsError::PixelLimit,
        _ => AttachmentsError::InvalidImage,
    })?;
    let image = resize(image, size);
    let (out, content_type, image) = match format {
        ImageFormat::Jpeg => (
            ImageFormat::Jpeg,
            "image/jpeg",
            DynamicImage::ImageRgb8(image.to_rgb8()),
        ),
        _ => (ImageFormat::Png, "image/png", image),
    };
    let mut buf = Cursor::new(Vec::new());
    image
        .write_to(&mut buf, out)
        .map_err(|_| AttachmentsError::RenderFailed)?;
    Ok((buf.into_inner(), content_type))
}

fn resize(image: DynamicImage, size: Size) -> DynamicImage {
    let filter = FilterType::Triangle;
    match (size.width, size.height, size.crop) {
        (None, None, _) => image,
        (Some(w), Some(h), Crop::Cover) => image.resize_to_fill(w, h, filter),
        (Some(w), Some(h), Crop::Contain) => image.resize(w, h, filter),
        // One side given: the other follows the aspect ratio.
        (Some(w), None, _) => image.resize(w, MAX_SIDE * 4, filter),
        (None, Some(h), _) => image.resize(MAX_SIDE * 4, h, filter),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage};

    fn jpeg(w: u32, h: u32) -> Vec<u8> {
        let img = DynamicImage::ImageRgb8(RgbImage::from_pixel(w, h, Rgb([10, 20, 30])));
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ImageFormat::Jpeg).unwrap();
        out.into_inner()
    }

    #[test]
    fn parameters_are_validated() {
        assert!(Size::parse(Some("0"), None, None).is_err());
        assert!(Size::parse(Some("-1"), None, None).is_err());
        assert!(Size::parse(Some("5000"), None, None).is_err());
        assert!(Size::parse(Some("1.5"), None, None).is_err());
        assert!(Size::parse(None, None, Some("fill")).is_err());
        let size = Size::parse(Some("320"), Some("200"), Some("contain")).unwrap();
        assert_eq!(size.variant_name(), "w320-h200-ccontain");
        assert_eq!(
            Size::parse(None, None, None).unwrap().variant_name(),
            "wauto-hauto-ccover"
        );
    }

    #[test]
    fn cover_contain_and_one_side() {
        let src = jpeg(400, 200);
        let dims = |size: Size| {
            let (bytes, ct) = render(&src, size, 40_000_000).unwrap();
            assert_eq!(ct, "image/jpeg");
            image::load_from_memory(&bytes)
                .unwrap()
                .into_rgb8()
                .dimensions()
        };
        let s = |w, h, c| Size {
            width: w,
            height: h,
            crop: c,
        };
        assert_eq!(dims(s(Some(100), Some(100), Crop::Cover)), (100, 100));
        assert_eq!(dims(s(Some(100), Some(100), Crop::Contain)), (100, 50));
        assert_eq!(dims(s(Some(200), None, Crop::Cover)), (200, 100));
        assert_eq!(dims(s(None, Some(50), Crop::Cover)), (100, 50));
    }

    #[test]
    fn the_pixel_cap_is_checked_before_decoding() {
        let src = jpeg(300, 300);
        let size = Size {
            width: Some(10),
            height: None,
            crop: Crop::Cover,
        };
        let err = render(&src, size, 1000).unwrap_err();
        assert_eq!(err.status().as_u16(), 400);
        assert_eq!(err.body()["error"], "Image exceeds pixel limit");
        let err = render(b"not an image", size, 1000).unwrap_err();
        assert_eq!(err.status().as_u16(), 400);
    }
}
