//! Server-sent events and downloads: frames arrive while the producer is still
//! working, producers stop when the client goes away, keep-alive comments go
//! out at the configured interval, and neither is gzip-compressed.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::body::BodySize;
use actix_web::test::TestRequest;
use actix_web::web::{self, Bytes};
use actix_web::{HttpResponse, HttpServer};
use stoa_core::http::ServiceConfig;
use stoa_core::http::{Download, Sse, SseEvent};
use stoa_testkit::{SseFrame, StreamEnd, app};
use tokio::sync::{Notify, mpsc};

const WAIT: Duration = Duration::from_secs(5);

/// What the producers report to the test.
struct Probe {
    events: mpsc::UnboundedSender<&'static str>,
    /// Released by the test when it has read the first frame.
    gate: Notify,
}

impl Probe {
    fn new() -> (Arc<Self>, mpsc::UnboundedReceiver<&'static str>) {
        let (events, rx) = mpsc::unbounded_channel();
        let probe = Arc::new(Self {
            events,
            gate: Notify::new(),
        });
        (probe, rx)
    }

    fn report(&self, what: &'static str) {
        let _ = self.events.send(what);
    }
}

/// Reports `stopped` when the producer's future is dropped (aborted or done).
struct OnDrop(Arc<Probe>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.report("stopped");
    }
}

