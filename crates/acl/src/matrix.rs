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
use stoa_core::http::{
    Access, AccessPolicy, BadJson, ErrorEnvelope, ErrorShape, Method, Operation,
};

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

    /// The declarations that apply to a request for `path`. When the router
    /// resolves the request to a declared template (`routed`: the pattern of
    /// the first registered route that matches, the one actix will run), that
    /// declaration alone applies: a literal template registered before a
    /// parametric one under the same method (`/attachments/library` before
    /// `/attachments/{id}`) needs nothing of the other. Otherwise (a path the
    /// router sees percent-decoded, say) every declaration whose template
    /// matches applies, and the check demands all of them.
    fn matching<'a>(
        &'a self,
        method: Method,
        path: &'a str,
        routed: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Operation> {
        let declared_route = routed.filter(|pattern| {
            self.operations
                .iter()
                .any(|(op, def)| op.method == method && def.pattern() == Some(*pattern))
        });
        self.operations
            .iter()
            .filter(move |(op, def)| {
                op.method == method
                    && match declared_route {
                        Some(pattern) => def.pattern() == Some(pattern),
                        None => def.is_match(path),
                    }
            })
            .map(|(op, _)| op)
    }

    fn required(&self, req: &HttpRequest) -> Required {
        let Some(method) = Method::of(req.method()) else {
            return Required::Nothing;
        };
        // The path as the router matches it (percent-decoded), not the raw
        // one: `/api/%64evices` must meet the declarations of `/api/devices`.
        let path = req.match_info().as_str();
        let routed = req.match_pattern();
        let mut found = false;
        let mut open = true;
        let mut features = Vec::new();
        for op in self.matching(method, path, routed.as_deref()) {
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

    /// The error shape, bad-JSON message and envelope declared by the
    /// operation a request runs.
    fn error_shape(
        &self,
        req: &HttpRequest,
    ) -> Option<(ErrorShape, Option<&'static str>, Option<ErrorEnvelope>)> {
        let method = Method::of(req.method())?;
        let path = req.match_info().as_str();
        let routed = req.match_pattern();
        self.matching(method, path, routed.as_deref())
            .next()
            .map(|op| (op.errors, op.bad_json, op.envelope))
    }

    /// The declared operation of `method path` (`path` relative to `/api`).
    pub fn operation_of(&self, method: Method, path: &str) -> Option<Operation> {
        self.operations
            .iter()
            .find(|(op, _)| op.method == method && op.path == path)
            .map(|(op, _)| *op)
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
        if let Some((shape, bad_json, envelope)) = self.error_shape(req) {
            // The access middleware renders the handler's input errors in it,
            // and every error (this check's 401 and 403 included) in the
            // envelope; the JSON extractor reads the first two.
            let mut extensions = req.extensions_mut();
            extensions.insert(shape);
            if let Some(message) = bad_json {
                extensions.insert(BadJson(message));
            }
            if let Some(envelope) = envelope {
                extensions.insert(envelope);
            }
        }
        let Required::Features(features) = self.required(req) else {
            return Box::pin(ready(Ok(())));
        };
        if let Some(ctx) = req.extensions().get::<AuthContext>() {
            stoa_core::rls::set_request_scope(ctx.rls_scope());
            return Box::pin(ready(ctx.require_all(&features)));
        }
        let credentials = Credentials::from_request(req);
        if credentials.is_empty() {
            return Box::pin(ready(Err(AppError::unauthorized())));
        }
        let authenticator = self.authenticator.clone();
        let req = req.clone();
        Box::pin(async move {
            // Across tenants, then the caller's scope (see `AuthContext`).
            let ctx =
                stoa_core::rls::bypass("authenticate", authenticator.authenticate(&credentials))
                    .await?;
            stoa_core::rls::set_request_scope(ctx.rls_scope());
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
                let Some(declared) = self.operation_of(method, relative) else {
                    continue;
                };
                let access = declared.access;
                let extensions = op.extensions.get_or_insert_with(Default::default);
                extensions.insert(
                    "x-required-features".into(),
                    serde_json::json!(access.features()),
                );
                extensions.insert(
                    "x-error-shape".into(),
                    serde_json::Value::from(declared.errors.letter()),
                );
                if let Some(envelope) = declared.envelope {
                    // Keys every error answer carries beside `error`.
                    extensions.insert("x-error-envelope".into(), envelope.name().into());
                }
                if let Some(message) = declared.bad_json {
                    // The `error` of a body that is not JSON.
                    extensions.insert("x-bad-json-error".into(), message.into());
                }
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
mod tests;
