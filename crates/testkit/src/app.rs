//! An actix test app built like the server's, over a per-test database.

use std::sync::Arc;
use std::time::Duration;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::HeaderMap;
use actix_web::test::{self, TestRequest};
use actix_web::web::Bytes;
use serde_json::Value;
use stoa_core::config::{DEFAULT_BIND, DEFAULT_BODY_LIMIT, HttpConfig};
use stoa_core::db::Db;
use stoa_core::http::ServiceConfig;
use stoa_core::http::{AccessPolicy, ApiConfigurator, AppContext, Metrics, ReadCache};

use crate::database::TestDb;
use crate::operation::OmOperation;
use crate::streaming::StreamingResponse;

/// Starts describing a test app.
pub fn app() -> TestAppBuilder {
    TestAppBuilder {
        configurators: Vec::new(),
        http: HttpConfig {
            bind: DEFAULT_BIND.parse().expect("default bind parses"),
            metrics_bind: None,
            workers: 1,
            cors_origins: Vec::new(),
            app_url: None,
            body_limit: DEFAULT_BODY_LIMIT,
            version: stoa_core::BUILD_VERSION.to_string(),
            sse_keep_alive: stoa_core::http::sse::DEFAULT_SSE_KEEP_ALIVE,
            trust_proxy_depth: 0,
        },
        unreachable_db: false,
        metrics: false,
        deferred: Vec::new(),
        server: None,
        reads: None,
    }
}

/// Builds a module's configurator once the test database exists.
type Deferred = Box<dyn FnOnce(&Db) -> ApiConfigurator>;

/// Builds a whole server's modules and access policy once the test database exists.
type Server = Box<dyn FnOnce(&Db) -> (Vec<ApiConfigurator>, Option<Arc<dyn AccessPolicy>>)>;

pub struct TestAppBuilder {
    configurators: Vec<ApiConfigurator>,
    http: HttpConfig,
    unreachable_db: bool,
    metrics: bool,
    deferred: Vec<Deferred>,
    server: Option<Server>,
    reads: Option<Reads>,
}

/// Builds the app's kept-answer cache once the test database exists.
type Reads = Box<dyn FnOnce(&Db) -> Arc<dyn ReadCache>>;

impl TestAppBuilder {
    /// Mounts a module's routes (e.g. `stoa_devices::configure`).
    pub fn module(
        mut self,
        configure: impl Fn(&mut ServiceConfig) + Send + Sync + 'static,
    ) -> Self {
        self.configurators.push(Arc::new(configure));
        self
    }

    /// Mounts a module whose state needs the database (e.g. stoa-auth):
    /// `f` runs once the test database is ready.
    pub fn module_with(mut self, f: impl FnOnce(&Db) -> ApiConfigurator + 'static) -> Self {
        self.deferred.push(Box::new(f));
        self
    }

    /// Mounts what a server builds as a whole (e.g. from `stoa_server::modules`):
    /// its modules and the access policy checked before every handler.
    pub fn server_with(
        mut self,
        f: impl FnOnce(&Db) -> (Vec<ApiConfigurator>, Option<Arc<dyn AccessPolicy>>) + 'static,
    ) -> Self {
        self.server = Some(Box::new(f));
        self
    }

    /// Serves kept list answers from the cache `f` builds (e.g.
    /// `stoa_auth::testing::reads`), as the server does.
    pub fn reads_with(mut self, f: impl FnOnce(&Db) -> Arc<dyn ReadCache> + 'static) -> Self {
        self.reads = Some(Box::new(f));
        self
    }

    /// Adjusts HTTP settings (body limit, CORS origins, version).
    pub fn http(mut self, f: impl FnOnce(&mut HttpConfig)) -> Self {
        f(&mut self.http);
        self
    }

    /// Points the app at a database server that is not there (port 1).
    pub fn unreachable_database(mut self) -> Self {
        self.unreachable_db = true;
        self
    }

