//! The authorization matrix: every operation's declared access, enforced
//! before the handler runs and written into the OpenAPI document.
//!
//! Modules declare their operations once (a `OPERATIONS` table next to their
//! `configure`, registered in the [`Registry`](crate::Registry)). The
//! [`AccessMatrix`] built from them answers 401 when a non-public operation is
//! called without valid credentials and 403 `{error:"Forbidden",
//! requiredFeatures}` when the caller lacks a declared feature, whatever the
//! handler does. Handlers keep their own `ctx.require(..)` (defense in depth)
//! and the checks that depend on the input (a feature needed only with some
//! parameter). The resolved [`AuthContext`] is kept in the request, so the
//! handler's extractor does not authenticate a second time.

use std::sync::Arc;

use actix_web::dev::ResourceDef;
use actix_web::{HttpMessage, HttpRequest};
use futures_util::future::{LocalBoxFuture, ready};
use stoa_core::AppError;
use stoa_core::http::{Access, AccessPolicy, Method, Operation};

use crate::context::{AuthContext, Authenticator, Credentials};

/// The prefix every module is mounted under.
const API_PREFIX: &str = "/api";

/// What a request must prove before its handler runs.
#[derive(Debug, PartialEq, Eq)]
enum Required {
    /// Nothing (public, handled by the handler, or no such route).
    Nothing,
    /// Valid credentials holding every listed feature.
    Features(Vec<&'static str>),
}

/// Declared operations, matched by method and path template.
pub struct AccessMatrix {
    operations: Vec<(Operation, ResourceDef)>,
    authenticator: Arc<dyn Authenticator>,
}

impl AccessMatrix {
    pub fn new(operations: &[Operation], authenticator: Arc<dyn Authenticator>) -> Self {
        let operations = operations
            .iter()
            .map(|op| (*op, ResourceDef::new(format!("{API_PREFIX}{}", op.path))))
            .collect();
        Self {
            operations,
            authenticator,
        }
    }

    /// The declarations of `method` whose template matches `path`. More than
    /// one means overlapping templates (the matrix test forbids them); the
    /// check then demands all of them.
    fn matching(&self, method: Method, path: &str) -> impl Iterator<Item = &Operation> {
        self.operations
            .iter()
            .filter(move |(op, def)| op.method == method && def.is_match(path))
            .map(|(op, _)| op)
    }

    fn required(&self, req: &HttpRequest) -> Required {
        let Some(method) = Method::of(req.method()) else {
            return Required::Nothing;
        };
        // The path as the router matches it (percent-decoded), not the raw
        // one: `/api/%64evices` must meet the declarations of `/api/devices`.
        let path = req.match_info().as_str();
        let mut found = false;
        let mut open = true;
        let mut features = Vec::new();
        for op in self.matching(method, path) {
            found = true;
            match op.access {
                Access::Public | Access::AuthenticatedByHandler => {}
                Access::Authenticated => open = false,
                Access::Features(list) => {
                    open = false;
                    for feature in list {
                        if !features.contains(feature) {
                            features.push(*feature);
                        }
                    }
                }
            }
        }
        if !found {
            // A mounted route without a declaration for this method is closed
            // to anonymous callers; an unknown path goes on to its 404.
            return match req.resource_map().match_pattern(path) {
                Some(_) => Required::Features(Vec::new()),
                None => Required::Nothing,
            };
        }
        if open {
            Required::Nothing
        } else {
            Required::Features(features)
        }
    }

    /// The declared access of `method path` (`path` relative to `/api`).
    pub fn access_of(&self, method: Method, path: &str) -> Option<Access> {
        self.operations
            .iter()
            .find(|(op, _)| op.method == method && op.path == path)
            .map(|(op, _)| op.access)
    }
}

impl AccessPolicy for AccessMatrix {
    fn check(&self, req: &HttpRequest) -> LocalBoxFuture<'static, Result<(), AppError>> {
        let Required::Features(features) = self.required(req) else {
            return Box::pin(ready(Ok(())));
        };
        if let Some(ctx) = req.extensions().get::<AuthContext>() {
            return Box::pin(ready(ctx.require_all(&features)));
        }
        let credentials = Credentials::from_request(req);
        if credentials.is_empty() {
            return Box::pin(ready(Err(AppError::unauthorized())));
        }
        let authenticator = self.authenticator.clone();
        let req = req.clone();
        Box::pin(async move {
            let ctx = authenticator.authenticate(&credentials).await?;
            let checked = ctx.require_all(&features);
            // The handler's `AuthContext` extractor reads this one back.
            req.extensions_mut().insert(ctx);
            checked
        })
    }

