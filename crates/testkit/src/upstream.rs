//! A fake upstream HTTP server for tests of outbound calls (webhooks, model
//! providers): scripted answers, streamed bodies, servers that hang.
//!
//! ```ignore
//! let upstream = FakeUpstream::scripted([
//!     Answer::json(200, &json!({"ok": true})),
//!     Answer::stream(200, [(Duration::ZERO, "data: 1\n\n"), (Duration::from_millis(50), "data: 2\n\n")]),
//!     Answer::Hang,
//! ]);
//! client.post(&upstream.url("/hook"))?.json(&body).send().await?;
//! assert_eq!(upstream.requests()[0].header("webhook-id"), Some("evt_1"));
//! ```
//!
//! It listens on a loopback address (`127.0.0.1` unless [`FakeUpstream::on`]
//! names another, e.g. `127.0.0.2` for a second host) and runs on a thread
//! and runtime of its own, so it serves whatever runtime (or blocking code)
//! the test uses. Every request is recorded (method, path, headers, body)
//! before it is answered; each connection serves one request and closes.
//! Dropping the server stops it and releases hanging connections.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// One request as the upstream received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent (`/hook?x=1`).
    pub path: String,
    /// Header names lower-cased, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// How the upstream answers one request.
#[derive(Clone, Debug)]
pub enum Answer {
    /// A whole response with `Content-Length`.
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A chunked response: the head at once, then each chunk after its delay.
    Stream {
        status: u16,
        headers: Vec<(String, String)>,
        chunks: Vec<(Duration, Vec<u8>)>,
    },
    /// Reads the request and never answers (a first-byte timeout).
    Hang,
    /// Sends a chunked head and this much body, then stalls (an idle timeout).
    StallAfter { status: u16, body: Vec<u8> },
    /// These exact bytes, then close (malformed answers).
    Raw(Vec<u8>),
    /// The answer, after a pause before its first byte (a model thinking).
    Delayed(Duration, Box<Answer>),
}