    /// Records Prometheus metrics (read them with `app.ctx.metrics`).
    pub fn with_metrics(mut self) -> Self {
        self.metrics = true;
        self
    }

    pub async fn start(
        self,
    ) -> TestApp<
        impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
    > {
        let (db, test_db) = if self.unreachable_db {
            let db = Db::from_url(
                "postgres://postgres@127.0.0.1:1/none",
                2,
                Duration::from_millis(500),
            )
            .expect("build a pool");
            (db, None)
        } else {
            let test_db = TestDb::new().await;
            let (size, timeout) = test_pool();
            let db = Db::from_url(test_db.url(), size, timeout).expect("build a pool");
            (db, Some(test_db))
        };
        let mut configurators: Vec<ApiConfigurator> =
            self.deferred.into_iter().map(|f| f(&db)).collect();
        configurators.extend(self.configurators);
        let access = match self.server {
            Some(server) => {
                let (mounted, access) = server(&db);
                configurators.extend(mounted);
                access
            }
            None => None,
        };
        let mut ctx = AppContext::new(db.clone(), self.http, configurators);
        if let Some(access) = access {
            ctx = ctx.with_access(access);
        }
        if let Some(reads) = self.reads {
            ctx = ctx.with_reads(reads(&db));
        }
        if self.metrics {
            let metrics = Metrics::new(db.clone()).expect("create metrics");
            ctx = ctx.with_metrics(actix_web::web::Data::new(metrics));
        }
        let service = test::init_service(stoa_core::http::app(&ctx)).await;
        TestApp {
            service,
            // The app's handle leaves work outside every scope closed, as
            // the server does; the test's own queries (fixtures, checks)
            // bypass the row-level security policies.
            db: db.fixtures(),
            ctx,
            _test_db: test_db,
        }
    }
}

/// A running test app. Fields drop in order, so the pool closes before the
/// database is dropped.
pub struct TestApp<S> {
    service: S,
    pub db: Db,
    pub ctx: AppContext,
    _test_db: Option<TestDb>,
}

impl<S> TestApp<S> {
    /// Runs `statement` as the database's owner, not as the pool's role
    /// (`stoa_app` may not create tables): DDL of test fixtures. Tables
    /// created so are granted to the pool's role by default privileges.
    pub async fn owner_sql(&self, statement: &str) {
        use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
        let url = self
            ._test_db
            .as_ref()
            .map(|db| db.url().to_string())
            .expect("owner_sql needs a database");
        let mut conn = AsyncPgConnection::establish(&url)
            .await
            .unwrap_or_else(|err| panic!("connect as the owner: {err}"));
        diesel::sql_query(statement)
            .execute(&mut conn)
            .await
            .unwrap_or_else(|err| panic!("{statement}: {err}"));
    }
}

/// A fully read response.
#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl TestResponse {
    /// The body as JSON (panics with the body text when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|err| panic!("body is not JSON ({err}): {}", self.text()))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Every `Set-Cookie` line.
    pub fn cookies(&self) -> Vec<String> {
        self.headers
            .get_all("set-cookie")
            .filter_map(|v| v.to_str().ok().map(String::from))
            .collect()
    }

    /// The `x-om-operation` header, parsed (`None` when absent).
    pub fn operation(&self) -> Option<OmOperation> {
        self.header(stoa_core::command::OPERATION_HEADER)
            .map(OmOperation::parse)
    }

    /// The value the response sets for cookie `name`.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.cookies().into_iter().find_map(|c| {
            let (k, v) = c.split(';').next()?.split_once('=')?;
            (k == name).then(|| v.to_string())
        })
    }
}

