//! Assembling the actix application from a set of module configurators.
//!
//! The `stoa` server passes every module; stoa-testkit passes the ones a test
//! needs. Both get the same middleware stack and error handling, so tests see
//! exactly what clients see.

use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::{Compress, from_fn};
use actix_web::{App, web};
use utoipa::OpenApi;
use utoipa_actix_web::{AppExt, scope, service_config::ServiceConfig};

use super::access::{AccessPolicy, access_policy_data, enforce_access};
use super::compression::strip_identity_encoding;
use super::errors::{json_error_bodies, not_found};
use super::metrics::Metrics;
use super::origin::{OriginPolicy, origin_guard};
use super::read_cache::{ReadCache, read_cache_data};
use super::request_context::request_context;
use super::sse::SseKeepAlive;
use super::{cors, security_headers};
use crate::config::HttpConfig;
use crate::db::Db;
use crate::extract::BodyLimit;
use crate::system::{ApiDoc, OpenApiJson, SystemInfo};

/// A function that mounts a module's routes under `/api` (e.g. `stoa_devices::configure`).
pub type ApiConfigurator = Arc<dyn Fn(&mut ServiceConfig) + Send + Sync>;

/// What every app instance shares: the database, HTTP settings, metrics, the
/// module configurators and the OpenAPI document they produce.
#[derive(Clone)]
pub struct AppContext {
    pub db: Db,
    pub http: HttpConfig,
    pub metrics: Option<web::Data<Metrics>>,
    configurators: Vec<ApiConfigurator>,
    openapi: web::Data<OpenApiJson>,
    /// Who may call which operation; `None` leaves every check to the handlers.
    access: Option<Arc<dyn AccessPolicy>>,
    /// Kept list answers, served before authentication; `None` = no cache.
    reads: Option<Arc<dyn ReadCache>>,
}

impl AppContext {
    pub fn new(db: Db, http: HttpConfig, configurators: Vec<ApiConfigurator>) -> Self {
        let doc = openapi_doc(&configurators, &http.version);
        let json = doc.to_json().unwrap_or_else(|_| "{}".into());
        Self {
            db,
            http,
            metrics: None,
            configurators,
            openapi: web::Data::new(OpenApiJson(json)),
            access: None,
            reads: None,
        }
    }

    /// Enforces `policy` before every handler and documents it in the
    /// OpenAPI document (`x-required-features` on each operation).
    pub fn with_access(mut self, policy: Arc<dyn AccessPolicy>) -> Self {
        let mut doc = openapi_doc(&self.configurators, &self.http.version);
        policy.document(&mut doc);
        let json = doc.to_json().unwrap_or_else(|_| "{}".into());
        self.openapi = web::Data::new(OpenApiJson(json));
        self.access = Some(policy);
        self
    }

    /// Serves kept list answers from `cache` (see [`super::read_cache`]).
    pub fn with_reads(mut self, cache: Arc<dyn ReadCache>) -> Self {
        self.reads = Some(cache);
        self
    }

    pub fn with_metrics(mut self, metrics: web::Data<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }
}

/// The OpenAPI document of the system endpoints plus every configurator's routes.
pub fn openapi_doc(configurators: &[ApiConfigurator], version: &str) -> utoipa::openapi::OpenApi {
    let (_, mut doc) = App::new()
        .into_utoipa_app()
        .openapi(ApiDoc::openapi())
        .service(mount(configurators))
        .split_for_parts();
    doc.info.version = version.to_string();
    super::doc_rules::apply(doc)
}

fn mount(
    configurators: &[ApiConfigurator],
) -> utoipa_actix_web::scope::Scope<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse,
        Error = actix_web::Error,
        InitError = (),
    > + use<>,
> {
    let mut api = scope("/api").configure(crate::system::configure);
    for configure in configurators {
        let configure = configure.clone();
        api = api.configure(move |cfg| configure(cfg));
    }
    api
}

/// Builds one app instance (actix calls this once per worker thread).
pub fn app(
    ctx: &AppContext,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody + use<>>,
        Error = actix_web::Error,
        InitError = (),
    > + use<>,
> {
    let info = SystemInfo {
        version: ctx.http.version.clone(),
    };
    let mut app = App::new()
        .app_data(web::Data::new(ctx.db.clone()))
        .app_data(web::Data::new(info))
        .app_data(ctx.openapi.clone())
        .app_data(BodyLimit(ctx.http.body_limit))
        // Handlers that read the raw body (`web::Bytes`) get the same limit
        // instead of actix's 256 KiB default.
        .app_data(web::PayloadConfig::new(ctx.http.body_limit))
        .app_data(SseKeepAlive(ctx.http.sse_keep_alive))
        .app_data(web::Data::new(OriginPolicy::new(&ctx.http)));
    if let Some(metrics) = &ctx.metrics {
        app = app.app_data(metrics.clone());
    }
    if let Some(policy) = &ctx.access {
        app = app.app_data(access_policy_data(policy.clone()));
    }
    if let Some(cache) = &ctx.reads {
        app = app.app_data(read_cache_data(cache.clone()));
    }
    let (app, _) = app
        .into_utoipa_app()
        .service(mount(&ctx.configurators))
        .split_for_parts();
    app.default_service(web::to(not_found))
        .wrap(from_fn(enforce_access))
        .wrap(json_error_bodies())
        .wrap(Compress::default())
        .wrap(from_fn(strip_identity_encoding))
        .wrap(cors(&ctx.http.cors_origins))
        .wrap(from_fn(origin_guard))
        .wrap(security_headers())
        .wrap(from_fn(request_context))
}
