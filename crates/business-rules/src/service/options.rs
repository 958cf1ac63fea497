//! `GET /business_rules/platform-call-options`: the operations a
//! `CALL_OPEN_MERCATO` action could name, from the server's declared
//! operations (the authorization matrix, which the server's test holds equal
//! to the mounted routes and the OpenAPI document), with their required
//! features.

use stoa_acl::Registry;
use stoa_core::http::Access;

use crate::dto::{CallEndpoint, CallOptions};

const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];
const SELF_PATH: &str = "/business_rules/platform-call-options";

pub fn call_options(registry: &Registry) -> CallOptions {
    let mut endpoints: Vec<CallEndpoint> = registry
        .operations()
        .iter()
        .filter(|op| {
            let path = op.path;
            !path.contains('{')
                && !path.contains('[')
                && !path.starts_with("/docs")
                && !path.split('/').any(|s| s == "options")
                && path != SELF_PATH
                && matches!(op.access, Access::Features(_) | Access::Authenticated)
        })
        .map(|op| {
            let path = format!("/api{}", op.path);
            let method = op.method.as_openapi().to_ascii_uppercase();
            let features = match op.access {
                Access::Features(f) => f.iter().map(|s| (*s).to_string()).collect(),
                _ => Vec::new(),
            };
            CallEndpoint {
                id: format!("{method} {path}"),
                label: format!("{method} {path}"),
                path,
                method,
                summary: None,
                operation_id: None,
                required_features: features,
            }
        })
        .collect();
    let rank = |m: &str| {
        METHODS
            .iter()
            .position(|x| *x == m)
            .unwrap_or(METHODS.len())
    };
    endpoints.sort_by(|a, b| {
        a.path
            .cmp(&b.path)
            .then(rank(&a.method).cmp(&rank(&b.method)))
    });
    endpoints.dedup_by(|a, b| a.id == b.id);
    CallOptions { endpoints }
}
