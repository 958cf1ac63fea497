//! Calls into the app's own service, in process: the request passes every
//! middleware, the access policy and the handler exactly as one from the
//! network would (the same service path), without a socket.
//!
//! An actix app is not `Send`, so [`InProcess`] runs one on a dedicated
//! thread (its own actix system, built from the same [`AppContext`] as the
//! server's) and hands it requests over a channel. The caller may attach
//! request extensions ([`InProcessRequest::prepare`]): values no client can
//! send, e.g. an already authenticated principal.

use actix_web::HttpMessage;
use actix_web::dev::{Extensions, Service};
use actix_web::http::Method;
use actix_web::test::{TestRequest, init_service};
use actix_web::web::Bytes;
use tokio::sync::{mpsc, oneshot};

use super::{AppContext, app};

/// Largest answer body read back.
pub const MAX_BODY: usize = 1024 * 1024;
/// Requests waiting for the app thread.
const QUEUE: usize = 64;

/// Puts values into a request's extensions before it is served.
pub type Prepare = Box<dyn FnOnce(&mut Extensions) + Send>;

/// One request (`path` includes `/api` and any query string).
pub struct InProcessRequest {
    pub method: Method,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// A JSON body (sent with `content-type: application/json`).
    pub body: Option<Bytes>,
    pub prepare: Option<Prepare>,
}

/// The answer: status and body (at most [`MAX_BODY`] bytes).
#[derive(Clone, Debug)]
pub struct InProcessResponse {
    pub status: u16,
    pub body: Bytes,
}

struct Job {
    request: InProcessRequest,
    answer: oneshot::Sender<Result<InProcessResponse, String>>,
}

/// A handle to the app thread (cheap to clone). The thread ends when the
/// last handle is dropped.
#[derive(Clone)]
pub struct InProcess {
    jobs: mpsc::Sender<Job>,
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcess").finish_non_exhaustive()
    }
}

impl InProcess {
    /// Starts the app thread over `ctx` (the server's context: same
    /// configurators, access policy and settings).
    pub fn start(ctx: AppContext) -> std::io::Result<Self> {
        let (jobs, rx) = mpsc::channel::<Job>(QUEUE);
        std::thread::Builder::new()
            .name("stoa-in-process".into())
            .spawn(move || {
                actix_web::rt::System::new().block_on(serve(ctx, rx));
            })?;
        Ok(Self { jobs })
    }

    /// Serves `request` through the app; `Err` when the app thread is gone
    /// or the answer could not be read.
    pub async fn call(&self, request: InProcessRequest) -> Result<InProcessResponse, String> {
        let (answer, wait) = oneshot::channel();
        self.jobs
            .send(Job { request, answer })
            .await
            .map_err(|_| "the in-process app is not running".to_string())?;
        wait.await
            .map_err(|_| "the in-process app dropped the request".to_string())?
    }
}

async fn serve(ctx: AppContext, mut rx: mpsc::Receiver<Job>) {
    // The server built the same app already, so this cannot fail at run
    // time; if it did, only this thread would end and every call would
    // answer "not running".
    let service = std::rc::Rc::new(init_service(app(&ctx)).await);
    while let Some(job) = rx.recv().await {
        let service = service.clone();
        actix_web::rt::spawn(async move {
            let Job { request, answer } = job;
            let mut builder = TestRequest::default()
                .method(request.method)
                .uri(&request.path)
                .peer_addr(std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
            for (name, value) in request.headers {
                builder = builder.insert_header((name, value));
            }
            if let Some(body) = request.body {
                builder = builder
                    .insert_header(("content-type", "application/json"))
                    .set_payload(body);
            }
            let req = builder.to_request();
            if let Some(prepare) = request.prepare {
                prepare(&mut req.extensions_mut());
            }
            let out = match service.call(req).await {
                Ok(res) => {
                    let status = res.status().as_u16();
                    actix_web::body::to_bytes_limited(res.into_body(), MAX_BODY)
                        .await
                        .map_err(|_| format!("the answer is larger than {MAX_BODY} bytes"))
                        .and_then(|r| r.map_err(|_| "could not read the answer".to_string()))
                        .map(|body| InProcessResponse { status, body })
                }
                Err(err) => {
                    let res = err.error_response();
                    let status = res.status().as_u16();
                    actix_web::body::to_bytes_limited(res.into_body(), MAX_BODY)
                        .await
                        .map_err(|_| "the answer is too large".to_string())
                        .and_then(|r| r.map_err(|_| "could not read the answer".to_string()))
                        .map(|body| InProcessResponse { status, body })
                }
            };
            let _ = answer.send(out);
        });
    }
}