    fn document(&self, doc: &mut utoipa::openapi::OpenApi) {
        for (path, item) in doc.paths.paths.iter_mut() {
            let Some(relative) = path.strip_prefix(API_PREFIX) else {
                continue;
            };
            for (method, op) in operations_mut(item) {
                let Some(access) = self.access_of(method, relative) else {
                    continue;
                };
                let extensions = op.extensions.get_or_insert_with(Default::default);
                extensions.insert(
                    "x-required-features".into(),
                    serde_json::json!(access.features()),
                );
                if access == Access::Public {
                    extensions.insert("x-public".into(), serde_json::Value::Bool(true));
                }
            }
        }
    }
}

/// The operations of a path item with their methods.
fn operations_mut(
    item: &mut utoipa::openapi::PathItem,
) -> impl Iterator<Item = (Method, &mut utoipa::openapi::path::Operation)> {
    [
        (Method::Get, item.get.as_mut()),
        (Method::Post, item.post.as_mut()),
        (Method::Put, item.put.as_mut()),
        (Method::Patch, item.patch.as_mut()),
        (Method::Delete, item.delete.as_mut()),
    ]
    .into_iter()
    .filter_map(|(method, op)| op.map(|op| (method, op)))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use actix_web::middleware::from_fn;
    use actix_web::test::{TestRequest, call_service, init_service, read_body_json};
    use actix_web::{App, HttpResponse, web};
    use futures_util::future::BoxFuture;
    use stoa_core::http::{access_policy_data, enforce_access};

    use super::*;
    use crate::context::{CredentialKind, ResolvedAcl};

    /// `Bearer viewer` holds `items.view`, `Bearer nobody` holds nothing,
    /// anything else is refused; counts how often it is asked.
    #[derive(Default)]
    struct Stub(AtomicUsize);

    impl Authenticator for Stub {
        fn authenticate<'a>(
            &'a self,
            credentials: &'a Credentials,
        ) -> BoxFuture<'a, Result<AuthContext, AppError>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            let features = match credentials.bearer.as_deref() {
                Some("viewer") => vec!["items.view".to_string()],
                Some("nobody") => Vec::new(),
                _ => return Box::pin(ready(Err(AppError::unauthorized()))),
            };
            Box::pin(ready(Ok(AuthContext {
                user_id: None,
                session_id: None,
                api_key_id: None,
                kind: CredentialKind::Session,
                email: None,
                name: None,
                tenant_id: None,
                actor_tenant_id: None,
                home_organization_id: None,
                acl: Arc::new(ResolvedAcl {
                    features,
                    ..Default::default()
                }),
            })))
        }
    }

    const OPERATIONS: &[Operation] = &[
        Operation::get("/open", Access::Public),
        Operation::get("/me", Access::Authenticated),
        Operation::get("/self", Access::AuthenticatedByHandler),
        Operation::get("/items/{id}", Access::Features(&["items.view"])),
        Operation::get("/secret", Access::Features(&["items.view"])),
    ];

    /// Handlers that check nothing themselves: whatever refuses a caller is
    /// the matrix.
    async fn serve(
        stub: Arc<Stub>,
        req: TestRequest,
    ) -> (actix_web::http::StatusCode, serde_json::Value) {
        let matrix = AccessMatrix::new(OPERATIONS, stub);
        let app = init_service(
            App::new()
                .app_data(access_policy_data(Arc::new(matrix)))
                .service(
                    web::scope("/api")
                        .route("/open", web::get().to(HttpResponse::Ok))
                        .route("/me", web::get().to(HttpResponse::Ok))
                        .route("/self", web::get().to(HttpResponse::Ok))
                        .route("/items/{id}", web::get().to(HttpResponse::Ok))
                        .route("/items/{id}", web::post().to(HttpResponse::Ok))
                        .route("/secret", web::get().to(HttpResponse::Ok))
                        .route(
                            "/whoami",
                            web::get().to(|ctx: AuthContext| async move {
                                HttpResponse::Ok().json(ctx.acl.features.clone())
                            }),
                        ),
                )
                .wrap(from_fn(enforce_access)),
        )
        .await;
        let res = call_service(&app, req.to_request()).await;
        let status = res.status();
        let body = if status.is_success() && res.headers().contains_key("content-type") {
            read_body_json(res).await
        } else {
            let bytes = actix_web::test::read_body(res).await;
            serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null)
        };
        (status, body)
    }

    fn get(path: &str, token: Option<&str>) -> TestRequest {
        let req = TestRequest::get().uri(path);
        match token {
            Some(t) => req.insert_header(("authorization", format!("Bearer {t}"))),
            None => req,
        }
    }

    #[actix_web::test]
    async fn declared_access_is_enforced_before_the_handler() {
        let stub = Arc::new(Stub::default());
        let status = |res: (actix_web::http::StatusCode, serde_json::Value)| res.0.as_u16();
        assert_eq!(
            status(serve(stub.clone(), get("/api/open", None)).await),
            200
        );
        assert_eq!(status(serve(stub.clone(), get("/api/me", None)).await), 401);
        assert_eq!(
            status(serve(stub.clone(), get("/api/me", Some("forged"))).await),
            401
        );
        assert_eq!(
            status(serve(stub.clone(), get("/api/me", Some("nobody"))).await),
            200
        );
        // The handler authenticates this one itself.
        assert_eq!(
            status(serve(stub.clone(), get("/api/self", None)).await),
            200
        );

        let (code, body) = serve(stub.clone(), get("/api/items/1", Some("nobody"))).await;
        assert_eq!(code.as_u16(), 403);
        assert_eq!(
            body,
            serde_json::json!({"error": "Forbidden", "requiredFeatures": ["items.view"]})
        );
        assert_eq!(
            status(serve(stub.clone(), get("/api/items/1", None)).await),
            401
        );
        assert_eq!(
            status(serve(stub.clone(), get("/api/items/1", Some("viewer"))).await),
            200
        );

        // A mounted route without a declaration is closed; an unknown path is a 404.
        let post = TestRequest::post().uri("/api/items/1");
        assert_eq!(status(serve(stub.clone(), post).await), 401);
        assert_eq!(
            status(serve(stub.clone(), get("/api/whoami", None)).await),
            401
        );
        assert_eq!(
            status(serve(stub.clone(), get("/api/nothing", None)).await),
            404
        );
        // Percent-encoding does not dodge a declaration.
        let encoded = get("/api/%73ecret", Some("nobody"));
        assert_eq!(status(serve(stub.clone(), encoded).await), 403);
    }

    #[actix_web::test]
    async fn the_handler_reads_the_context_the_matrix_resolved() {
        let stub = Arc::new(Stub::default());
        let matrix_only = [Operation::get("/whoami", Access::Features(&["items.view"]))];
        let matrix = AccessMatrix::new(&matrix_only, stub.clone());
        let app = init_service(
            App::new()
                .app_data(access_policy_data(Arc::new(matrix)))
                .route(
                    "/api/whoami",
                    web::get().to(|ctx: AuthContext| async move {
                        HttpResponse::Ok().json(ctx.acl.features.clone())
                    }),
                )
                .wrap(from_fn(enforce_access)),
        )
        .await;
        let res = call_service(&app, get("/api/whoami", Some("viewer")).to_request()).await;
        assert_eq!(res.status().as_u16(), 200);
        let body: serde_json::Value = read_body_json(res).await;
        assert_eq!(body, serde_json::json!(["items.view"]));
        assert_eq!(
            stub.0.load(Ordering::SeqCst),
            1,
            "one authentication per request"
        );
    }

    #[test]
    fn documents_every_declared_operation() {
        use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
        use utoipa::openapi::{OpenApiBuilder, PathsBuilder};
        let op = || OperationBuilder::new().build();
        let mut doc = OpenApiBuilder::new()
            .paths(
                PathsBuilder::new()
                    .path("/api/open", PathItem::new(HttpMethod::Get, op()))
                    .path("/api/items/{id}", PathItem::new(HttpMethod::Get, op())),
            )
            .build();
        AccessMatrix::new(OPERATIONS, Arc::new(Stub::default())).document(&mut doc);
        let json = serde_json::to_value(&doc).unwrap();
        let open = &json["paths"]["/api/open"]["get"];
        assert_eq!(open["x-public"], true);
        assert_eq!(open["x-required-features"], serde_json::json!([]));
        let items = &json["paths"]["/api/items/{id}"]["get"];
        assert_eq!(
            items["x-required-features"],
            serde_json::json!(["items.view"])
        );
        assert!(items.get("x-public").is_none());
    }
}
