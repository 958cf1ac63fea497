//! What an uploaded file is, decided from its content first: file names are
//! sanitized, executables and active content (HTML, SVG, XML) are refused
//! whatever their name, and a file named or declared as an image must be one.

use crate::error::AttachmentsError;

/// Extensions refused anywhere after the first dot (`report.exe.txt` too).
const EXECUTABLE_EXTENSIONS: &[&str] = &[
    "app", "apk", "bat", "cmd", "com", "dll", "exe", "hta", "jar", "js", "jse", "lnk", "msi",
    "pif", "ps1", "psm1", "reg", "scr", "sh", "vbe", "vbs", "wsf", "wsh",
];

const ACTIVE_EXTENSIONS: &[&str] = &["htm", "html", "svg", "xhtml", "xml"];
const ACTIVE_TYPES: &[&str] = &[
    "application/xhtml+xml",
    "application/xml",
    "image/svg+xml",
    "text/html",
    "text/xml",
];

/// Image types a browser may show inline (and the image route serves).
pub const INLINE_IMAGE_TYPES: &[&str] = &[
    "image/avif",
    "image/bmp",
    "image/gif",
    "image/jpeg",
    "image/png",
    "image/webp",
];

/// Image types the image route can decode and resize.
pub const RESIZABLE_TYPES: &[&str] = &["image/gif", "image/jpeg", "image/png", "image/webp"];

/// The reference's rules: characters outside `[A-Za-z0-9._-]` become `_`,
/// inner dots `_`, the last extension lower-cased; nothing left is `file`.
/// Path separators, `..` and NUL can therefore never survive.
pub fn sanitize_file_name(raw: &str) -> String {
    // Only the last path segment of what a client sends (`C:\x\a.txt`, `../a`).
    let base = raw.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = cleaned.trim_matches('.');
    let name = match trimmed.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => {
            format!("{}.{}", stem.replace('.', "_"), ext.to_ascii_lowercase())
        }
        _ => trimmed.replace('.', "_"),
    };
    let name: String = name.chars().take(200).collect();
    if name.trim_matches('_').is_empty() {
        "file".into()
    } else {
        name
    }
}

/// Every dot-separated segment after the first, lower-cased.
fn extensions(name: &str) -> Vec<String> {
    name.split('.')
        .skip(1)
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The last extension, lower-cased.
pub fn extension(name: &str) -> Option<String> {
    name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())
}

/// What the content says it is, from magic bytes and a text sniff of its
/// first bytes; `None` when it says nothing.
fn magic_type(head: &[u8]) -> Option<&'static str> {
    let starts = |magic: &[u8]| head.starts_with(magic);
    if starts(b"\x89PNG\r\n\x1a\n") {
        return Some("image/png");
    }
    if starts(b"\xff\xd8\xff") {
        return Some("image/jpeg");
    }
    if starts(b"GIF87a") || starts(b"GIF89a") {
        return Some("image/gif");
    }
    if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    if starts(b"%PDF-") {
        return Some("application/pdf");
    }
    if starts(b"PK\x03\x04") {
        return Some("application/zip");
    }
    if starts(b"BM") && head.len() >= 14 {
        return Some("image/bmp");
    }
    None
}

/// Whether the first bytes look like markup a browser would run: HTML, SVG,
/// XML (after a BOM and whitespace, case-insensitive), anywhere in the first
/// 512 bytes for `<svg` and `<script`.
fn sniffs_active(head: &[u8]) -> bool {
    let window = &head[..head.len().min(512)];
    let text = String::from_utf8_lossy(window).to_ascii_lowercase();
    let start = text.trim_start_matches('\u{feff}').trim_start();
    start.starts_with("<!doctype html")
        || start.starts_with("<html")
        || start.starts_with("<?xml")
        || start.starts_with("<head")
        || start.starts_with("<body")
        || text.contains("<svg")
        || text.contains("<script")
        || text.contains("<iframe")
}

/// Native executables and scripts, whatever they are called.
fn sniffs_executable(head: &[u8]) -> bool {
    head.starts_with(b"MZ")
        || head.starts_with(b"\x7fELF")
        || head.starts_with(b"#!")
        || head.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
        || head.starts_with(&[0xfe, 0xed, 0xfa, 0xcf])
        || head.starts_with(&[0xca, 0xfe, 0xba, 0xbe])
}

fn type_of_extension(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "avif" => "image/avif",
        "bmp" => "image/bmp",
        "csv" => "text/csv",
        "gif" => "image/gif",
        "jpeg" | "jpg" => "image/jpeg",
        "json" => "application/json",
        "md" => "text/markdown",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "txt" => "text/plain",
        "webp" => "image/webp",
        "zip" => "application/zip",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        _ => return None,
    })
}

/// Checks the name alone (before the content is read).
pub fn check_name(name: &str) -> Result<(), AttachmentsError> {
    if extensions(name)
        .iter()
        .any(|e| EXECUTABLE_EXTENSIONS.contains(&e.as_str()))
    {
        return Err(AttachmentsError::Executable);
    }
    Ok(())
}

