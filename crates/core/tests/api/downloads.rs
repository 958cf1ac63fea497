//! `Download` through the whole middleware stack: ETag and `If-None-Match`
//! (304), byte ranges (206, 416, `If-Range`), the sandboxing policy, and a
//! ranged stream that opens only the part asked for.

use std::sync::Arc;
use std::sync::Mutex;

use actix_web::test::TestRequest;
use actix_web::web::{self, Bytes};
use stoa_core::http::ServiceConfig;
use stoa_core::http::{Download, SANDBOX_CSP};
use stoa_testkit::app;

const CONTENT: &[u8] = b"0123456789abcdefghij";

async fn tagged() -> Download {
    Download::bytes("notes.txt", "text/plain", CONTENT)
        .etag("v1-abc")
        .cache_control("private, no-cache")
}

async fn untagged() -> Download {
    Download::bytes("notes.txt", "text/plain", CONTENT)
}

async fn page() -> Download {
    Download::bytes("page.html", "text/html", "<script>alert(1)</script>")
        .inline()
        .sandboxed()
}

async fn streamed() -> Download {
    let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(CONTENT))]);
    Download::stream("s.txt", "text/plain", chunks).etag("s1")
}

/// The ranges the store was asked to open.
type Opened = Arc<Mutex<Vec<(u64, u64)>>>;

async fn ranged(opened: web::Data<Opened>) -> Download {
    let opened = opened.get_ref().clone();
    Download::ranged(
        "r.bin",
        "application/octet-stream",
        CONTENT.len() as u64,
        move |range| {
            if let Ok(mut log) = opened.lock() {
                log.push((*range.start(), *range.end()));
            }
            let part =
                Bytes::from_static(&CONTENT[*range.start() as usize..=*range.end() as usize]);
            futures_util::stream::iter([Ok::<_, std::io::Error>(part)])
        },
    )
    .etag("r1")
}

fn routes(opened: Opened) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    move |cfg| {
        cfg.app_data(web::Data::new(opened.clone()))
            .route("/test/dl/tagged", web::get().to(tagged))
            .route("/test/dl/untagged", web::get().to(untagged))
            .route("/test/dl/page", web::get().to(page))
            .route("/test/dl/streamed", web::get().to(streamed))
            .route("/test/dl/ranged", web::get().to(ranged));
    }
}

fn get(path: &str, headers: &[(&'static str, &str)]) -> TestRequest {
    let mut req = TestRequest::get().uri(path);
    for (name, value) in headers {
        req = req.insert_header((*name, *value));
    }
    req
}

fn header<'a>(res: &'a stoa_testkit::TestResponse, name: &str) -> Option<&'a str> {
    res.headers.get(name).and_then(|v| v.to_str().ok())
}

#[actix_web::test]
async fn an_etag_the_client_holds_answers_304_without_a_body() {
    let app = app().module(routes(Opened::default())).start().await;
    let path = "/api/test/dl/tagged";
    let res = app.send(get(path, &[])).await;
    assert_eq!(res.status, 200);
    assert_eq!(header(&res, "etag"), Some("\"v1-abc\""));
    assert_eq!(header(&res, "accept-ranges"), Some("bytes"));
    assert_eq!(&res.body[..], CONTENT);

    for held in ["\"v1-abc\"", "W/\"v1-abc\"", "\"old\", \"v1-abc\"", "*"] {
        let res = app.send(get(path, &[("if-none-match", held)])).await;
        assert_eq!(res.status, 304, "{held}");
        assert!(res.body.is_empty(), "{held}");
        assert_eq!(header(&res, "etag"), Some("\"v1-abc\""));
        assert_eq!(header(&res, "cache-control"), Some("private, no-cache"));
    }
    // Another version, or no ETag on the file: the whole file.
    let res = app.send(get(path, &[("if-none-match", "\"v0\"")])).await;
    assert_eq!((res.status.as_u16(), res.body.len()), (200, CONTENT.len()));
    let res = app
        .send(get("/api/test/dl/untagged", &[("if-none-match", "*")]))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(header(&res, "etag"), None);
}

