//! Request builders for authenticated calls.

use actix_web::test::TestRequest;
use serde_json::Value;

/// Adds `Authorization: Bearer <token>`.
pub fn bearer(req: TestRequest, token: &str) -> TestRequest {
    req.insert_header(("authorization", format!("Bearer {token}")))
}

/// `GET path` with a bearer token.
pub fn get(path: &str, token: &str) -> TestRequest {
    bearer(TestRequest::get().uri(path), token)
}

/// `POST path` with a JSON body and a bearer token.
pub fn post_json(path: &str, token: &str, body: Value) -> TestRequest {
    bearer(TestRequest::post().uri(path).set_json(body), token)
}

/// `PUT path` with a JSON body and a bearer token.
pub fn put_json(path: &str, token: &str, body: Value) -> TestRequest {
    bearer(TestRequest::put().uri(path).set_json(body), token)
}

/// `DELETE path` with a bearer token.
pub fn delete(path: &str, token: &str) -> TestRequest {
    bearer(TestRequest::delete().uri(path), token)
}

/// `POST path` with a form body.
pub fn form(path: &str, body: &str) -> TestRequest {
    TestRequest::post()
        .uri(path)
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .set_payload(body.to_string())
}
