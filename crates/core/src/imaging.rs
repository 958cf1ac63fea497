//! Image decoding and resizing for modules that make previews (attachment
//! thumbnails), on the workspace's `image` crate with only the formats stoa
//! serves: JPEG, PNG, WebP and GIF.
//!
//! Decoding is bounded before any pixel is allocated ([`ImageLimits`]): a
//! small file that declares a huge canvas (a decompression bomb) is refused
//! with [`ImagingError::TooLarge`], not decoded. Decoding and resizing are CPU
//! work: call [`resize_to_fit`] from `actix_web::web::block` or
//! `tokio::task::spawn_blocking`, never on a request's worker directly.

use std::io::Cursor;

use actix_web::http::StatusCode;
use image::{DynamicImage, ImageError, ImageFormat, ImageReader, Limits};

use crate::error::ApiError;

/// Bounds applied while decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageLimits {
    pub max_width: u32,
    pub max_height: u32,
    /// Largest decoder allocation (the decoded pixels count towards it).
    pub max_alloc: u64,
}

impl Default for ImageLimits {
    /// 12,000 × 12,000 pixels and 256 MiB of decoder memory.
    fn default() -> Self {
        Self {
            max_width: 12_000,
            max_height: 12_000,
            max_alloc: 256 * 1024 * 1024,
        }
    }
}

/// A resized image, encoded.
#[derive(Clone, Debug)]
pub struct Resized {
    pub bytes: Vec<u8>,
    pub content_type: &'static str,
    pub width: u32,
    pub height: u32,
}

/// Why an image could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ImagingError {
    #[error("Unsupported image format")]
    Unsupported,
    #[error("Image dimensions or memory exceed the limit")]
    TooLarge,
    #[error("Invalid image: {0}")]
    Invalid(String),
    #[error("Image encoding failed: {0}")]
    Encode(String),
}

impl ApiError for ImagingError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Unsupported => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Invalid(_) => StatusCode::BAD_REQUEST,
            Self::Encode(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
    fn code(&self) -> Option<&'static str> {
        match self {
            Self::Unsupported => Some("image_unsupported"),
            Self::TooLarge => Some("image_too_large"),
            Self::Invalid(_) => Some("image_invalid"),
            Self::Encode(_) => None,
        }
    }
}

fn decode_error(err: ImageError) -> ImagingError {
    match err {
        ImageError::Limits(_) => ImagingError::TooLarge,
        ImageError::Unsupported(_) => ImagingError::Unsupported,
        other => ImagingError::Invalid(other.to_string()),
    }
}

/// Decodes `bytes` (format sniffed from the content, never from a name or a
/// declared type) within `limits`.
pub fn decode(
    bytes: &[u8],
    limits: ImageLimits,
) -> Result<(DynamicImage, ImageFormat), ImagingError> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| ImagingError::Invalid(e.to_string()))?;
    let format = match reader.format() {
        Some(f @ (ImageFormat::Jpeg | ImageFormat::Png | ImageFormat::WebP | ImageFormat::Gif)) => {
            f
        }
        _ => return Err(ImagingError::Unsupported),
    };
    let mut bounds = Limits::default();
    bounds.max_image_width = Some(limits.max_width);
    bounds.max_image_height = Some(limits.max_height);
    bounds.max_alloc = Some(limits.max_alloc);
    reader.limits(bounds);
    let image = reader.decode().map_err(decode_error)?;
    Ok((image, format))
}

