//! System endpoints: `GET /version`, `GET /health`, `GET /docs` (the API
//! explorer, with its files under `GET /docs/{asset}`) and
//! `GET /docs/openapi.json` (paths relative to `/api`).

mod docs;
mod health;
mod operations;
mod version;

use crate::http::ServiceConfig;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

pub use docs::OpenApiJson;
pub use health::{HealthBody, draining, start_draining};
pub use operations::OPERATIONS;

/// Facts about the running build, as app data.
#[derive(Clone, Debug)]
pub struct SystemInfo {
    pub version: String,
}

/// The base document: info, tags and security schemes; paths are collected
/// from the handlers by utoipa-actix-web.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "stoa API",
        description = "Multi-tenant business platform API. Paths are relative to the server root; \
                       every module lives under `/api`. Protected endpoints take \
                       `Authorization: Bearer <token>` or `x-api-key: <key>`: sign in with \
                       `POST /api/auth/login`, or create a key with `POST /api/api_keys/keys`, \
                       then enter it under \"Authorize\"."
    ),
    components(schemas(crate::error::ErrorBody, crate::error::Issue)),
    modifiers(&SecuritySchemes),
    tags((name = "System", description = "Version, health and API documentation"))
)]
pub struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearerAuth",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .build(),
            ),
        );
        components.add_security_scheme(
            "apiKey",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("x-api-key"))),
        );
    }
}

/// Mounts the system endpoints.
pub fn configure(cfg: &mut ServiceConfig) {
    cfg.service(version::version)
        .service(health::health)
        .service(docs::docs_page)
        .service(docs::openapi_json)
        // After the document: `/docs/openapi.json` is not an asset.
        .service(docs::docs_asset);
}
