use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use stoa_testkit::TestApp;

pub use stoa_auth::testing::{Tenant, seed_tenant, token_for, user_with_features};
pub use stoa_testkit::requests::{delete, get, post_json, put_json};

pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .module_with(stoa_auth::testing::module)
        .module(stoa_directory::configure)
        .start()
        .await
}

/// Two tenants: Acme (acme.com) and Globex (globex.com).
pub async fn two_tenants(db: &stoa_core::db::Db) -> (Tenant, Tenant) {
    (
        seed_tenant(db, "Acme Corp", "acme.com").await,
        seed_tenant(db, "Globex", "globex.com").await,
    )
}
