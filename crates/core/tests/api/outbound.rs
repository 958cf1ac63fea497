//! The outbound client: address guard (literal IPs, names resolving to
//! loopback, redirects), allowlist, timeouts and the response bound, against
//! throwaway HTTP servers on loopback addresses.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use stoa_core::outbound::{Cidr, Outbound, OutboundConfig, OutboundError};

fn config(allow: &[&str]) -> OutboundConfig {
    OutboundConfig {
        connect_timeout: Duration::from_millis(500),
        timeout: Duration::from_millis(400),
        max_response_bytes: 1000,
        max_redirects: 3,
        allow: allow.iter().map(|c| c.parse::<Cidr>().unwrap()).collect(),
    }
}

fn outbound(allow: &[&str]) -> Outbound {
    Outbound::new(&config(allow)).unwrap()
}

/// A one-thread HTTP server on `ip` answering every request with `respond`
/// (given the request line); counts the requests it served.
fn serve(
    ip: &str,
    respond: impl Fn(&str) -> Vec<u8> + Send + 'static,
) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind((ip, 0)).unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let request = read_head(&mut stream);
            counter.fetch_add(1, Ordering::SeqCst);
            let line = request.lines().next().unwrap_or_default().to_string();
            let _ = stream.write_all(&respond(&line));
        }
    });
    (addr, hits)
}

fn read_head(stream: &mut TcpStream) -> String {
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => buf.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

fn ok(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn redirect(location: String) -> Vec<u8> {
    format!(
        "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )
    .into_bytes()
}

fn assert_blocked(result: Result<stoa_core::outbound::OutboundResponse, OutboundError>) {
    match result {
        Err(OutboundError::Blocked(blocked)) => assert!(blocked.addr.is_loopback(), "{blocked}"),
        other => panic!("expected a blocked address, got {other:?}"),
    }
}

async fn fetch(
    client: &stoa_core::outbound::OutboundClient,
    url: &str,
) -> Result<stoa_core::outbound::OutboundResponse, OutboundError> {
    client.get(url)?.send().await
}

#[actix_web::test]
async fn guarded_client_refuses_a_loopback_ip_unless_allowed() {
    let (addr, hits) = serve("127.0.0.1", |_| ok("secret"));
    let url = format!("http://{addr}/internal");

    assert_blocked(fetch(outbound(&[]).guarded(), &url).await);
    let v6 = format!("http://[::ffff:127.0.0.1]:{}/internal", addr.port());
    assert_blocked(fetch(outbound(&[]).guarded(), &v6).await);
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing reached the server");

    // The allowlist opens it; the trusted client never checks.
    let res = fetch(outbound(&["127.0.0.0/8"]).guarded(), &url)
        .await
        .unwrap();
    assert_eq!((res.status, res.text().as_str()), (200, "secret"));
    let res = fetch(outbound(&[]).trusted(), &url).await.unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[actix_web::test]
async fn guarded_client_refuses_a_name_resolving_to_loopback() {
    let (addr, hits) = serve("127.0.0.1", |_| ok("secret"));
    let url = format!("http://localhost:{}/internal", addr.port());

    assert_blocked(fetch(outbound(&[]).guarded(), &url).await);
    assert_eq!(hits.load(Ordering::SeqCst), 0);

    let res = fetch(outbound(&["127.0.0.1"]).guarded(), &url)
        .await
        .unwrap();
    assert_eq!(res.text(), "secret");
}

#[actix_web::test]
async fn redirects_to_loopback_are_refused() {
    let (inner, inner_hits) = serve("127.0.0.1", |_| ok("secret"));
    // The first hop is on an allowlisted address; it redirects inwards.
    let (front, _) = serve("127.0.0.2", move |line| {
        if line.contains("/by-ip") {
            redirect(format!("http://{inner}/secret"))
        } else {
            redirect(format!("http://localhost:{}/secret", inner.port()))
        }
    });
    let client = outbound(&["127.0.0.2/32"]);
    assert_blocked(fetch(client.guarded(), &format!("http://{front}/by-ip")).await);
    assert_blocked(fetch(client.guarded(), &format!("http://{front}/by-name")).await);
    assert_eq!(
        inner_hits.load(Ordering::SeqCst),
        0,
        "the redirect was not followed"
    );

    // Control: with the target allowed too, the same redirect is followed.
    let res = fetch(
        outbound(&["127.0.0.2/32", "127.0.0.1/32"]).guarded(),
        &format!("http://{front}/by-ip"),
    )
    .await
    .unwrap();
    assert_eq!((res.status, res.text().as_str()), (200, "secret"));
    assert_eq!(res.url.port(), Some(inner.port()));
}

#[actix_web::test]
async fn redirect_loops_stop() {
    let (addr, _) = serve("127.0.0.1", |line| {
        let n: u32 = line
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.trim_start_matches('/').parse().ok())
            .unwrap_or(0);
        redirect(format!("/{}", n + 1))
    });
    let err = fetch(outbound(&[]).trusted(), &format!("http://{addr}/0"))
        .await
        .unwrap_err();
    assert!(matches!(err, OutboundError::TooManyRedirects), "{err:?}");
}

#[actix_web::test]
async fn a_server_that_never_answers_times_out() {
    // Accepts connections and keeps them open without a byte of answer.
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let started = Instant::now();
    let err = fetch(outbound(&[]).trusted(), &format!("http://{addr}/"))
        .await
        .unwrap_err();
    assert!(matches!(err, OutboundError::Timeout), "{err:?}");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(350) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
}

#[actix_web::test]
async fn response_size_is_bounded() {
    let big = "x".repeat(1500);
    let declared = ok(&big);
    let (declared_addr, _) = serve("127.0.0.1", move |_| declared.clone());
    // Chunked, without a length: the bound applies while reading.
    let mut chunked =
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n".to_vec();
    for _ in 0..6 {
        chunked.extend_from_slice(b"fa\r\n");
        chunked.extend_from_slice(&[b'y'; 250]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let (chunked_addr, _) = serve("127.0.0.1", move |_| chunked.clone());
    let client = outbound(&[]);

    for addr in [declared_addr, chunked_addr] {
        let err = fetch(client.trusted(), &format!("http://{addr}/"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, OutboundError::TooLarge { limit: 1000 }),
            "{addr}: {err:?}"
        );
    }
    // Within the bound it is read whole; a per-request bound can lower it.
    let (small, _) = serve("127.0.0.1", |_| ok(&"z".repeat(900)));
    let res = fetch(client.trusted(), &format!("http://{small}/"))
        .await
        .unwrap();
    assert_eq!(res.body.len(), 900);
    let err = client
        .trusted()
        .get(&format!("http://{small}/"))
        .unwrap()
        .max_response_bytes(100)
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboundError::TooLarge { limit: 100 }),
        "{err:?}"
    );
}

#[actix_web::test]
async fn only_http_urls_are_accepted() {
    let client = outbound(&[]);
    for url in [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "not a url",
        "http://",
    ] {
        let err = client.guarded().get(url).unwrap_err();
        assert!(
            matches!(err, OutboundError::InvalidUrl(_)),
            "{url}: {err:?}"
        );
    }
    // Private ranges other than loopback are refused before sending too.
    for url in [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data",
        "http://192.168.1.1/",
        "http://[fd00::1]/",
        "http://0.0.0.0/",
    ] {
        let err = client.guarded().get(url).unwrap_err();
        assert!(matches!(err, OutboundError::Blocked(_)), "{url}: {err:?}");
    }
}