/// Frame 1, then (once the test let it) frame 2, then one frame every 10 ms
/// until aborted.
async fn spawned(probe: web::Data<Arc<Probe>>) -> Sse {
    let probe = probe.get_ref().clone();
    Sse::spawn(move |tx| async move {
        let _guard = OnDrop(probe.clone());
        let _ = tx.send(SseEvent::data("1").event("tick").id("1")).await;
        probe.report("sent 1");
        probe.gate.notified().await;
        let _ = tx
            .send(SseEvent::json(&serde_json::json!({"n": 2})).unwrap())
            .await;
        probe.report("sent 2");
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
}

/// A producer on another task that is not aborted: it must notice the
/// disconnect itself, through `send` failing.
async fn channel(probe: web::Data<Arc<Probe>>) -> Sse {
    let probe = probe.get_ref().clone();
    let (tx, sse) = Sse::channel();
    tokio::spawn(async move {
        let mut n = 0u32;
        loop {
            n += 1;
            if tx.send(SseEvent::data(n.to_string())).await.is_err() {
                probe.report("disconnected");
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    sse
}

/// Sends nothing until the client leaves (reported through `closed`).
async fn idle(probe: web::Data<Arc<Probe>>) -> Sse {
    let probe = probe.get_ref().clone();
    let (tx, sse) = Sse::channel();
    tokio::spawn(async move {
        tx.closed().await;
        probe.report("closed");
    });
    sse
}

async fn idle_fast() -> Sse {
    let (tx, sse) = Sse::channel();
    tokio::spawn(async move { tx.closed().await });
    sse.keep_alive(Duration::from_millis(30))
}

fn compressible() -> Vec<u8> {
    b"stoa stoa stoa stoa ".repeat(1000)
}

async fn file_bytes() -> Download {
    Download::bytes(
        "réport \"1\".txt",
        "text/plain; charset=utf-8",
        compressible(),
    )
}

async fn file_stream() -> Download {
    let chunks = (0..4).map(|_| Ok::<_, std::io::Error>(Bytes::from(compressible())));
    Download::sized_stream(
        "data.bin",
        "application/octet-stream",
        4 * compressible().len() as u64,
        futures_util::stream::iter(chunks),
    )
    .inline()
}

async fn json_big() -> HttpResponse {
    HttpResponse::Ok().json(String::from_utf8(compressible()).unwrap())
}

fn routes(probe: Arc<Probe>) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    move |cfg| {
        cfg.app_data(web::Data::new(probe.clone()))
            .route("/test/sse/spawned", web::get().to(spawned))
            .route("/test/sse/channel", web::get().to(channel))
            .route("/test/sse/idle", web::get().to(idle))
            .route("/test/sse/idle-fast", web::get().to(idle_fast))
            .route("/test/file", web::get().to(file_bytes))
            .route("/test/file/stream", web::get().to(file_stream))
            .route("/test/json", web::get().to(json_big));
    }
}

async fn expect(rx: &mut mpsc::UnboundedReceiver<&'static str>, what: &str) {
    match tokio::time::timeout(WAIT, rx.recv()).await {
        Ok(Some(got)) => assert_eq!(got, what),
        other => panic!("expected `{what}`, got {other:?}"),
    }
}

fn gzip(req: TestRequest) -> TestRequest {
    req.insert_header(("accept-encoding", "gzip"))
}

#[actix_web::test]
async fn frames_arrive_while_the_producer_works_and_it_stops_on_disconnect() {
    let (probe, mut reports) = Probe::new();
    let app = app().module(routes(probe.clone())).start().await;
    let mut res = app
        .stream(gzip(TestRequest::get().uri("/api/test/sse/spawned")))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), Some("text/event-stream"));
    assert_eq!(res.header("cache-control"), Some("no-cache"));
    assert_eq!(res.header("content-encoding"), None, "never compressed");

    let SseFrame::Event(first) = res.next_frame(WAIT).await.unwrap() else {
        panic!("expected an event");
    };
    assert_eq!(first.event.as_deref(), Some("tick"));
    assert_eq!(first.id.as_deref(), Some("1"));
    assert_eq!(first.data, "1");
    // The producer is parked before frame 2 until we let it go: frame 1 came
    // while the handler was still producing.
    expect(&mut reports, "sent 1").await;
    assert!(reports.try_recv().is_err(), "nothing more was produced yet");
    assert_eq!(
        res.next_frame(Duration::from_millis(50)).await,
        Err(StreamEnd::TimedOut)
    );

    probe.gate.notify_one();
    let second = res.next_event(WAIT).await.unwrap();
    assert_eq!(second.json(), serde_json::json!({"n": 2}));
    expect(&mut reports, "sent 2").await;

    // The client goes away: the producer (in its endless loop) is stopped.
    drop(res);
    expect(&mut reports, "stopped").await;
}

#[actix_web::test]
async fn a_producer_of_its_own_sees_the_disconnect() {
    let (probe, mut reports) = Probe::new();
    let app = app().module(routes(probe)).start().await;

    let mut res = app
        .stream(TestRequest::get().uri("/api/test/sse/channel"))
        .await;
    assert_eq!(res.next_event(WAIT).await.unwrap().data, "1");
    assert_eq!(res.next_event(WAIT).await.unwrap().data, "2");
    drop(res);
    expect(&mut reports, "disconnected").await;

    let res = app
        .stream(TestRequest::get().uri("/api/test/sse/idle"))
        .await;
    assert_eq!(res.status, 200);
    drop(res);
    expect(&mut reports, "closed").await;
}

#[actix_web::test]
async fn idle_streams_send_keep_alive_comments_at_the_configured_interval() {
    let (probe, _reports) = Probe::new();
    let app = app()
        .module(routes(probe))
        .http(|h| h.sse_keep_alive = Duration::from_millis(100))
        .start()
        .await;
    let mut res = app
        .stream(TestRequest::get().uri("/api/test/sse/idle"))
        .await;
    let start = Instant::now();
    for _ in 0..2 {
        assert_eq!(
            res.next_frame(WAIT).await,
            Ok(SseFrame::Comment("keep-alive".into()))
        );
    }
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_millis(180), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");

    // A response may choose its own interval.
    let mut res = app
        .stream(TestRequest::get().uri("/api/test/sse/idle-fast"))
        .await;
    let start = Instant::now();
    assert_eq!(
        res.next_frame(WAIT).await,
        Ok(SseFrame::Comment("keep-alive".into()))
    );
    assert!(start.elapsed() < Duration::from_millis(100) + Duration::from_millis(900));
    assert!(start.elapsed() >= Duration::from_millis(25));
}

#[actix_web::test]
async fn downloads_are_not_compressed_but_json_is() {
    let (probe, _reports) = Probe::new();
    let app = app().module(routes(probe)).start().await;

    // The control: the same bytes as JSON are gzip-compressed.
    let res = app
        .send(gzip(TestRequest::get().uri("/api/test/json")))
        .await;
    assert_eq!(res.header("content-encoding"), Some("gzip"));
    assert!(res.body.len() < compressible().len() / 4);

    let mut res = app
        .stream(gzip(TestRequest::get().uri("/api/test/file")))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-encoding"), None);
    assert_eq!(
        res.body_size(),
        BodySize::Sized(compressible().len() as u64)
    );
    assert_eq!(
        res.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(
        res.header("content-disposition"),
        Some("attachment; filename=\"r_port _1_.txt\"; filename*=UTF-8''r%C3%A9port%20_1_.txt")
    );
    assert_eq!(res.read_to_end(WAIT).await, compressible());

    let mut res = app
        .stream(gzip(TestRequest::get().uri("/api/test/file/stream")))
        .await;
    assert_eq!(res.header("content-encoding"), None);
    assert_eq!(
        res.header("content-disposition"),
        Some("inline; filename=\"data.bin\"")
    );
    assert_eq!(
        res.body_size(),
        BodySize::Sized(4 * compressible().len() as u64)
    );
    let first = res.next_chunk(WAIT).await.unwrap();
    assert_eq!(first, compressible(), "chunks pass through as produced");
    let rest = res.read_to_end(WAIT).await;
    assert_eq!(rest.len(), 3 * compressible().len());
}

/// Over a real socket: the server notices a client that closed its connection
/// (the next keep-alive write fails) and the producer learns of it.
#[actix_web::test]
async fn a_real_client_disconnect_reaches_the_producer() {
    let (probe, mut reports) = Probe::new();
    let test_app = app()
        .module(routes(probe))
        .http(|h| h.sse_keep_alive = Duration::from_millis(50))
        .start()
        .await;
    let ctx = test_app.ctx.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = HttpServer::new(move || stoa_core::http::app(&ctx))
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);

    // A blocking client on its own thread: read the head and the first
    // event, then close the connection.
    let client = std::thread::spawn(move || {
        let mut socket = std::net::TcpStream::connect(addr).unwrap();
        socket.set_read_timeout(Some(WAIT)).unwrap();
        socket
            .write_all(
                b"GET /api/test/sse/idle HTTP/1.1\r\nHost: localhost\r\n\
                  Accept-Encoding: gzip\r\n\r\n",
            )
            .unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        let deadline = Instant::now() + WAIT;
        while !String::from_utf8_lossy(&seen).contains(": keep-alive") && Instant::now() < deadline
        {
            match socket.read(&mut buf) {
                Ok(n) if n > 0 => seen.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    let seen = tokio::task::spawn_blocking(move || client.join().unwrap())
        .await
        .unwrap();
    let head = seen.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{seen}");
    assert!(head.contains("content-type: text/event-stream"), "{seen}");
    assert!(!head.contains("content-encoding"), "{seen}");
    assert!(seen.contains(": keep-alive\n\n"), "{seen}");

    expect(&mut reports, "closed").await;
    handle.stop(false).await;
}

/// `send_within` reads an endless stream until its deadline and gives back
/// what arrived (the authorization matrix reads every answer this way).
#[actix_web::test]
async fn an_endless_stream_is_read_until_a_deadline() {
    let (probe, _reports) = Probe::new();
    let app = app().module(routes(probe)).start().await;
    let start = Instant::now();
    let res = app
        .send_within(
            TestRequest::get().uri("/api/test/sse/idle-fast"),
            Duration::from_millis(200),
        )
        .await;
    assert_eq!(res.status, 200);
    assert!(res.text().contains(": keep-alive"), "{}", res.text());
    assert!(start.elapsed() < Duration::from_secs(3));
    // A body that ends is read whole.
    let res = app
        .send_within(
            TestRequest::get().uri("/api/test/json"),
            Duration::from_secs(5),
        )
        .await;
    assert_eq!(res.body.len(), app.get("/api/test/json").await.body.len());
}
