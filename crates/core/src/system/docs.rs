use std::sync::OnceLock;

use actix_web::http::header;
use actix_web::{HttpResponse, get, web};

use crate::error::AppError;

/// The generated OpenAPI document, serialised once, at its first use.
///
/// Not at start-up: building it (every module's paths and schemas as a
/// `utoipa` tree) takes more memory than the server holds at rest, and a
/// server that nobody asks for its document never needs it
/// (docs/architecture.md, "Memory"). The text is kept once built.
pub struct OpenApiJson {
    text: OnceLock<web::Bytes>,
    build: Box<dyn Fn() -> String + Send + Sync>,
}

impl OpenApiJson {
    /// A document built by `build` when first asked for.
    pub fn lazy(build: impl Fn() -> String + Send + Sync + 'static) -> Self {
        Self {
            text: OnceLock::new(),
            build: Box::new(build),
        }
    }

    /// The document's JSON text (built now if it was not yet).
    pub fn json(&self) -> &str {
        // Built from a `String`, so always UTF-8.
        std::str::from_utf8(self.bytes()).unwrap_or("{}")
    }

    fn bytes(&self) -> &web::Bytes {
        self.text
            .get_or_init(|| web::Bytes::from((self.build)().into_bytes()))
    }
}

/// The OpenAPI 3.1 document of every endpoint.
#[utoipa::path(
    tag = "System",
    responses((status = 200, description = "OpenAPI 3.1 document", content_type = "application/json", body = Object))
)]
#[get("/docs/openapi.json")]
pub async fn openapi_json(doc: web::Data<OpenApiJson>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(doc.bytes().clone())
}

/// The explorer page's policy: scripts, styles and images from this server
/// only (Swagger UI styles some elements inline and draws its icons as
/// `data:` images); requests ("try it out") to this server only.
const EXPLORER_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The API explorer: Swagger UI (its files compiled into the binary by
/// utoipa-swagger-ui) over `/api/docs/openapi.json`, with "Authorize" for a
/// bearer token or an API key and "try it out" against this server. Every
/// file it loads comes from `/api/docs/{asset}`.
#[utoipa::path(
    tag = "System",
    responses((status = 200, description = "The API explorer (HTML)", content_type = "text/html", body = String))
)]
#[get("/docs")]
pub async fn docs_page() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CONTENT_SECURITY_POLICY, EXPLORER_CSP))
        .body(include_str!("explorer.html"))
}

/// Our own files of the explorer, beside Swagger UI's.
const OWN_ASSETS: [(&str, &str, &str); 2] = [
    (
        "explorer.js",
        "text/javascript; charset=utf-8",
        include_str!("explorer.js"),
    ),
    (
        "explorer.css",
        "text/css; charset=utf-8",
        include_str!("explorer.css"),
    ),
];

/// The Swagger UI files the page loads (the rest of its distribution is not
/// served).
const SWAGGER_ASSETS: [(&str, &str); 4] = [
    ("swagger-ui.css", "text/css; charset=utf-8"),
    ("swagger-ui-bundle.js", "text/javascript; charset=utf-8"),
    ("favicon-32x32.png", "image/png"),
    ("favicon-16x16.png", "image/png"),
];

/// One file of the API explorer: Swagger UI's script, style sheet and icons
/// (version 5.32.6) and the explorer's settings, all from the binary.
#[utoipa::path(
    tag = "System",
    params(("asset" = String, Path, description = "`swagger-ui-bundle.js`, `swagger-ui.css`, \
        `explorer.js`, `explorer.css`, `favicon-32x32.png` or `favicon-16x16.png`", example = "explorer.js")),
    responses(
        (status = 200, description = "The file", content(
            (String = "text/javascript"),
            (String = "text/css"),
            (Vec<u8> = "image/png"),
        )),
        (status = 404, description = "No such file of the explorer", body = crate::error::ErrorBody),
    )
)]
#[get("/docs/{asset}")]
pub async fn docs_asset(asset: crate::Path<String>) -> Result<HttpResponse, AppError> {
    let (content_type, body) =
        explorer_asset(&asset.0).ok_or_else(|| AppError::not_found("Not found"))?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        // The files change only with the binary.
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .body(body))
}

/// The content type and bytes of one explorer file.
fn explorer_asset(name: &str) -> Option<(&'static str, web::Bytes)> {
    if let Some((_, content_type, text)) = OWN_ASSETS.iter().find(|(n, _, _)| *n == name) {
        return Some((content_type, web::Bytes::from_static(text.as_bytes())));
    }
    let (_, content_type) = SWAGGER_ASSETS.iter().find(|(n, _)| *n == name)?;
    // Only swagger-initializer.js depends on the configuration, and it is
    // not served: the default one is never used.
    let config = std::sync::Arc::new(utoipa_swagger_ui::Config::default());
    let file = utoipa_swagger_ui::serve(name, config).ok().flatten()?;
    let bytes = match file.bytes {
        std::borrow::Cow::Borrowed(bytes) => web::Bytes::from_static(bytes),
        std::borrow::Cow::Owned(bytes) => web::Bytes::from(bytes),
    };
    Some((content_type, bytes))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::OpenApiJson;

    #[test]
    fn the_document_is_built_at_its_first_use_and_kept() {
        let builds = Arc::new(AtomicUsize::new(0));
        let counter = builds.clone();
        let doc = OpenApiJson::lazy(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            r#"{"openapi":"3.1.0"}"#.to_string()
        });
        assert_eq!(builds.load(Ordering::SeqCst), 0);
        assert_eq!(doc.json(), r#"{"openapi":"3.1.0"}"#);
        assert_eq!(doc.json(), r#"{"openapi":"3.1.0"}"#);
        assert_eq!(builds.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn every_explorer_file_is_in_the_binary() {
        for name in super::OWN_ASSETS
            .iter()
            .map(|(n, _, _)| *n)
            .chain(super::SWAGGER_ASSETS.iter().map(|(n, _)| *n))
        {
            let found = super::explorer_asset(name);
            assert!(found.is_some_and(|(_, bytes)| !bytes.is_empty()), "{name}");
        }
        assert!(super::explorer_asset("swagger-initializer.js").is_none());
        assert!(super::explorer_asset("../Cargo.toml").is_none());
    }
}
