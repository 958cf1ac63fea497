//! Unit tests of the parent module.

use super::*;
use std::io::Cursor;

use image::{DynamicImage, ImageFormat, Rgb, RgbImage};

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
    // Never past the original: 400 × 200 at most, proportions kept.
    assert_eq!(dims(s(Some(4000), Some(4000), Crop::Cover)), (200, 200));
    assert_eq!(dims(s(Some(4000), Some(1000), Crop::Cover)), (400, 100));
    assert_eq!(dims(s(Some(4000), Some(4000), Crop::Contain)), (400, 200));
    assert_eq!(dims(s(Some(4000), None, Crop::Cover)), (400, 200));
    assert_eq!(dims(s(None, Some(4000), Crop::Contain)), (400, 200));
    assert_eq!(dims(s(Some(800), Some(100), Crop::Contain)), (200, 100));
}

#[test]
fn a_configured_list_limits_the_sides() {
    let size = Size::parse(Some("320"), Some("200"), None).unwrap();
    assert!(size.check_allowed(None).is_ok());
    assert!(size.check_allowed(Some(&[200, 320])).is_ok());
    assert!(size.check_allowed(Some(&[320])).is_err());
    let original = Size::parse(None, None, None).unwrap();
    assert!(original.check_allowed(Some(&[320])).is_ok());
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
