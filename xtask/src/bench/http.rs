//! Requests the bench makes once before measuring: signing in, a list
//! cursor, an API key.

use std::net::SocketAddr;

use super::load::{self, Request};
use super::scenarios::with_bearer;
use crate::cmd::Result;

/// `nextCursor` of a list page.
pub(super) fn cursor_of(addr: SocketAddr, path: &str, token: &str) -> Result<String> {
    let (status, body) = load::once(addr, &with_bearer(Request::get(path), token))?;
    let json: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| format!("{path} is not JSON: {e}"))?;
    match json["nextCursor"].as_str() {
        Some(cursor) if status == 200 => Ok(cursor.to_string()),
        _ => Err(format!("{path} answered {status} without a cursor: {json}")),
    }
}

/// Signs in with a login form and returns the access token.
pub(super) fn login(addr: SocketAddr, form: &str) -> Result<String> {
    let req = Request::post("/api/auth/login", "application/x-www-form-urlencoded", form);
    let (status, body) = load::once(addr, &req)?;
    let json: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| format!("login answer is not JSON: {e}"))?;
    match json["token"].as_str() {
        Some(token) if status == 200 => Ok(token.to_string()),
        _ => Err(format!("login failed with {status}: {json}")),
    }
}

/// Creates an API key holding the demo `admin` role (as the super admin) and
/// returns its secret.
pub(super) fn create_key(addr: SocketAddr, token: &str) -> Result<String> {
    let req = with_bearer(
        Request::post(
            "/api/api_keys/keys",
            "application/json",
            r#"{"name":"bench","roles":["admin"]}"#,
        ),
        token,
    );
    let (status, body) = load::once(addr, &req)?;
    let json: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| format!("key answer is not JSON: {e}"))?;
    match json["secret"].as_str() {
        Some(secret) if status == 201 => Ok(secret.to_string()),
        _ => Err(format!("creating an API key failed with {status}: {json}")),
    }
}
