//! The one module context (`stoa_server::services`): every shared service
//! reaches every mounted route, whatever builds the modules (serve, tests, the
//! document), and a route extracting something unregistered is caught.

use std::sync::Arc;

use actix_web::{HttpResponse, web};
use stoa_acl::accounts::{AclResolver, CreatorResolver, Onboarding, RoleDirectory, UserDirectory};
use stoa_acl::{OrganizationDirectory, Registry, Services};
use stoa_auth::AuthConfig;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;
use stoa_core::outbound::Outbound;
use stoa_core::storage::Storage;
use stoa_mail::Mailer;

/// A route extracting every shared service, as a module's handler would.
#[expect(
    clippy::too_many_arguments,
    reason = "one extractor per shared service"
)]
async fn uses_everything(
    _db: web::Data<Db>,
    _registry: web::Data<Registry>,
    _storage: web::Data<Storage>,
    _outbound: web::Data<Outbound>,
    _keys: web::Data<KeyRing>,
    _mailer: web::Data<dyn Mailer>,
    _users: web::Data<dyn UserDirectory>,
    _acl: web::Data<dyn AclResolver>,
    _roles: web::Data<dyn RoleDirectory>,
    _creators: web::Data<dyn CreatorResolver>,
    _onboarding: web::Data<dyn Onboarding>,
    _organizations: web::Data<dyn OrganizationDirectory>,
    _services: web::Data<Services>,
) -> HttpResponse {
    HttpResponse::NoContent().finish()
}

fn probe_route() -> ApiConfigurator {
    Arc::new(|cfg| {
        cfg.route("/test/context", web::get().to(uses_everything));
    })
}

/// The server's modules plus the probe route.
fn with_probe(db: &Db, services: bool) -> ApiConfigurator {
    let mut configurators = stoa_server::configurators(
        &stoa_server::test_services(db).unwrap(),
        AuthConfig::for_tests(),
    )
    .unwrap();
    if !services {
        // What `modules()` mounted before the module context: no shared services.
        configurators.remove(0);
    }
    configurators.push(probe_route());
    Arc::new(move |cfg| {
        for configure in &configurators {
            configure(cfg);
        }
    })
}

#[actix_web::test]
async fn every_shared_service_reaches_the_routes_of_the_mounted_modules() {
    let app = stoa_testkit::app()
        .module_with(|db| with_probe(db, true))
        .start()
        .await;
    let res = app.get("/api/test/context").await;
    assert_eq!(res.status, 204, "{}", res.text());
}

#[actix_web::test]
async fn a_route_extracting_an_unregistered_service_is_named_as_such() {
    let app = stoa_testkit::app()
        .module_with(|db| with_probe(db, false))
        .start()
        .await;
    let res = app.get("/api/test/context").await;
    assert_eq!(res.status, 500);
    assert_eq!(res.json()["code"], stoa_core::http::APP_DATA_MISSING);
    assert_eq!(res.json()["error"], "Internal server error");
}

#[test]
fn the_document_and_the_workers_use_the_same_context() {
    let db = Db::from_url(
        "postgres://docs@127.0.0.1:1/none",
        1,
        std::time::Duration::from_millis(1),
    )
    .unwrap();
    let services = stoa_server::test_services(&db).unwrap();
    let modules = stoa_server::modules(&services, AuthConfig::for_tests()).unwrap();
    // Every recurring job has a handler in the context-built list.
    let kinds: Vec<&str> = stoa_server::job_handlers(&services, &modules.list)
        .iter()
        .map(|h| h.kind())
        .collect();
    for schedule in stoa_server::job_schedules(&modules.list).unwrap() {
        assert!(
            kinds.contains(&schedule.kind),
            "schedule {} has no handler",
            schedule.kind
        );
    }
    let mut unique = kinds.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), kinds.len(), "a job kind is handled twice");
}

#[derive(diesel::QueryableByName)]
struct Sent {
    #[diesel(sql_type = diesel::sql_types::Text)]
    recipient: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    body: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    html: Option<String>,
}

#[actix_web::test]
async fn mail_queued_in_a_transaction_is_sent_after_commit_and_never_after_a_rollback() {
    use diesel_async::{AsyncConnection, RunQueryDsl};
    use stoa_core::AppError;
    use stoa_mail::Mail;

    let app = stoa_testkit::app().start().await;
    let services = stoa_server::test_services(&app.db).unwrap();
    let mut conn = app.db.conn().await.unwrap();
    let welcome = Mail::text("founder@initech.com", "Welcome", "Hello in text")
        .with_html("<p>Hello in <b>HTML</b></p>");
    conn.transaction::<_, AppError, _>(async |conn| stoa_mail::queue(conn, &welcome, None).await)
        .await
        .unwrap();
    let lost = Mail::text("ghost@initech.com", "Never", "rolled back");
    let rolled_back = conn
        .transaction::<(), AppError, _>(async |conn| {
            stoa_mail::queue(conn, &lost, None).await?;
            Err(AppError::bad_request("the sign-up failed"))
        })
        .await;
    assert!(rolled_back.is_err());
    // Nothing is sent before the dispatcher delivers.
    let sent = || async {
        let mut conn = app.db.conn().await.unwrap();
        diesel::sql_query("SELECT recipient, body, html FROM mail_outbox ORDER BY created_at")
            .load::<Sent>(&mut *conn)
            .await
            .unwrap()
    };
    assert!(sent().await.is_empty());
    let dispatcher = stoa_core::command::outbox::Dispatcher::new(
        app.db.clone(),
        stoa_server::subscribers(
            &services,
            &stoa_server::modules(&services, AuthConfig::for_tests())
                .unwrap()
                .list,
        ),
    );
    assert_eq!(
        dispatcher.run_once().await.unwrap(),
        1,
        "one event committed"
    );
    let sent = sent().await;
    assert_eq!(sent.len(), 1, "only the committed message");
    assert_eq!(sent[0].recipient, "founder@initech.com");
    assert_eq!(sent[0].body, "Hello in text");
    assert_eq!(sent[0].html.as_deref(), Some("<p>Hello in <b>HTML</b></p>"));
}
