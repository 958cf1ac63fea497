//! The AI-tool slot: what an agent may read or change in a module, and
//! the handler that runs a call on the caller's connection.

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use stoa_core::AppError;
use utoipa::ToSchema;

use crate::context::AuthContext;

/// Whether a tool only reads or changes data (a mutation goes through the
/// assistant's approval gate: a person confirms it first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    Read,
    Mutation,
}

/// One call of a tool: the caller it acts for (its grants, tenant and
/// organizations, with the write guards attached: a mutation runs through the
/// command bus as this caller), the caller's connection and the input the
/// model produced, already checked against the tool's schema by the
/// assistant.
pub struct ToolCall<'a> {
    pub auth: &'a AuthContext,
    /// The caller's connection, inside the caller's transaction when it has
    /// one: the AI confirm locks its pending action, runs the tool and
    /// records the outcome on it, so the tool's write commits with the
    /// outcome or not at all. A handler works on it (the module's `_in`
    /// service steps) and never takes a second pooled connection.
    pub conn: &'a mut AsyncPgConnection,
    pub input: Value,
}

/// What runs a tool. A mutation writes through the command bus with
/// `call.auth.actor()` on `call.conn`, so it is authorized, logged and
/// undoable like a route, and part of the caller's transaction.
pub trait ToolHandler: Send + Sync {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>>;
}

/// A tool an AI agent may call.
#[derive(Clone)]
pub struct AiTool {
    /// Dotted, e.g. `customers.update_deal_stage`.
    pub name: &'static str,
    pub module: &'static str,
    pub display_name: &'static str,
    pub description: &'static str,
    /// The JSON schema of its input (an object schema).
    pub input_schema: fn() -> Value,
    pub kind: ToolKind,
    /// Every feature the caller must hold to have it run.
    pub features: &'static [&'static str],
    pub handler: Arc<dyn ToolHandler>,
    /// For a mutation: loads the record it would change, for the approval
    /// card's diff and the confirm-time version check. It answers
    /// `{recordId, entityType, recordVersion, before}` (`recordVersion`: a
    /// string that changes with every write, e.g. `updatedAt`) for the same
    /// input as the handler, as the same caller.
    pub before: Option<Arc<dyn ToolHandler>>,
}

impl std::fmt::Debug for AiTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AiTool")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("features", &self.features)
            .finish_non_exhaustive()
    }
}

impl AiTool {
    /// Runs the tool for `call.auth`: 403 (naming the features) unless the
    /// caller holds every feature the tool declares. The assistant's own gate
    /// checks more (whitelists, policies); this one holds for every caller.
    pub async fn run(&self, call: ToolCall<'_>) -> Result<Value, AppError> {
        call.auth.require_all(self.features)?;
        self.handler.call(call).await
    }

    /// The record a mutation would change ([`AiTool::before`]), checked like
    /// [`AiTool::run`]; `None` when the tool declares no loader.
    pub async fn load_before(&self, call: ToolCall<'_>) -> Result<Option<Value>, AppError> {
        call.auth.require_all(self.features)?;
        match &self.before {
            Some(loader) => loader.call(call).await.map(Some),
            None => Ok(None),
        }
    }
}
