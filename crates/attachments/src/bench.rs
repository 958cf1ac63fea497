//! Sample data for `cargo xtask bench` (the hidden `stoa bench-jpeg`): a
//! photo-like JPEG, so the resize scenarios decode what users upload rather
//! than a flat colour that compresses to nothing.

use std::io::Cursor;

use image::{ImageFormat, Rgb, RgbImage};

/// A `width`×`height` JPEG of gradients with a deterministic grain, about
/// the bytes per pixel of a phone photo at ordinary quality.
pub fn sample_jpeg(width: u32, height: u32) -> Result<Vec<u8>, image::ImageError> {
    let mut seed: u32 = 0x9e37_79b9;
    let image = RgbImage::from_fn(width, height, |x, y| {
        // xorshift: cheap grain that the encoder cannot flatten.
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let grain = seed & 0x1f;
        let channel = |v: u32| u8::try_from((v + grain).min(255)).unwrap_or(u8::MAX);
        Rgb([
            channel(x * 224 / width.max(1)),
            channel(y * 224 / height.max(1)),
            channel((x + y) * 112 / (width + height).max(1)),
        ])
    });
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Jpeg)?;
    Ok(out.into_inner())
}