/// The MIME type to store for a file, or why it is refused. `name` is the
/// client's name (raw, so `evil.svg` is seen before sanitizing), `declared`
/// the part's content type, `head` the first bytes of the content.
pub fn detect(name: &str, declared: Option<&str>, head: &[u8]) -> Result<String, AttachmentsError> {
    check_name(name)?;
    if sniffs_executable(head) {
        return Err(AttachmentsError::Executable);
    }
    let ext = extension(name);
    let declared = declared
        .map(|d| {
            d.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|d| !d.is_empty());
    let active_name = ext
        .as_deref()
        .is_some_and(|e| ACTIVE_EXTENSIONS.contains(&e));
    let active_type = declared
        .as_deref()
        .is_some_and(|d| ACTIVE_TYPES.contains(&d));
    if active_name || active_type || sniffs_active(head) {
        return Err(AttachmentsError::ActiveContent);
    }
    let magic = magic_type(head);
    let by_name = ext.as_deref().and_then(type_of_extension);
    // A file named or declared as an image must carry an image's bytes.
    let claims_image = by_name.is_some_and(|t| t.starts_with("image/"))
        || declared.as_deref().is_some_and(|d| d.starts_with("image/"));
    let mime = match magic {
        Some("application/zip") => match by_name {
            Some(t) if t.starts_with("application/vnd.openxmlformats") => t.to_string(),
            _ => "application/zip".into(),
        },
        Some(t) => t.to_string(),
        None if claims_image => return Err(AttachmentsError::NotAnImage),
        None => by_name
            .map(String::from)
            .or(declared.filter(|d| is_token_type(d)))
            .unwrap_or_else(|| "application/octet-stream".into()),
    };
    if claims_image && !mime.starts_with("image/") {
        return Err(AttachmentsError::NotAnImage);
    }
    Ok(mime)
}

/// `type/subtype` of token characters (a declared type stored verbatim).
fn is_token_type(value: &str) -> bool {
    let Some((a, b)) = value.split_once('/') else {
        return false;
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.len() <= 100
            && s.bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&c))
    };
    token(a) && token(b)
}

/// The reference's slug: lower-cased stem, runs of other characters `-`,
/// `asset` when nothing is left, plus the lower-cased extension.
pub fn slug(file_name: &str) -> String {
    let (stem, ext) = match file_name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, Some(e.to_ascii_lowercase())),
        _ => (file_name, None),
    };
    let mut out = String::new();
    for c in stem.to_ascii_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-');
    let base = if out.is_empty() { "asset" } else { out };
    match ext {
        Some(e) if !e.is_empty() => format!("{base}.{e}"),
        _ => base.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized() {
        assert_eq!(sanitize_file_name("../../etc/passwd"), "passwd");
        assert_eq!(sanitize_file_name("..\\..\\boot.ini"), "boot.ini");
        assert_eq!(sanitize_file_name("my report.v2.PDF"), "my_report_v2.pdf");
        assert_eq!(sanitize_file_name("a\0b.txt"), "a_b.txt");
        assert_eq!(sanitize_file_name(".."), "file");
        assert_eq!(sanitize_file_name(""), "file");
        assert_eq!(sanitize_file_name("żółw.png"), "___w.png");
    }

    #[test]
    fn executables_are_refused_by_name_and_content() {
        assert!(matches!(
            check_name("report.exe.txt"),
            Err(AttachmentsError::Executable)
        ));
        assert!(matches!(
            check_name("RUN.EXE"),
            Err(AttachmentsError::Executable)
        ));
        assert!(check_name("notes.txt").is_ok());
        assert!(matches!(
            detect("notes.txt", None, b"MZ\x90\x00"),
            Err(AttachmentsError::Executable)
        ));
        assert!(matches!(
            detect("x.txt", None, b"#!/bin/sh\nrm -rf /"),
            Err(AttachmentsError::Executable)
        ));
    }

    #[test]
    fn active_content_is_refused_whatever_its_name() {
        for (name, declared, body) in [
            ("a.html", None, &b"hello"[..]),
            ("a.txt", Some("text/html"), b"hello"),
            ("a.txt", None, b"  <!DOCTYPE html><p>x"),
            ("drawing.txt", None, b"<svg onload=alert(1)>"),
            ("a.csv", None, b"\xef\xbb\xbf<?xml version='1.0'?>"),
        ] {
            assert!(
                matches!(
                    detect(name, declared, body),
                    Err(AttachmentsError::ActiveContent)
                ),
                "{name}"
            );
        }
    }

    #[test]
    fn images_must_be_images() {
        assert_eq!(
            detect("x.png", None, b"\x89PNG\r\n\x1a\n....").unwrap(),
            "image/png"
        );
        assert!(matches!(
            detect("x.png", None, b"plain text"),
            Err(AttachmentsError::NotAnImage)
        ));
        assert!(matches!(
            detect("x.bin", Some("image/jpeg"), b"plain"),
            Err(AttachmentsError::NotAnImage)
        ));
        // A PDF named like an image is not an image either.
        assert!(matches!(
            detect("x.jpg", None, b"%PDF-1.4"),
            Err(AttachmentsError::NotAnImage)
        ));
        assert_eq!(detect("n.txt", None, b"hello").unwrap(), "text/plain");
        assert_eq!(
            detect("n", Some("Application/X-Thing"), b"hello").unwrap(),
            "application/x-thing"
        );
        assert_eq!(
            detect("n", Some("bad type"), b"hello").unwrap(),
            "application/octet-stream"
        );
        assert_eq!(
            detect("d.docx", None, b"PK\x03\x04....").unwrap(),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        );
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("My_Photo 01.JPG"), "my-photo-01.jpg");
        assert_eq!(slug("___.png"), "asset.png");
        assert_eq!(slug("file"), "file");
    }
}
