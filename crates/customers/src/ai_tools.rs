//! The AI assistant's tools over deals (`stoa_acl::AiTool`, registered in
//! [`crate::register`]): they call this module's services as the calling
//! user, never its tables, so a mutation is authorized, logged, undoable
//! and seen by write guards exactly like the route.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use stoa_acl::{AiTool, ToolCall, ToolHandler, ToolKind, UserDirectory};
use stoa_core::AppError;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;
use validator::Validate;

use crate::dto::UpdateDeal;
use crate::service::deals;
use crate::{DEALS_MANAGE, DEALS_VIEW, owners};

fn users() -> Result<Arc<dyn UserDirectory>, AppError> {
    owners::installed().ok_or_else(|| AppError::internal("customers: no user directory installed"))
}

fn deal_id(input: &Value) -> Result<Uuid, AppError> {
    input["dealId"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| AppError::bad_request("dealId must be a uuid"))
}

/// `customers.get_deal {dealId}`: the deal as `GET /customers/deals/{id}` shows it.
struct GetDeal;

impl ToolHandler for GetDeal {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            call.auth.require(DEALS_VIEW)?;
            let id = deal_id(&call.input)?;
            let users = users()?;
            let mut conn = call.db.conn().await?;
            let detail = deals::detail(&mut conn, call.auth, users.as_ref(), id).await?;
            serde_json::to_value(detail).map_err(AppError::internal)
        })
    }
}

/// The deal a mutation would change: `{recordId, entityType, recordVersion, before}`.
struct DealBefore;

impl ToolHandler for DealBefore {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            call.auth.require(DEALS_VIEW)?;
            let id = deal_id(&call.input)?;
            let users = users()?;
            let mut conn = call.db.conn().await?;
            let detail = deals::detail(&mut conn, call.auth, users.as_ref(), id).await?;
            let before = serde_json::to_value(&detail.deal).map_err(AppError::internal)?;
            Ok(json!({
                "recordId": id,
                "entityType": "customers.deal",
                "recordVersion": before["updatedAt"],
                "before": before,
            }))
        })
    }
}

/// The input of a deal mutation: the optimistic lock the assistant adds,
/// and the route's body (the tool's schema already limited its fields).
#[derive(Deserialize)]
struct DealPatch {
    #[serde(default, rename = "_recordVersion")]
    record_version: Option<String>,
    #[serde(flatten)]
    rest: serde_json::Map<String, Value>,
}

/// `customers.update_deal` / `customers.update_deal_stage`: `PUT
/// /customers/deals/{id}` through the deals service, as the caller. The
/// assistant passes the version it showed for approval as `_recordVersion`
/// (the optimistic lock: a change since then fails the write).
struct UpdateDealTool;

impl ToolHandler for UpdateDealTool {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            call.auth.require(DEALS_MANAGE)?;
            let id = deal_id(&call.input)?;
            let mut patch: DealPatch = serde_json::from_value(call.input.clone())
                .map_err(|e| AppError::bad_request(format!("Invalid input: {e}")))?;
            patch.rest.remove("dealId");
            let expected = patch
                .record_version
                .as_deref()
                .map(|v| OffsetDateTime::parse(v, &Rfc3339))
                .transpose()
                .map_err(|_| {
                    AppError::bad_request("_recordVersion must be an ISO-8601 timestamp")
                })?;
            let body: UpdateDeal = serde_json::from_value(Value::Object(patch.rest))
                .map_err(|e| AppError::bad_request(format!("Invalid input: {e}")))?;
            body.validate()
                .map_err(|e| AppError::bad_request(format!("Invalid input: {e}")))?;
            let users = users()?;
            let op = deals::update(call.db, call.auth, users.as_ref(), id, body, expected).await?;
            Ok(json!({
                "recordId": id,
                "commandName": op.command_id,
                "operation": op,
            }))
        })
    }
}

fn get_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"dealId": {"type": "string", "format": "uuid"}},
        "required": ["dealId"],
        "additionalProperties": false
    })
}

fn stage_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "dealId": {"type": "string", "format": "uuid"},
            "pipelineStageId": {"type": "string", "format": "uuid"}
        },
        "required": ["dealId", "pipelineStageId"],
        "additionalProperties": false
    })
}

fn update_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "dealId": {"type": "string", "format": "uuid"},
            "title": {"type": "string", "minLength": 1, "maxLength": 200},
            "status": {"type": "string", "maxLength": 50},
            "probability": {"type": "integer", "minimum": 0, "maximum": 100},
            "valueAmount": {"type": "string"},
            "valueCurrency": {"type": "string", "minLength": 3, "maxLength": 3},
            "description": {"type": "string", "maxLength": 4000}
        },
        "required": ["dealId"],
        "additionalProperties": false
    })
}

/// The deal tools.
pub fn tools() -> Vec<AiTool> {
    vec![
        AiTool {
            name: "customers.get_deal",
            module: "customers",
            display_name: "Get deal",
            description: "Reads one deal with its pipeline stages and owner.",
            input_schema: get_schema,
            kind: ToolKind::Read,
            features: &[DEALS_VIEW],
            handler: Arc::new(GetDeal),
            before: None,
        },
        AiTool {
            name: "customers.update_deal_stage",
            module: "customers",
            display_name: "Update deal stage",
            description: "Moves a deal to another stage of its pipeline.",
            input_schema: stage_schema,
            kind: ToolKind::Mutation,
            features: &[DEALS_VIEW, DEALS_MANAGE],
            handler: Arc::new(UpdateDealTool),
            before: Some(Arc::new(DealBefore)),
        },
        AiTool {
            name: "customers.update_deal",
            module: "customers",
            display_name: "Update deal",
            description: "Changes a deal's title, status, probability, value or description.",
            input_schema: update_schema,
            kind: ToolKind::Mutation,
            features: &[DEALS_VIEW, DEALS_MANAGE],
            handler: Arc::new(UpdateDealTool),
            before: Some(Arc::new(DealBefore)),
        },
    ]
}
