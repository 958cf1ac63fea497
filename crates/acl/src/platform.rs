//! Calls of the platform's own API made by business rules
//! (`CALL_OPEN_MERCATO`), as an API key: what the rules module asks and the
//! caller the server registers once its app exists.
//!
//! The server builds its app after the module context ([`crate::Services`]),
//! so the caller is late-bound: [`PlatformSlot`] is created empty with the
//! context and filled by the server (`stoa_api_keys::KeyCaller` over
//! `stoa_core::http::InProcess`). A process that never fills it (a tool, a
//! test without the app) answers every call with an error.

use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use serde_json::Value;
use stoa_core::AppError;
use uuid::Uuid;

/// One call: `method path` (under `/api`, as `platform-call-options` lists
/// it) as API key `api_key_id` of `tenant_id`, in `organization_id`.
#[derive(Clone, Debug)]
pub struct PlatformCall {
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub api_key_id: Uuid,
    /// `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    /// e.g. `/api/customers/deals` (may carry a query string).
    pub path: String,
    /// The JSON body (none for `GET`).
    pub body: Option<Value>,
    /// Extra headers (`x-business-rule-id`, ...).
    pub headers: Vec<(String, String)>,
    /// Who the call acts for (the rule's author as they stand now): the key
    /// then acts with what both hold ([`crate::AuthContext::delegated_by`]).
    /// `None` only for work no person authored.
    pub author: Option<crate::AuthContext>,
}

/// The operation's answer: its status and JSON body (`null` when empty,
/// a string when not JSON).
#[derive(Clone, Debug, PartialEq)]
pub struct PlatformAnswer {
    pub status: u16,
    pub body: Value,
}

/// Serves a [`PlatformCall`] through the app's own service path as the key:
/// `Err` (with the reason) when the key may not act at all — unknown,
/// revoked, expired, of another tenant, outside the organization — and the
/// operation's own answer otherwise (a 403 for a missing feature included).
pub trait PlatformCaller: Send + Sync {
    fn call(&self, call: PlatformCall) -> BoxFuture<'_, Result<PlatformAnswer, AppError>>;
}

/// The late-bound caller (cheap to clone; every clone sees the same caller).
#[derive(Clone, Default)]
pub struct PlatformSlot(Arc<OnceLock<Arc<dyn PlatformCaller>>>);

impl std::fmt::Debug for PlatformSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlatformSlot")
            .field("set", &self.0.get().is_some())
            .finish()
    }
}

impl PlatformSlot {
    /// Registers the caller (once; a second caller is ignored and `false`).
    pub fn set(&self, caller: Arc<dyn PlatformCaller>) -> bool {
        self.0.set(caller).is_ok()
    }

    pub fn get(&self) -> Option<&Arc<dyn PlatformCaller>> {
        self.0.get()
    }

    /// Calls through the registered caller; an error when none is.
    pub async fn call(&self, call: PlatformCall) -> Result<PlatformAnswer, AppError> {
        match self.get() {
            Some(caller) => caller.call(call).await,
            None => Err(AppError::internal(
                "no platform caller is registered in this process",
            )),
        }
    }
}
