//! embed-deals: a service that embeds stoa's deals module (stoa-customers)
//! alone, with stoa-core, stoa-acl and the job queue (stoa-jobs), its own
//! identity ([`identity`]), its own undo route ([`undo`]) and its own
//! database, migrated with only the migrations those crates own plus the
//! identity tables customers' migrations reference ([`migrations`]).
//! See README.md for what an embedder must provide.
#![doc = include_str!("../README.md")]

pub mod identity;
pub mod undo;

use std::sync::Arc;

use actix_web::web;
use diesel_migrations::{EmbeddedMigrations, embed_migrations};
use stoa_acl::{UserDirectory, authenticator_data};
use stoa_core::command::{CommandRegistry, WriteGuards};
use stoa_core::config::HttpConfig;
use stoa_core::db::{Db, Migrations};
use stoa_core::http::{ApiConfigurator, AppContext, ServiceConfig};
use stoa_jobs::{WorkerConfig, Workers};

pub use identity::Identity;

/// The program's own migrations: the identity tables (`tenants`,
/// `organizations`, `users`) that customers' migrations reference.
pub const OWN_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");

/// Everything this program's database needs, in version order: stoa-core's
/// (functions, action log, outbox, read versions, row-level security), the
/// queue's, customers' and the program's own.
pub fn migrations() -> Migrations {
    stoa_core::db::migrations::core()
        .and(stoa_jobs::migrations())
        .and(stoa_customers::migrations())
        .with(OWN_MIGRATIONS)
}

/// The undo and redo handlers of the commands this program runs; a deal's
/// check owners in `users` (the program's identity).
pub fn commands(users: Arc<dyn UserDirectory>) -> CommandRegistry {
    stoa_customers::handlers(users)
        .into_iter()
        .fold(CommandRegistry::new(), CommandRegistry::handler)
}

/// The routes under `/api`: the identity as the authenticator, the undo
/// route over [`commands`], and customers' routes with the identity as
/// their user directory. No job records are registered
/// (`web::Data<dyn stoa_jobs::JobRecords>`): bulk requests answer
/// `progressJobId: null` and the job runs all the same.
pub fn configurators(identity: Arc<Identity>) -> Vec<ApiConfigurator> {
    let auth = authenticator_data(identity.clone());
    let users: Arc<dyn UserDirectory> = identity;
    let commands = web::Data::new(commands(users.clone()));
    vec![
        Arc::new(move |cfg: &mut ServiceConfig<'_, '_>| {
            cfg.app_data(auth.clone())
                .app_data(commands.clone())
                .service(undo::undo);
        }),
        Arc::new(stoa_customers::configure(users)),
    ]
}

/// The app's context: stoa-core's app (middleware, error bodies, `/api`
/// system routes) around [`configurators`]. `stoa_core::http::app(&ctx)`
/// builds an actix `App` of it (once per worker thread).
pub fn app_context(db: Db, http: HttpConfig, identity: Arc<Identity>) -> AppContext {
    AppContext::new(db, http, configurators(identity))
}

/// The job workers: the queue's own jobs and customers' bulk jobs, which
/// act as their creator through the identity. No write guards, no records.
pub fn workers(db: Db, identity: Arc<Identity>, config: WorkerConfig) -> Workers {
    let mut handlers = stoa_jobs::handlers();
    handlers.extend(stoa_customers::job_handlers(identity.clone()));
    Workers::new(db, handlers, config)
        .with_schedules(stoa_jobs::schedules())
        .with_creators(identity, WriteGuards::default())
}
