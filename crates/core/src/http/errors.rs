//! JSON bodies for every error, including the ones actix produces itself
//! (unknown route, wrong method, its own extractors).

use actix_web::HttpResponse;
use actix_web::body::EitherBody;
use actix_web::dev::ServiceResponse;
use actix_web::http::{StatusCode, header};
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers};

use crate::error::AppError;

/// Default service: unknown routes answer 404 `{error}`.
pub async fn not_found() -> Result<HttpResponse, AppError> {
    Err(AppError::not_found("Not found"))
}

/// The `code` of a 500 caused by a handler extracting app data that no
/// configurator registered (`web::Data<T>` missing).
pub const APP_DATA_MISSING: &str = "app_data_missing";

/// How actix's `Data<T>` extractor starts its error.
const MISSING_DATA: &str = "Requested application data is not configured";

/// Rewrites any non-JSON error response (405 from a resource, a 400 from an
/// actix extractor, ...) into `{error}` with the same status and headers.
/// An HTML page a handler built for a browser (onboarding's verification
/// link) is kept: actix itself never answers in HTML.
pub fn json_error_bodies<B: 'static>() -> ErrorHandlers<B> {
    ErrorHandlers::new().default_handler(rewrite)
}

fn rewrite<B>(res: ServiceResponse<B>) -> actix_web::Result<ErrorHandlerResponse<B>> {
    let kept = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json") || ct.starts_with("text/html"));
    if kept {
        return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
    }
    let status = res.status();
    let message = match status.as_u16() {
        404 => "Not found",
        405 => "Method not allowed",
        413 => "Payload too large",
        _ => status.canonical_reason().unwrap_or("Error"),
    };
    // A handler extracting app data nobody registered fails inside actix:
    // logged, and tagged so the server's tests catch every such route.
    let missing_data = status == StatusCode::INTERNAL_SERVER_ERROR
        && res
            .response()
            .error()
            .is_some_and(|e| e.to_string().starts_with(MISSING_DATA));
    let body = if missing_data {
        tracing::error!(path = %res.request().path(), "a handler extracts app data that is not registered");
        serde_json::json!({"error": "Internal server error", "code": APP_DATA_MISSING})
    } else {
        serde_json::json!({"error": message})
    };
    let headers = res.headers().clone();
    let (req, _) = res.into_parts();
    let mut response = HttpResponse::build(status).json(body);
    for (name, value) in headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            response.headers_mut().insert(name.clone(), value.clone());
        }
    }
    let res: ServiceResponse<EitherBody<B>> =
        ServiceResponse::new(req, response).map_into_right_body();
    Ok(ErrorHandlerResponse::Response(res))
}
