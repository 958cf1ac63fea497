use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use stoa_testkit::TestApp;

pub use stoa_auth::testing::{Tenant, token_for};
pub use stoa_testkit::requests::{delete, get, post_json, put_json};

pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .module_with(stoa_auth::testing::module)
        .module(stoa_progress::configure)
        .start()
        .await
}

/// A tenant whose default roles include the progress grants.
pub async fn seed(db: &stoa_core::db::Db, name: &str, domain: &str) -> Tenant {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_progress::register(&mut registry).unwrap();
    stoa_auth::testing::seed_tenant_with(db, &registry, name, domain).await
}

/// Workers that keep progress's records of their jobs, as the server's do.
pub fn workers(
    db: stoa_core::db::Db,
    handlers: Vec<std::sync::Arc<dyn stoa_jobs::JobHandler>>,
    config: stoa_jobs::WorkerConfig,
) -> stoa_jobs::Workers {
    stoa_jobs::Workers::new(db, handlers, config).with_records(stoa_progress::records())
}

/// The queue's handlers and progress's (the diagnostic job, the sweeps).
pub fn all_handlers() -> Vec<std::sync::Arc<dyn stoa_jobs::JobHandler>> {
    let mut handlers = stoa_jobs::handlers();
    handlers.extend(stoa_progress::handlers());
    handlers
}

/// The queue's recurring jobs and progress's.
pub fn all_schedules() -> Vec<stoa_jobs::Schedule> {
    let mut schedules = stoa_jobs::schedules();
    schedules.extend(stoa_progress::schedules());
    schedules
}
