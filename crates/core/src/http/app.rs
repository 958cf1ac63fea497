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
use utoipa_actix_web::{AppExt, scope};

use super::access::{AccessPolicy, access_policy_data, enforce_access};
use super::compression::strip_identity_encoding;
use super::errors::{json_error_bodies, not_found};
use super::metrics::Metrics;
use super::origin::{OriginPolicy, origin_guard};
use super::read_cache::{ReadCache, read_cache_data};
use super::request_context::request_context;
use super::routes::ServiceConfig;
use super::sse::SseKeepAlive;
use super::{cors, security_headers};
use crate::config::HttpConfig;
use crate::db::Db;
use crate::extract::BodyLimit;
use crate::system::{ApiDoc, OpenApiJson, SystemInfo};

/// A function that mounts a module's routes under `/api` (e.g. `stoa_devices::configure`).
pub type ApiConfigurator = Arc<dyn Fn(&mut ServiceConfig<'_, '_>) + Send + Sync>;

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
        let openapi = web::Data::new(document(configurators.clone(), &http.version, None));
        Self {
            db,
            http,
            metrics: None,
            configurators,
            openapi,
            access: None,
            reads: None,
        }
    }

    /// Enforces `policy` before every handler and documents it in the
    /// OpenAPI document (`x-required-features` on each operation).
    pub fn with_access(mut self, policy: Arc<dyn AccessPolicy>) -> Self {
        self.openapi = web::Data::new(document(
            self.configurators.clone(),
            &self.http.version,
            Some(policy.clone()),
        ));
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

/// The served document, built at its first request: `openapi_doc`, with
/// `policy`'s requirements on each operation.
fn document(
    configurators: Vec<ApiConfigurator>,
    version: &str,
    policy: Option<Arc<dyn AccessPolicy>>,
) -> OpenApiJson {
    let version = version.to_string();
    OpenApiJson::lazy(move || {
        openapi_doc(&configurators, &version, policy.as_deref())
            .to_json()
            .unwrap_or_else(|_| "{}".into())
    })
}

/// The OpenAPI document of the system endpoints plus every configurator's routes.
pub fn openapi_doc(
    configurators: &[ApiConfigurator],
    version: &str,
    policy: Option<&dyn AccessPolicy>,
) -> utoipa::openapi::OpenApi {
    let (_, mut doc) = App::new()
        .into_utoipa_app()
        .openapi(ApiDoc::openapi())
        .service(documented_routes(configurators))
        .split_for_parts();
    doc.info.version = version.to_string();
    // The declarations first: the document's rules read them.
    if let Some(policy) = policy {
        policy.document(&mut doc);
    }
    super::doc_rules::apply(doc)
}

/// Every route under `/api`, with their OpenAPI paths and schemas.
fn documented_routes(
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
    let mut api = scope("/api")
        .configure(|cfg| crate::system::configure(&mut ServiceConfig::documenting(cfg)));
    for configure in configurators {
        let configure = configure.clone();
        api = api.configure(move |cfg| configure(&mut ServiceConfig::documenting(cfg)));
    }
    api
}

/// Every route under `/api`, for serving only (no OpenAPI tree per app
/// instance: [`super::routes`]).
fn served_routes(configurators: &[ApiConfigurator]) -> actix_web::Scope {
    let mut api = web::scope("/api")
        .configure(|cfg| crate::system::configure(&mut ServiceConfig::serving(cfg)));
    for configure in configurators {
        let configure = configure.clone();
        api = api.configure(move |cfg| configure(&mut ServiceConfig::serving(cfg)));
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
    app.service(served_routes(&ctx.configurators))
        .default_service(web::to(not_found))
        .wrap(from_fn(enforce_access))
        .wrap(json_error_bodies())
        .wrap(Compress::default())
        .wrap(from_fn(strip_identity_encoding))
        .wrap(cors(&ctx.http.cors_origins))
        .wrap(from_fn(origin_guard))
        .wrap(security_headers())
        .wrap(from_fn(request_context))
}
