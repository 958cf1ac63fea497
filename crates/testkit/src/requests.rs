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

/// `DELETE path` with a JSON body and a bearer token (the collection routes
/// that take the id in the body).
pub fn delete_with_body(path: &str, token: &str, body: Value) -> TestRequest {
    bearer(TestRequest::delete().uri(path).set_json(body), token)
}

/// `POST path` with a form body.
pub fn form(path: &str, body: &str) -> TestRequest {
    TestRequest::post()
        .uri(path)
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .set_payload(body.to_string())
}

/// `PATCH path` with a JSON body and a bearer token.
pub fn patch_json(path: &str, token: &str, body: Value) -> TestRequest {
    bearer(TestRequest::patch().uri(path).set_json(body), token)
}

/// A `multipart/form-data` body with text fields and file parts.
///
/// ```ignore
/// let req = Multipart::new()
///     .text("entityId", "deals.deal")
///     .file("file", "notes.txt", "text/plain", "hello")
///     .post("/api/attachments");
/// let res = app.send(bearer(req, &token)).await;
/// ```
#[derive(Clone, Debug)]
pub struct Multipart {
    boundary: String,
    body: Vec<u8>,
}

impl Default for Multipart {
    fn default() -> Self {
        Self::new()
    }
}

impl Multipart {
    pub fn new() -> Self {
        Self {
            boundary: format!("stoa-testkit-{}", uuid::Uuid::new_v4().simple()),
            body: Vec::new(),
        }
    }

    /// A text field.
    pub fn text(mut self, name: &str, value: &str) -> Self {
        self.part_head(name, None, None);
        self.body.extend_from_slice(value.as_bytes());
        self.body.extend_from_slice(b"\r\n");
        self
    }

    /// A file part with its filename and content type.
    pub fn file(
        mut self,
        name: &str,
        filename: &str,
        content_type: &str,
        content: impl AsRef<[u8]>,
    ) -> Self {
        self.part_head(name, Some(filename), Some(content_type));
        self.body.extend_from_slice(content.as_ref());
        self.body.extend_from_slice(b"\r\n");
        self
    }

    fn part_head(&mut self, name: &str, filename: Option<&str>, content_type: Option<&str>) {
        let quote = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let mut head = format!(
            "--{}\r\nContent-Disposition: form-data; name=\"{}\"",
            self.boundary,
            quote(name)
        );
        if let Some(filename) = filename {
            head.push_str(&format!("; filename=\"{}\"", quote(filename)));
        }
        head.push_str("\r\n");
        if let Some(content_type) = content_type {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        head.push_str("\r\n");
        self.body.extend_from_slice(head.as_bytes());
    }

    /// The `Content-Type` header value (with the boundary).
    pub fn content_type(&self) -> String {
        format!("multipart/form-data; boundary={}", self.boundary)
    }

    /// The encoded body, closing delimiter included.
    pub fn body(&self) -> Vec<u8> {
        let mut body = self.body.clone();
        body.extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        body
    }

    /// Puts this body (and its content type) on `req`.
    pub fn into_request(self, req: TestRequest) -> TestRequest {
        req.insert_header(("content-type", self.content_type()))
            .set_payload(self.body())
    }

    /// `POST path` with this body.
    pub fn post(self, path: &str) -> TestRequest {
        self.into_request(TestRequest::post().uri(path))
    }

    /// `PUT path` with this body.
    pub fn put(self, path: &str) -> TestRequest {
        self.into_request(TestRequest::put().uri(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_bodies_follow_rfc_7578() {
        let form = Multipart::new().text("entityId", "deals.deal").file(
            "file",
            "a \"b\".txt",
            "text/plain",
            b"hello\r\n",
        );
        let boundary = form.boundary.clone();
        assert_eq!(
            form.content_type(),
            format!("multipart/form-data; boundary={boundary}")
        );
        let expected = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"entityId\"\r\n\r\n\
             deals.deal\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; \
             filename=\"a \\\"b\\\".txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n\r\n\
             --{boundary}--\r\n"
        );
        assert_eq!(String::from_utf8(form.body()).unwrap_or_default(), expected);
        let req = form.post("/api/x").to_http_request();
        assert_eq!(req.method(), actix_web::http::Method::POST);
        assert!(
            req.headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.ends_with(&boundary))
        );
    }
}
