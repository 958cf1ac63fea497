use std::sync::atomic::{AtomicBool, Ordering};

use actix_web::{HttpResponse, get, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::db::Db;

/// Set once the process has been asked to stop: health answers 503 from
/// then on, so a load balancer takes the node out of rotation while it
/// still serves the requests already sent to it.
static DRAINING: AtomicBool = AtomicBool::new(false);

/// Marks the process as draining (`stoa serve` on SIGTERM, before it stops
/// accepting connections).
pub fn start_draining() {
    DRAINING.store(true, Ordering::Relaxed);
}

/// Whether [`start_draining`] was called.
pub fn draining() -> bool {
    DRAINING.load(Ordering::Relaxed)
}

/// Liveness and database reachability.
#[derive(Serialize, ToSchema)]
pub struct HealthBody {
    /// `ok`; `error` when a dependency is unreachable; `draining` while the
    /// process shuts down (it still answers, but takes no new work).
    #[schema(example = "ok")]
    pub status: &'static str,
    /// `ok` or `unavailable` (`unchecked` while draining).
    #[schema(example = "ok")]
    pub database: &'static str,
}

/// Reports whether the server can reach its database.
#[utoipa::path(
    tag = "System",
    responses(
        (status = 200, description = "Everything is reachable", body = HealthBody),
        (status = 503, description = "The database is unreachable, or the server is shutting down (`draining`)", body = HealthBody),
    )
)]
#[get("/health")]
pub async fn health(db: web::Data<Db>) -> HttpResponse {
    if draining() {
        return HttpResponse::ServiceUnavailable().json(HealthBody {
            status: "draining",
            database: "unchecked",
        });
    }
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
