use actix_web::{HttpResponse, get, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::db::Db;

/// Liveness and database reachability.
#[derive(Serialize, ToSchema)]
pub struct HealthBody {
    /// `ok`, or `error` when a dependency is unreachable.
    #[schema(example = "ok")]
    pub status: &'static str,
    /// `ok` or `unavailable`.
    #[schema(example = "ok")]
    pub database: &'static str,
}

/// Reports whether the server can reach its database.
#[utoipa::path(
    tag = "System",
    responses(
        (status = 200, description = "Everything is reachable", body = HealthBody),
        (status = 503, description = "The database is unreachable", body = HealthBody),
    )
)]
#[get("/health")]
pub async fn health(db: web::Data<Db>) -> HttpResponse {
    match db.ping().await {
        Ok(()) => HttpResponse::Ok().json(HealthBody {
            status: "ok",
            database: "ok",
        }),
        Err(err) => {
            tracing::warn!(db.error = %err, "health check: database unavailable");
            HttpResponse::ServiceUnavailable().json(HealthBody {
                status: "error",
                database: "unavailable",
            })
        }
    }
}
