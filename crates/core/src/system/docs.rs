use std::sync::OnceLock;

use actix_web::http::header;
use actix_web::{HttpResponse, get, web};

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

/// A self-contained page that renders the OpenAPI document (no external assets).
#[utoipa::path(
    tag = "System",
    responses((status = 200, description = "HTML documentation page", content_type = "text/html", body = String))
)]
#[get("/docs")]
pub async fn docs_page() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
        ))
        .body(include_str!("docs.html"))
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
}
