//! Decoding within the pixel cap (read from the header first) and resizing,
//! never past the original's size.

use std::io::Cursor;

use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use stoa_core::AppError;

use crate::error::AttachmentsError;

use super::{Crop, MAX_SIDE, Size};

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

/// Resizes, never past the original's size: a box larger than the image
/// gives the image itself (`contain`, one side) or the largest crop of the
/// asked proportions that fits in it (`cover`).
fn resize(image: DynamicImage, size: Size) -> DynamicImage {
    let filter = FilterType::Triangle;
    let (ow, oh) = (image.width().max(1), image.height().max(1));
    match (size.width, size.height, size.crop) {
        (None, None, _) => image,
        (Some(w), Some(h), Crop::Cover) => {
            let (w, h) = if w <= ow && h <= oh {
                (w, h)
            } else {
                // Scale the box down until it fits, keeping its proportions.
                let scale = (f64::from(ow) / f64::from(w)).min(f64::from(oh) / f64::from(h));
                let side = |n: u32| ((f64::from(n) * scale).round() as u32).clamp(1, MAX_SIDE);
                (side(w).min(ow), side(h).min(oh))
            };
            if (w, h) == (ow, oh) {
                image
            } else {
                image.resize_to_fill(w, h, filter)
            }
        }
        (Some(w), Some(h), Crop::Contain) => fit(image, w.min(ow), h.min(oh), filter),
        // One side given: the other follows the aspect ratio.
        (Some(w), None, _) => fit(image, w.min(ow), oh, filter),
        (None, Some(h), _) => fit(image, ow, h.min(oh), filter),
    }
}

/// The image fitted inside `w` × `h` (both at most its own size).
fn fit(image: DynamicImage, w: u32, h: u32, filter: FilterType) -> DynamicImage {
    if w >= image.width() && h >= image.height() {
        image
    } else {
        image.resize(w, h, filter)
    }
}