/// Decodes `bytes` and scales the image down to fit `max_width` × `max_height`
/// (aspect ratio kept; never scaled up). JPEG stays JPEG; PNG, GIF (its first
/// frame) and WebP become PNG, which keeps transparency.
pub fn resize_to_fit(
    bytes: &[u8],
    max_width: u32,
    max_height: u32,
    limits: ImageLimits,
) -> Result<Resized, ImagingError> {
    let (image, format) = decode(bytes, limits)?;
    let image = if image.width() > max_width || image.height() > max_height {
        image.thumbnail(max_width.max(1), max_height.max(1))
    } else {
        image
    };
    let (out_format, content_type, image) = match format {
        // JPEG has no alpha channel: encode from RGB.
        ImageFormat::Jpeg => (
            ImageFormat::Jpeg,
            "image/jpeg",
            DynamicImage::ImageRgb8(image.to_rgb8()),
        ),
        _ => (ImageFormat::Png, "image/png", image),
    };
    let mut out = Cursor::new(Vec::new());
    image
        .write_to(&mut out, out_format)
        .map_err(|e| ImagingError::Encode(e.to_string()))?;
    Ok(Resized {
        bytes: out.into_inner(),
        content_type,
        width: image.width(),
        height: image.height(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage, Rgba, RgbaImage};

    fn encoded(image: DynamicImage, format: ImageFormat) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        image.write_to(&mut out, format).unwrap();
        out.into_inner()
    }

    #[test]
    fn a_generated_jpeg_is_decoded_and_scaled_down_keeping_its_ratio() {
        let img = RgbImage::from_fn(400, 200, |x, _| Rgb([(x % 256) as u8, 10, 200]));
        let jpeg = encoded(DynamicImage::ImageRgb8(img), ImageFormat::Jpeg);
        let out = resize_to_fit(&jpeg, 100, 100, ImageLimits::default()).unwrap();
        assert_eq!(
            (out.width, out.height, out.content_type),
            (100, 50, "image/jpeg")
        );
        let (back, format) = decode(&out.bytes, ImageLimits::default()).unwrap();
        assert_eq!(
            (back.width(), back.height(), format),
            (100, 50, ImageFormat::Jpeg)
        );
    }

    #[test]
    fn png_gif_and_webp_become_png_and_small_images_keep_their_size() {
        let img = DynamicImage::ImageRgba8(RgbaImage::from_pixel(30, 60, Rgba([1, 2, 3, 128])));
        for format in [ImageFormat::Png, ImageFormat::Gif, ImageFormat::WebP] {
            let bytes = encoded(img.clone(), format);
            let out = resize_to_fit(&bytes, 10, 10, ImageLimits::default()).unwrap();
            assert_eq!(
                (out.width, out.height, out.content_type),
                (5, 10, "image/png"),
                "{format:?}"
            );
            let out = resize_to_fit(&bytes, 100, 100, ImageLimits::default()).unwrap();
            assert_eq!((out.width, out.height), (30, 60), "{format:?}");
        }
    }

    #[test]
    fn bombs_garbage_and_other_formats_are_refused() {
        let img = DynamicImage::ImageRgb8(RgbImage::new(300, 300));
        let png = encoded(img.clone(), ImageFormat::Png);
        let tight = ImageLimits {
            max_width: 200,
            ..ImageLimits::default()
        };
        assert!(matches!(
            resize_to_fit(&png, 10, 10, tight),
            Err(ImagingError::TooLarge)
        ));
        let small_memory = ImageLimits {
            max_alloc: 1000,
            ..ImageLimits::default()
        };
        assert!(matches!(
            resize_to_fit(&png, 10, 10, small_memory),
            Err(ImagingError::TooLarge)
        ));
        assert!(matches!(
            resize_to_fit(b"not an image at all", 10, 10, ImageLimits::default()),
            Err(ImagingError::Unsupported)
        ));
        let mut truncated = png.clone();
        truncated.truncate(60);
        assert!(matches!(
            resize_to_fit(&truncated, 10, 10, ImageLimits::default()),
            Err(ImagingError::Invalid(_) | ImagingError::TooLarge)
        ));
        let bmp = [b'B', b'M', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert!(matches!(
            resize_to_fit(&bmp, 10, 10, ImageLimits::default()),
            Err(ImagingError::Unsupported)
        ));
    }
}
