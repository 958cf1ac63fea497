use actix_web::http::header;
use actix_web::{HttpResponse, get, web};

/// The generated OpenAPI document, serialised once at start-up.
pub struct OpenApiJson(pub String);

/// The OpenAPI 3.1 document of every endpoint.
#[utoipa::path(
    tag = "System",
    responses((status = 200, description = "OpenAPI 3.1 document", content_type = "application/json", body = Object))
)]
#[get("/docs/openapi.json")]
pub async fn openapi_json(doc: web::Data<OpenApiJson>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(doc.0.clone())
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
