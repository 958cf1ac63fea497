use actix_web::{HttpResponse, get, web};

use super::SystemInfo;

/// The deployed version, as a bare JSON string.
#[utoipa::path(
    tag = "System",
    responses((status = 200, description = "The deployed version", content_type = "application/json", body = String, example = json!("0.7.0")))
)]
#[get("/version")]
pub async fn version(info: web::Data<SystemInfo>) -> HttpResponse {
    HttpResponse::Ok().json(&info.version)
}
