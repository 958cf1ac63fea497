//! The matrix in front of handlers that check nothing themselves.

use std::sync::atomic::{AtomicUsize, Ordering};

use actix_web::middleware::from_fn;
use actix_web::test::{TestRequest, call_service, init_service, read_body_json};
use actix_web::{App, HttpResponse, web};
use futures_util::future::BoxFuture;
use stoa_core::http::{access_policy_data, enforce_access};

use super::*;
use crate::context::ResolvedAcl;

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
        Box::pin(ready(Ok(AuthContext::for_user(None, None, None).with_acl(
            ResolvedAcl {
                features,
                ..Default::default()
            },
        ))))
    }
}

const OPERATIONS: &[Operation] = &[
    Operation::get("/open", Access::Public),
    Operation::get("/me", Access::Authenticated),
    Operation::get("/self", Access::AuthenticatedByHandler),
    Operation::get("/items/{id}", Access::Features(&["items.view"])),
    Operation::get("/secret", Access::Features(&["items.view"])),
    // Overlapping templates under one method: the literal one is registered
    // first, so the router runs it for `/library/shelf`.
    Operation::get("/library/shelf", Access::Authenticated),
    Operation::get("/library/{id}", Access::Features(&["library.admin"])),
    // Every error in the bulk envelope, the matrix's own 401 and 403 too.
    Operation::post("/bulk", Access::Features(&["items.view"]))
        .errors(ErrorShape::H)
        .envelope(ErrorEnvelope::Bulk),
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
                    .route("/library/shelf", web::get().to(HttpResponse::Ok))
                    .route("/library/{id}", web::get().to(HttpResponse::Ok))
                    .route(
                        "/bulk",
                        web::post().to(|| async {
                            Err::<HttpResponse, AppError>(AppError::bad_request(
                                "Owner not found in this tenant",
                            ))
                        }),
                    )
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

#[actix_web::test]
async fn a_declared_envelope_wraps_every_error_of_the_operation() {
    let stub = Arc::new(Stub::default());
    let post = |token: Option<&str>| {
        let req = TestRequest::post().uri("/api/bulk");
        match token {
            Some(t) => req.insert_header(("authorization", format!("Bearer {t}"))),
            None => req,
        }
    };
    let (code, body) = serve(stub.clone(), post(None)).await;
    assert_eq!(code.as_u16(), 401);
    assert_eq!(
        body,
        serde_json::json!({"ok": false, "progressJobId": null, "message": "Unauthorized", "error": "Unauthorized"})
    );
    let (code, body) = serve(stub.clone(), post(Some("nobody"))).await;
    assert_eq!(code.as_u16(), 403);
    assert_eq!(
        body,
        serde_json::json!({"ok": false, "progressJobId": null, "message": "Forbidden",
            "error": "Forbidden", "requiredFeatures": ["items.view"]})
    );
    // The handler's own errors too.
    let (code, body) = serve(stub.clone(), post(Some("viewer"))).await;
    assert_eq!(code.as_u16(), 400);
    assert_eq!(
        body,
        serde_json::json!({"ok": false, "progressJobId": null,
            "message": "Owner not found in this tenant", "error": "Owner not found in this tenant"})
    );
    // Operations without one keep the plain body.
    let (_, body) = serve(stub.clone(), get("/api/items/1", None)).await;
    assert_eq!(body, serde_json::json!({"error": "Unauthorized"}));
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
    assert!(items.get("x-error-envelope").is_none());
}

/// A literal template registered before a parametric one under the same
/// method: each request is held to the declaration of the route the router
/// runs, not to both.
#[actix_web::test]
async fn overlapping_templates_follow_the_route_the_router_picks() {
    let stub = Arc::new(Stub::default());
    let shelf = TestRequest::get()
        .uri("/api/library/shelf")
        .insert_header(("authorization", "Bearer nobody"));
    assert_eq!(serve(stub.clone(), shelf).await.0, 200);
    let item = TestRequest::get()
        .uri("/api/library/7")
        .insert_header(("authorization", "Bearer viewer"));
    let (status, body) = serve(stub.clone(), item).await;
    assert_eq!(status, 403);
    assert_eq!(
        body["requiredFeatures"],
        serde_json::json!(["library.admin"])
    );
    assert_eq!(
        serve(stub, TestRequest::get().uri("/api/library/shelf"))
            .await
            .0,
        401
    );
}
