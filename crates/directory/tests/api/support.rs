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

/// An app with auth, directory and audit logs (undo and redo over HTTP).
pub async fn start_with_undo() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    let commands = stoa_directory::commands::handlers()
        .into_iter()
        .chain(stoa_auth::commands::handlers())
        .fold(
            stoa_core::command::CommandRegistry::new(),
            stoa_core::command::CommandRegistry::handler,
        );
    stoa_testkit::app()
        .module_with(stoa_auth::testing::module)
        .module(stoa_directory::configure)
        .module(stoa_audit_logs::configure(
            std::sync::Arc::new(commands),
            std::sync::Arc::new(stoa_auth::PgAccounts),
        ))
        .start()
        .await
}

/// A tenant whose default roles also carry the audit-log grants (undo, redo).
pub async fn seed_with_undo(db: &stoa_core::db::Db, name: &str, domain: &str) -> Tenant {
    let mut registry = stoa_auth::base_registry().unwrap_or_default();
    if let Err(err) = stoa_audit_logs::register(&mut registry) {
        panic!("register audit logs: {err}");
    }
    stoa_auth::testing::seed_tenant_with(db, &registry, name, domain).await
}