impl Answer {
    pub fn text(status: u16, body: &str) -> Self {
        Self::Respond {
            status,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn json(status: u16, body: &serde_json::Value) -> Self {
        Self::Respond {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    /// An empty answer with `status`.
    pub fn status(status: u16) -> Self {
        Self::Respond {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// `302 Found` to `location`.
    pub fn redirect(location: impl Into<String>) -> Self {
        Self::Respond {
            status: 302,
            headers: vec![("location".into(), location.into())],
            body: Vec::new(),
        }
    }

    /// A chunked answer whose chunks come after the given delays.
    pub fn stream<B: AsRef<[u8]>>(
        status: u16,
        chunks: impl IntoIterator<Item = (Duration, B)>,
    ) -> Self {
        Self::Stream {
            status,
            headers: Vec::new(),
            chunks: chunks
                .into_iter()
                .map(|(d, b)| (d, b.as_ref().to_vec()))
                .collect(),
        }
    }

    /// This answer after `delay` of silence.
    pub fn after(self, delay: Duration) -> Self {
        Self::Delayed(delay, Box::new(self))
    }

    /// The same answer with one more header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Self::Respond { headers, .. } | Self::Stream { headers, .. } = &mut self {
            headers.push((name.to_ascii_lowercase(), value.to_string()));
        }
        self
    }
}

type Handler = dyn Fn(&Recorded) -> Answer + Send + Sync;

/// A running fake upstream; stops when dropped.
pub struct FakeUpstream {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    hits: Arc<AtomicUsize>,
    stop: watch::Sender<bool>,
}

impl FakeUpstream {
    /// Answers every request with `handler(request)` on `127.0.0.1`.
    pub fn start(handler: impl Fn(&Recorded) -> Answer + Send + Sync + 'static) -> Self {
        Self::on("127.0.0.1", handler)
    }

    /// Answers the requests with `answers` in order; the last one repeats.
    pub fn scripted(answers: impl IntoIterator<Item = Answer>) -> Self {
        let answers: Vec<Answer> = answers.into_iter().collect();
        let next = AtomicUsize::new(0);
        Self::start(move |_| {
            let n = next.fetch_add(1, Ordering::SeqCst);
            answers
                .get(n.min(answers.len().saturating_sub(1)))
                .cloned()
                .unwrap_or(Answer::status(500))
        })
    }

    /// Answers with `handler` on `ip` (any loopback address: `127.0.0.2`).
    pub fn on(ip: &str, handler: impl Fn(&Recorded) -> Answer + Send + Sync + 'static) -> Self {
        let listener = std::net::TcpListener::bind((ip, 0)).expect("bind the fake upstream");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let addr = listener.local_addr().expect("the upstream's address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let hits = Arc::new(AtomicUsize::new(0));
        let (stop, stopped) = watch::channel(false);
        let handler: Arc<Handler> = Arc::new(handler);
        let (log, count) = (requests.clone(), hits.clone());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the upstream's runtime");
            runtime.block_on(serve(listener, handler, log, count, stopped));
        });
        Self {
            addr,
            requests,
            hits,
            stop,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<addr><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// How many requests reached the server.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

async fn serve(
    listener: std::net::TcpListener,
    handler: Arc<Handler>,
    log: Arc<Mutex<Vec<Recorded>>>,
    hits: Arc<AtomicUsize>,
    mut stopped: watch::Receiver<bool>,
) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    loop {
        tokio::select! {
            _ = stopped.changed() => return,
            accepted = listener.accept() => {
                let Ok((socket, _)) = accepted else { continue };
                let (handler, log, hits) = (handler.clone(), log.clone(), hits.clone());
                let mut stop = stopped.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        _ = stop.changed() => {}
                        _ = connection(socket, handler, log, hits) => {}
                    }
                });
            }
        }
    }
}

async fn connection(
    mut socket: TcpStream,
    handler: Arc<Handler>,
    log: Arc<Mutex<Vec<Recorded>>>,
    hits: Arc<AtomicUsize>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    hits.fetch_add(1, Ordering::SeqCst);
    let answer = handler(&request);
    if let Ok(mut log) = log.lock() {
        log.push(request);
    }
    let _ = answer_with(&mut socket, answer).await;
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

fn head(status: u16, headers: &[(String, String)], framing: &str) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} Fake\r\nconnection: close\r\n{framing}\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.into_bytes()
}

fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

async fn answer_with(socket: &mut TcpStream, mut answer: Answer) -> std::io::Result<()> {
    while let Answer::Delayed(delay, inner) = answer {
        tokio::time::sleep(delay).await;
        answer = *inner;
    }
    match answer {
        Answer::Respond {
            status,
            headers,
            body,
        } => {
            let framing = format!("content-length: {}", body.len());
            socket.write_all(&head(status, &headers, &framing)).await?;
            socket.write_all(&body).await?;
        }
        Answer::Stream {
            status,
            headers,
            chunks,
        } => {
            socket
                .write_all(&head(status, &headers, "transfer-encoding: chunked"))
                .await?;
            socket.flush().await?;
            for (delay, data) in chunks {
                tokio::time::sleep(delay).await;
                if !data.is_empty() {
                    socket.write_all(&chunk(&data)).await?;
                    socket.flush().await?;
                }
            }
            socket.write_all(b"0\r\n\r\n").await?;
        }
        Answer::Hang => std::future::pending::<()>().await,
        Answer::StallAfter { status, body } => {
            socket
                .write_all(&head(status, &[], "transfer-encoding: chunked"))
                .await?;
            if !body.is_empty() {
                socket.write_all(&chunk(&body)).await?;
            }
            socket.flush().await?;
            std::future::pending::<()>().await;
        }
        Answer::Raw(bytes) => socket.write_all(&bytes).await?,
        Answer::Delayed(..) => {}
    }
    socket.flush().await?;
    socket.shutdown().await
}
