//! [`KeyCaller`]: business rules' `CALL_OPEN_MERCATO` as an API key, served
//! in process through the app's own service path.
//!
//! The key's principal is resolved like a request signed in with it
//! ([`ApiKeyAuthenticator::principal_for`]: live key of the rule's tenant,
//! its roles bounded by its creator, the rule's organization selected), the
//! registry's write guards attached, and put into the request's extensions,
//! where the access policy and the handlers' `AuthContext` extractor read
//! it (bounded by the call's author, `PlatformCall::author`: the key acts
//! with what both hold): the operation's declared features, the handler's own checks, the
//! command bus (action log as the key, source `business_rule`) all apply.
//! No client can put a principal into a request's extensions.

use std::sync::Arc;

use actix_web::http::Method;
use actix_web::web::Bytes;
use futures_util::future::BoxFuture;
use serde_json::Value;
use stoa_acl::{PlatformAnswer, PlatformCall, PlatformCaller};
use stoa_core::AppError;
use stoa_core::command::WriteGuards;
use stoa_core::http::{InProcess, InProcessRequest};

use crate::ApiKeyAuthenticator;

pub struct KeyCaller {
    keys: Arc<ApiKeyAuthenticator>,
    guards: WriteGuards,
    app: InProcess,
}

impl KeyCaller {
    /// `guards`: the registry's write guards (logging to the pool), as the
    /// authenticator attaches them to every request.
    pub fn new(keys: Arc<ApiKeyAuthenticator>, guards: WriteGuards, app: InProcess) -> Self {
        Self { keys, guards, app }
    }

    async fn serve(&self, call: PlatformCall) -> Result<PlatformAnswer, AppError> {
        let method = Method::from_bytes(call.method.as_bytes())
            .map_err(|_| AppError::bad_request(format!("unknown method {}", call.method)))?;
        if !call.path.starts_with("/api/") {
            return Err(AppError::bad_request("the endpoint must be an /api/ path"));
        }
        let mut principal = self
            .keys
            .principal_for(call.api_key_id, call.tenant_id, call.organization_id)
            .await?;
        // Delegated work acts with no more than its author holds now.
        if let Some(author) = &call.author {
            principal = principal.delegated_by(author);
        }
        principal.guards = self.guards.clone();
        let body = match (&method, call.body) {
            (&Method::GET, _) | (_, None) => None,
            (_, Some(body)) => Some(Bytes::from(body.to_string())),
        };
        let answer = self
            .app
            .call(InProcessRequest {
                method,
                path: call.path,
                headers: call.headers,
                body,
                prepare: Some(Box::new(move |ext| {
                    ext.insert(principal);
                })),
            })
            .await
            .map_err(AppError::internal)?;
        let body = if answer.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&answer.body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&answer.body).into()))
        };
        Ok(PlatformAnswer {
            status: answer.status,
            body,
        })
    }
}

impl PlatformCaller for KeyCaller {
    fn call(&self, call: PlatformCall) -> BoxFuture<'_, Result<PlatformAnswer, AppError>> {
        Box::pin(self.serve(call))
    }
}
