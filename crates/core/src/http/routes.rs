//! Where modules register their routes: [`ServiceConfig`].
//!
//! A module's `configure` runs in two settings. Serving (every app
//! instance: one per HTTP worker, one for in-process calls) registers
//! the routes with actix and nothing else. Documenting (the OpenAPI
//! document, built at its first request) registers them with utoipa,
//! which also builds each operation's paths and schemas. utoipa's own
//! `ServiceConfig` always builds them, so every app instance used to
//! build the whole document's tree and drop it: three trees at start-up,
//! about two thirds of the memory start-up touched (docs/architecture.md,
//! "Memory").

use actix_web::Route;
use actix_web::dev::HttpServiceFactory;
use actix_web::web;
use utoipa_actix_web::OpenApiFactory;

/// A module's route registration (`fn configure(cfg: &mut ServiceConfig)`),
/// with the methods of actix's and utoipa's `ServiceConfig` that modules use.
pub struct ServiceConfig<'c, 's> {
    inner: Inner<'c, 's>,
}

enum Inner<'c, 's> {
    Serve(&'c mut web::ServiceConfig),
    Document(&'c mut utoipa_actix_web::service_config::ServiceConfig<'s>),
}

/// Makes the same call on whichever configuration `$self` wraps (actix's
/// and utoipa's share these methods' names), then returns `$self`.
macro_rules! forward {
    ($self:ident, $cfg:ident => $call:expr) => {{
        match &mut $self.inner {
            Inner::Serve($cfg) => {
                $call;
            }
            Inner::Document($cfg) => {
                $call;
            }
        }
        $self
    }};
}

impl<'c, 's> ServiceConfig<'c, 's> {
    /// Registers routes for serving only.
    pub fn serving(cfg: &'c mut web::ServiceConfig) -> Self {
        Self {
            inner: Inner::Serve(cfg),
        }
    }

    /// Registers routes and collects their OpenAPI paths and schemas.
    pub fn documenting(cfg: &'c mut utoipa_actix_web::service_config::ServiceConfig<'s>) -> Self {
        Self {
            inner: Inner::Document(cfg),
        }
    }

    /// Data for the handlers of this configuration.
    pub fn app_data<U: 'static>(&mut self, ext: U) -> &mut Self {
        forward!(self, cfg => cfg.app_data(ext))
    }

    /// A documented handler (`#[utoipa::path]` and an actix route macro).
    pub fn service<F>(&mut self, factory: F) -> &mut Self
    where
        F: HttpServiceFactory + OpenApiFactory + 'static,
    {
        forward!(self, cfg => cfg.service(factory))
    }

    /// An undocumented route (tests).
    pub fn route(&mut self, path: &str, route: Route) -> &mut Self {
        forward!(self, cfg => cfg.route(path, route))
    }

    /// Runs `f` on this configuration (a module mounting a sub-module).
    pub fn configure<F>(&mut self, f: F) -> &mut Self
    where
        F: FnOnce(&mut ServiceConfig<'_, '_>),
    {
        f(self);
        self
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::{TestRequest, call_service, init_service};
    use actix_web::{App, HttpResponse, get};

    use super::*;

    #[utoipa::path(responses((status = 200, description = "pong")))]
    #[get("/ping")]
    async fn ping() -> HttpResponse {
        HttpResponse::Ok().body("pong")
    }

    fn routes(cfg: &mut ServiceConfig) {
        cfg.app_data(web::Data::new(7_u32)).service(ping);
    }

    #[actix_web::test]
    async fn serving_registers_the_routes() {
        let app =
            init_service(App::new().configure(|cfg| routes(&mut ServiceConfig::serving(cfg))))
                .await;
        let res = call_service(&app, TestRequest::get().uri("/ping").to_request()).await;
        assert_eq!(res.status(), 200);
    }

    #[test]
    fn documenting_collects_the_paths() {
        use utoipa_actix_web::AppExt;
        let (_, doc) = App::new()
            .into_utoipa_app()
            .configure(|cfg| routes(&mut ServiceConfig::documenting(cfg)))
            .split_for_parts();
        assert!(doc.paths.paths.contains_key("/ping"));
    }
}
