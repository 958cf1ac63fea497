//! Prometheus metrics: requests by route and status, latency histograms and
//! connection-pool usage, served at `GET /metrics` on `STOA_METRICS_BIND`.

use std::time::Duration;

use actix_web::{HttpResponse, web};
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, Opts, Registry, TextEncoder,
};

use crate::db::Db;

/// The process's metrics. Shared by every worker.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    pool_size: IntGauge,
    pool_available: IntGauge,
    pool_max: IntGauge,
    queries: IntGauge,
    access_pending: IntGauge,
    db: Db,
}

impl Metrics {
    pub fn new(db: Db) -> Result<Self, prometheus::Error> {
        let registry = Registry::new_custom(Some("stoa".into()), None)?;
        let requests = IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "HTTP requests by method, route and status",
            ),
            &["method", "route", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "HTTP request latency by method and route",
            )
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["method", "route"],
        )?;
        let pool_size = IntGauge::new("db_pool_connections", "Open database connections")?;
        let pool_available = IntGauge::new("db_pool_available", "Idle database connections")?;
        let pool_max = IntGauge::new(
            "db_pool_max_connections",
            "Configured pool sizes (tenant and cross-tenant pools)",
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(pool_size.clone()))?;
        registry.register(Box::new(pool_available.clone()))?;
        let queries = IntGauge::new(
            "db_queries",
            "Statements sent to Postgres since the process started",
        )?;
        registry.register(Box::new(pool_max.clone()))?;
        registry.register(Box::new(queries.clone()))?;
        let access_pending = IntGauge::new(
            "access_log_pending",
            "Access-log entries of kept answers waiting to be written",
        )?;
        registry.register(Box::new(access_pending.clone()))?;
        Ok(Self {
            registry,
            requests,
            latency,
            pool_size,
            pool_available,
            pool_max,
            queries,
            access_pending,
            db,
        })
    }

    /// Records one finished request. Unmatched paths share one label so that
    /// scanners cannot blow up the label cardinality.
    pub fn observe(&self, method: &str, route: Option<&str>, status: u16, elapsed: Duration) {
        let route = route.unwrap_or("unmatched");
        let status = status.to_string();
        self.requests
            .with_label_values(&[method, route, status.as_str()])
            .inc();
        self.latency
            .with_label_values(&[method, route])
            .observe(elapsed.as_secs_f64());
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let (size, available, max) = self.db.pool_status();
        self.pool_size.set(i64::try_from(size).unwrap_or(i64::MAX));
        self.pool_available
            .set(i64::try_from(available).unwrap_or(i64::MAX));
        self.pool_max.set(i64::try_from(max).unwrap_or(i64::MAX));
        self.queries
            .set(i64::try_from(crate::db::queries_total()).unwrap_or(i64::MAX));
        self.access_pending
            .set(i64::try_from(self.db.access_queue().pending()).unwrap_or(i64::MAX));
        let mut out = Vec::new();
        if let Err(err) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::error!(error = %err, "metrics encoding failed");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

async fn metrics_handler(metrics: web::Data<Metrics>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(metrics.render())
}

/// The separate app served on `STOA_METRICS_BIND`.
pub fn metrics_app(
    metrics: web::Data<Metrics>,
) -> actix_web::App<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    actix_web::App::new()
        .app_data(metrics)
        .route("/metrics", web::get().to(metrics_handler))
}
