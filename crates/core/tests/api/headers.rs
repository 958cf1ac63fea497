//! The CORS header list is complete: every request header the workspace's code
//! reads is in `stoa_core::http::ALLOWED_HEADERS` (or is one a browser script
//! cannot or must not set). The list is derived from the sources themselves, so
//! a module that starts reading a new header fails here until it is allowed.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use stoa_core::http::{ALLOWED_HEADERS, EXPOSED_HEADERS};

/// Headers read that browsers set themselves (scripts cannot), or that only a
/// trusted proxy sets, or that are read from responses rather than requests.
const NOT_FROM_SCRIPTS: &[&str] = &[
    "origin",
    "referer",
    "cookie",
    "host",
    "content-length",
    "accept-encoding",
    "access-control-request-method",
    "access-control-request-headers",
    // Set by the reverse proxy (`RATE_LIMIT_TRUST_PROXY_DEPTH`), never by a browser.
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    // Response headers the middleware inspects.
    "content-encoding",
    "retry-after",
    "set-cookie",
];

/// `x-...` names in the sources that are not request headers: response
/// headers we send and OpenAPI extensions.
const NOT_REQUEST_HEADERS: &[&str] = &[
    "x-content-type-options",
    "x-frame-options",
    "x-accel-buffering",
    "x-required-features",
    "x-public",
    "x-error-shape",
    // An OpenAPI extension naming an operation's error envelope (the bulk
    // routes' `ok:false` body), not a header.
    "x-error-envelope",
    "x-bad-json-error",
    // Sent with a business rule's in-process CALL_OPEN_MERCATO request (as
    // the reference sends them); no route reads them and no browser sends them.
    "x-business-rule-id",
    "x-business-rule-entity-type",
    "x-business-rule-entity-id",
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap()
}

/// Every non-test Rust source of the workspace's crates and apps, without its
/// `#[cfg(test)]` tail.
fn sources() -> Vec<(PathBuf, String)> {
    let root = workspace_root();
    let mut stack = vec![root.join("crates"), root.join("apps")];
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), "tests" | "target" | "benches") {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" && name != "testing.rs" {
                let text = std::fs::read_to_string(&path).unwrap();
                let text = match text.find("#[cfg(test)]") {
                    Some(i) => text[..i].to_string(),
                    None => text,
                };
                out.push((path, text));
            }
        }
    }
    assert!(out.len() > 50, "found the workspace sources");
    out
}

/// String literals that look like custom header names (`"x-..."`, any case).
fn x_literals(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    lower
        .match_indices("\"x-")
        .filter_map(|(at, _)| {
            let rest = &lower[at + 1..];
            let name = &rest[..rest.find('"')?];
            let header_like = name.len() > 2
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            header_like.then(|| name.to_string())
        })
        .collect()
}

/// `const NAME: <type> = <value>;` with a literal or another constant as value
/// (`HeaderName::from_static(..)` unwrapped).
fn constants(sources: &[(PathBuf, String)]) -> HashMap<String, String> {
    let mut raw = HashMap::new();
    for (_, text) in sources {
        let flat: String = text.split_whitespace().collect();
        for piece in flat.split("const").skip(1) {
            let Some((name, rest)) = piece.split_once(':') else {
                continue;
            };
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
                continue;
            }
            let Some((_, value)) = rest.split_once('=') else {
                continue;
            };
            let Some(value) = value.split(';').next() else {
                continue;
            };
            let value = value
                .trim_start_matches("HeaderName::from_static(")
                .trim_end_matches(')');
            raw.insert(name.to_string(), value.to_string());
        }
    }
    let mut resolved = HashMap::new();
    for name in raw.keys() {
        let mut value = raw[name].clone();
        for _ in 0..5 {
            if let Some(lit) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                resolved.insert(name.clone(), lit.to_ascii_lowercase());
                break;
            }
            let last = value.rsplit("::").next().unwrap_or("").to_string();
            match raw.get(&last) {
                Some(next) => value = next.clone(),
                None => break,
            }
        }
    }
    resolved
}

/// The argument of every `headers().get(..)` / `headers().contains_key(..)`,
/// resolved to a header name where it can be.
fn headers_read(sources: &[(PathBuf, String)]) -> BTreeSet<(String, String)> {
    let consts = constants(sources);
    let mut read = BTreeSet::new();
    for (path, text) in sources {
        let flat: String = text.split_whitespace().collect();
        for call in [".headers().get(", ".headers().contains_key("] {
            for piece in flat.split(call).skip(1) {
                let arg = piece
                    .split(')')
                    .next()
                    .unwrap_or("")
                    .trim_start_matches('&');
                let name = if let Some(lit) = arg.strip_prefix('"') {
                    Some(lit.trim_end_matches('"').to_ascii_lowercase())
                } else {
                    let last = arg.rsplit("::").next().unwrap_or("");
                    if last.is_empty() || !last.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                    {
                        None // a variable: its value is a constant checked elsewhere
                    } else if let Some(value) = consts.get(last) {
                        Some(value.clone())
                    } else {
                        // actix's `header::ACCEPT_LANGUAGE` and friends.
                        Some(last.to_ascii_lowercase().replace('_', "-"))
                    }
                };
                if let Some(name) = name {
                    let file = path.strip_prefix(workspace_root()).unwrap_or(path);
                    read.insert((name, file.display().to_string()));
                }
            }
        }
    }
    read
}

#[test]
fn every_header_read_is_allowed() {
    let sources = sources();
    let allowed = |name: &str| {
        ALLOWED_HEADERS.contains(&name)
            || EXPOSED_HEADERS.contains(&name)
            || NOT_FROM_SCRIPTS.contains(&name)
            || NOT_REQUEST_HEADERS.contains(&name)
    };

    let read = headers_read(&sources);
    // The scan finds the reads it must find (else it is not scanning at all).
    for (expected, file) in [
        ("accept-language", "crates/core/src/i18n.rs"),
        (
            "x-om-ext-optimistic-lock-expected-updated-at",
            "crates/core/src/http/lock.rs",
        ),
        ("x-request-id", "crates/core/src/http/request_context.rs"),
    ] {
        assert!(
            read.contains(&(expected.to_string(), file.to_string())),
            "{expected} in {file}: {read:?}"
        );
    }
    for (name, file) in &read {
        assert!(
            allowed(name),
            "{file} reads request header `{name}`, which is not in \
             stoa_core::http::ALLOWED_HEADERS: browsers could not send it cross-origin"
        );
    }

    for (path, text) in &sources {
        for name in x_literals(text) {
            assert!(
                allowed(&name),
                "{} names `{name}`: add it to stoa_core::http::headers (ALLOWED_HEADERS if \
                 the API reads it, EXPOSED_HEADERS if clients read it) or, if it is no \
                 request header, to NOT_REQUEST_HEADERS here",
                path.display()
            );
        }
    }
}

#[test]
fn the_scan_catches_a_header_missing_from_the_list() {
    let source = (
        PathBuf::from("crates/new/src/lib.rs"),
        "const TRACE: &str = \"x-trace-id\";\n\
         fn f(req: &HttpRequest) { req\n  .headers()\n  .get(TRACE); }"
            .to_string(),
    );
    let read = headers_read(std::slice::from_ref(&source));
    assert!(read.contains(&("x-trace-id".into(), "crates/new/src/lib.rs".into())));
    assert!(!ALLOWED_HEADERS.contains(&"x-trace-id"));
    assert_eq!(x_literals(&source.1), ["x-trace-id"]);
}
