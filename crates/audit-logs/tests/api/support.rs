use std::sync::Arc;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_core::AppError;
use stoa_core::command::{ActionLog, Actor, CommandRegistry, UndoInterceptor, WriteGuard};
use stoa_testkit::{AppService, TestApp, TestResponse};
use uuid::Uuid;

pub use stoa_auth::testing::{Tenant, token_for, user_with_features};
pub use stoa_testkit::operation;
pub use stoa_testkit::requests::{delete, get, post_json, put_json};

/// Refuses to undo anything done to an organization named "Locked ...".
struct LockedInterceptor;

impl UndoInterceptor for LockedInterceptor {
    fn before_undo<'a>(
        &'a self,
        _: &'a mut diesel_async::AsyncPgConnection,
        log: &'a ActionLog,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(), AppError>> {
        Box::pin(async move {
            let locked = log
                .snapshot_after
                .as_ref()
                .and_then(|s| s["name"].as_str())
                .is_some_and(|n| n.starts_with("Locked"));
            if locked {
                Err(AppError::unprocessable("This organization is locked")
                    .with_code("undo_blocked"))
            } else {
                Ok(())
            }
        })
    }
}

pub fn registry() -> CommandRegistry {
    stoa_directory::commands::handlers()
        .into_iter()
        .chain(stoa_auth::commands::handlers())
        .fold(CommandRegistry::new(), CommandRegistry::handler)
        .interceptor(Arc::new(LockedInterceptor))
}

pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .module_with(stoa_auth::testing::module)
        .module_with(|db| {
            Arc::new(stoa_preferences::configure(
                stoa_preferences::PreferencesState::new(
                    db.clone(),
                    stoa_auth::AuthConfig::for_tests().jwt_secret.expose(),
                    Arc::new(stoa_auth::PgAccounts),
                ),
            ))
        })
        .module(stoa_directory::configure)
        .module(stoa_audit_logs::configure(
            Arc::new(registry()),
            Arc::new(stoa_auth::PgAccounts),
        ))
        .start()
        .await
}

/// [`start`], with `guards` registered as the registry's write guards (so
/// every signed-in caller's writes pass them).
pub async fn start_with_guards(
    guards: Vec<Arc<dyn WriteGuard>>,
) -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    let mut features = stoa_auth::base_registry().unwrap();
    stoa_audit_logs::register(&mut features).unwrap();
    for guard in guards {
        features.add_write_guard(guard);
    }
    stoa_testkit::app()
        .module_with(move |db| {
            Arc::new(stoa_auth::configure(
                stoa_auth::testing::state_with_registry(db, features, |_| {}),
            ))
        })
        .module(stoa_directory::configure)
        .module(stoa_audit_logs::configure(
            Arc::new(registry()),
            Arc::new(stoa_auth::PgAccounts),
        ))
        .start()
        .await
}

/// A tenant whose default roles include the audit-log grants (admin: all,
/// employee: view and undo own).
pub async fn seed(db: &stoa_core::db::Db, name: &str, domain: &str) -> Tenant {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_audit_logs::register(&mut registry).unwrap();
    stoa_auth::testing::seed_tenant_with(db, &registry, name, domain).await
}

pub async fn create_org<S: AppService>(
    app: &TestApp<S>,
    token: &str,
    body: Value,
) -> (Uuid, Value) {
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            token,
            body.clone(),
        ))
        .await;
    assert_eq!(res.status, 201, "{body}: {}", res.text());
    (
        res.json()["id"].as_str().unwrap().parse().unwrap(),
        operation(&res),
    )
}

pub async fn org<S: AppService>(app: &TestApp<S>, token: &str, id: Uuid) -> Option<Value> {
    let res = app
        .send(get(
            &format!("/api/directory/organizations?view=manage&ids={id}"),
            token,
        ))
        .await;
    assert_eq!(res.status, 200);
    res.json()["items"].as_array().unwrap().first().cloned()
}

pub async fn undo<S: AppService>(
    app: &TestApp<S>,
    token: &str,
    undo_token: &Value,
) -> TestResponse {
    app.send(post_json(
        "/api/audit_logs/audit-logs/actions/undo",
        token,
        json!({"undoToken": undo_token}),
    ))
    .await
}