impl<S, B> TestApp<S>
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    /// `GET path` with a bearer `token`, expecting 200: the statements the
    /// request ran on this thread (authentication included) and its JSON body.
    /// Lists assert their round trips with it.
    pub async fn statements(&self, path: &str, token: &str) -> (u64, Value) {
        let before = stoa_core::db::thread_queries();
        let res = self.send(crate::requests::get(path, token)).await;
        let n = stoa_core::db::thread_queries() - before;
        assert_eq!(res.status, 200, "{path}: {}", res.text());
        (n, res.json())
    }

    /// Sends any request. An error that escapes the middleware stack is rendered
    /// the way actix's HTTP dispatcher renders it for a real client.
    pub async fn send(&self, req: TestRequest) -> TestResponse {
        match test::try_call_service(&self.service, req.to_request()).await {
            Ok(res) => {
                let status = res.status();
                let headers = res.headers().clone();
                let body = test::read_body(res).await;
                TestResponse {
                    status,
                    headers,
                    body,
                }
            }
            Err(err) => {
                let res = err.error_response();
                let status = res.status();
                let headers = res.headers().clone();
                let body = actix_web::body::to_bytes(res.into_body())
                    .await
                    .unwrap_or_default();
                TestResponse {
                    status,
                    headers,
                    body,
                }
            }
        }
    }

    pub async fn get(&self, path: &str) -> TestResponse {
        self.send(TestRequest::get().uri(path)).await
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> TestResponse {
        self.send(TestRequest::post().uri(path).set_json(body))
            .await
    }

    pub async fn put_json(&self, path: &str, body: &Value) -> TestResponse {
        self.send(TestRequest::put().uri(path).set_json(body)).await
    }

    pub async fn patch_json(&self, path: &str, body: &Value) -> TestResponse {
        self.send(TestRequest::patch().uri(path).set_json(body))
            .await
    }

    pub async fn delete(&self, path: &str) -> TestResponse {
        self.send(TestRequest::delete().uri(path)).await
    }

    /// Sends a request and reads its body for at most `timeout`: the whole body
    /// when it ends sooner, else what arrived (an event stream, read with a
    /// deadline); the body is dropped after, as by a client that disconnects.
    pub async fn send_within(&self, req: TestRequest, timeout: std::time::Duration) -> TestResponse
    where
        B: 'static,
    {
        let mut res = self.stream(req).await;
        let body = res.read_for(timeout).await;
        TestResponse {
            status: res.status,
            headers: res.headers.clone(),
            body,
        }
    }

    /// Sends a request and returns as soon as the response head is there; read
    /// the body with [`StreamingResponse::next_frame`] / `next_chunk` while the
    /// handler is still producing it. Dropping the result drops the body, as
    /// actix does when a client disconnects.
    pub async fn stream(&self, req: TestRequest) -> StreamingResponse
    where
        B: 'static,
    {
        match test::try_call_service(&self.service, req.to_request()).await {
            Ok(res) => {
                let status = res.status();
                let headers = res.headers().clone();
                StreamingResponse::new(status, headers, res.into_body().boxed())
            }
            Err(err) => {
                let res = err.error_response();
                let status = res.status();
                let headers = res.headers().clone();
                StreamingResponse::new(status, headers, res.into_body())
            }
        }
    }
}

/// The service type of a [`TestApp`], for test helpers that take `&TestApp<S>`:
/// `async fn create<S: AppService>(app: &TestApp<S>) { ... }`.
pub trait AppService:
    Service<Request, Response = ServiceResponse<Self::Body>, Error = actix_web::Error>
{
    type Body: MessageBody + 'static;
}

impl<S, B> AppService for S
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody + 'static,
{
    type Body = B;
}

/// The test app's pool: 4 connections per pool and a 10 s timeout, or
/// `STOA_TEST_POOL_SIZE` connections and a 2 s timeout. With 1, a request
/// that holds a connection while it asks the same pool for another (a
/// hold-and-wait that deadlocks a loaded server whose every connection is
/// held so) fails its test with 503 instead of passing.
fn test_pool() -> (usize, Duration) {
    match std::env::var("STOA_TEST_POOL_SIZE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        Some(size) => (size, Duration::from_secs(2)),
        None => (4, Duration::from_secs(10)),
    }
}