#[actix_web::test]
async fn byte_ranges_answer_206_and_unsatisfiable_ones_416() {
    let app = app().module(routes(Opened::default())).start().await;
    let path = "/api/test/dl/tagged";
    for (range, body, content_range) in [
        ("bytes=0-3", &b"0123"[..], "bytes 0-3/20"),
        ("bytes=18-", b"ij", "bytes 18-19/20"),
        ("bytes=-3", b"hij", "bytes 17-19/20"),
        ("bytes=15-99", b"fghij", "bytes 15-19/20"),
    ] {
        let res = app.send(get(path, &[("range", range)])).await;
        assert_eq!(res.status, 206, "{range}");
        assert_eq!(&res.body[..], body, "{range}");
        assert_eq!(
            header(&res, "content-range"),
            Some(content_range),
            "{range}"
        );
        assert!(header(&res, "content-disposition").is_some());
    }
    for range in ["bytes=20-", "bytes=-0", "bytes=100-200"] {
        let res = app.send(get(path, &[("range", range)])).await;
        assert_eq!(res.status, 416, "{range}");
        assert_eq!(header(&res, "content-range"), Some("bytes */20"), "{range}");
        assert_eq!(res.json()["error"], "Range not satisfiable");
    }
    // Malformed or several ranges: the whole file, as the RFC allows.
    for range in ["bytes=5-2", "lines=1-2", "bytes=0-1,4-5"] {
        let res = app.send(get(path, &[("range", range)])).await;
        assert_eq!((res.status.as_u16(), res.body.len()), (200, 20), "{range}");
    }
    // If-Range: the part only while the file is still the version named.
    let res = app
        .send(get(
            path,
            &[("range", "bytes=0-1"), ("if-range", "\"v1-abc\"")],
        ))
        .await;
    assert_eq!((res.status.as_u16(), &res.body[..]), (206, &b"01"[..]));
    let res = app
        .send(get(path, &[("range", "bytes=0-1"), ("if-range", "\"v0\"")]))
        .await;
    assert_eq!((res.status.as_u16(), res.body.len()), (200, 20));
    // A stream read once from the start cannot send a part: whole file.
    let res = app
        .send(get("/api/test/dl/streamed", &[("range", "bytes=0-1")]))
        .await;
    assert_eq!((res.status.as_u16(), res.body.len()), (200, 20));
    assert_eq!(header(&res, "accept-ranges"), None);
}

#[actix_web::test]
async fn a_ranged_source_opens_only_the_part_asked_for() {
    let opened = Opened::default();
    let app = app().module(routes(opened.clone())).start().await;
    let path = "/api/test/dl/ranged";
    let res = app.send(get(path, &[("range", "bytes=4-7")])).await;
    assert_eq!((res.status.as_u16(), &res.body[..]), (206, &b"4567"[..]));
    let res = app.send(get(path, &[])).await;
    assert_eq!((res.status.as_u16(), &res.body[..]), (200, CONTENT));
    // A 304 and a 416 open nothing.
    let res = app.send(get(path, &[("if-none-match", "\"r1\"")])).await;
    assert_eq!(res.status, 304);
    let res = app.send(get(path, &[("range", "bytes=30-")])).await;
    assert_eq!(res.status, 416);
    assert_eq!(*opened.lock().unwrap(), vec![(4, 7), (0, 19)]);
}

#[actix_web::test]
async fn a_sandboxed_file_carries_the_policy_and_others_do_not() {
    let app = app().module(routes(Opened::default())).start().await;
    let res = app
        .send(get("/api/test/dl/page", &[("accept-encoding", "gzip")]))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(header(&res, "content-security-policy"), Some(SANDBOX_CSP));
    assert!(SANDBOX_CSP.starts_with("sandbox;") && SANDBOX_CSP.contains("default-src 'none'"));
    assert_eq!(header(&res, "content-encoding"), None, "never compressed");
    assert!(
        header(&res, "content-disposition")
            .unwrap()
            .starts_with("inline")
    );
    let res = app.send(get("/api/test/dl/untagged", &[])).await;
    assert_eq!(header(&res, "content-security-policy"), None);
}
