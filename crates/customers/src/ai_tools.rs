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
use crate::error::CustomersError;
use crate::queries::stages;
use crate::service::deals;
use crate::{DEALS_MANAGE, DEALS_VIEW};

fn deal_id(input: &Value) -> Result<Uuid, AppError> {
    input["dealId"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| AppError::bad_request("dealId must be a uuid"))
}

/// `customers.get_deal {dealId}`: the deal as `GET /customers/deals/{id}` shows it.
struct GetDeal {
    users: Arc<dyn UserDirectory>,
}

impl ToolHandler for GetDeal {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            call.auth.require(DEALS_VIEW)?;
            let id = deal_id(&call.input)?;
            let detail = deals::detail(call.conn, call.auth, self.users.as_ref(), id).await?;
            serde_json::to_value(detail).map_err(AppError::internal)
        })
    }
}

/// The deal a mutation would change: `{recordId, entityType, recordVersion, before}`.
struct DealBefore {
    users: Arc<dyn UserDirectory>,
}

impl ToolHandler for DealBefore {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            call.auth.require(DEALS_VIEW)?;
            let id = deal_id(&call.input)?;
            let detail = deals::detail(call.conn, call.auth, self.users.as_ref(), id).await?;
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

/// The `_recordVersion` the assistant passes (the version it showed for
/// approval), as the write's optimistic lock.
fn expected_version(raw: Option<&str>) -> Result<Option<OffsetDateTime>, AppError> {
    raw.map(|v| OffsetDateTime::parse(v, &Rfc3339))
        .transpose()
        .map_err(|_| AppError::bad_request("_recordVersion must be an ISO-8601 timestamp"))
}

/// `PUT /customers/deals/{id}` with `body`, through the deals service, as
/// the caller, on the caller's connection (a step of the confirm's
/// transaction).
async fn update_deal(
    call: ToolCall<'_>,
    users: &dyn UserDirectory,
    id: Uuid,
    body: serde_json::Map<String, Value>,
    expected: Option<OffsetDateTime>,
) -> Result<Value, AppError> {
    let body: UpdateDeal = serde_json::from_value(Value::Object(body))
        .map_err(|e| AppError::bad_request(format!("Invalid input: {e}")))?;
    body.validate()
        .map_err(|e| AppError::bad_request(format!("Invalid input: {e}")))?;
    let by = deals::WrittenBy::caller(call.auth);
    let op = deals::update_in(call.conn, call.auth, users, id, body, expected, by).await?;
    Ok(json!({
        "recordId": id,
        "commandName": op.command_id,
        "operation": op,
    }))
}

/// `customers.update_deal`: `PUT /customers/deals/{id}` through the deals
/// service, as the caller. The assistant passes the version it showed for
/// approval as `_recordVersion` (the optimistic lock: a change since then
/// fails the write).
struct UpdateDealTool {
    users: Arc<dyn UserDirectory>,
}

impl ToolHandler for UpdateDealTool {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            call.auth.require(DEALS_MANAGE)?;
            let id = deal_id(&call.input)?;
            let mut patch: DealPatch = serde_json::from_value(call.input.clone())
                .map_err(|e| AppError::bad_request(format!("Invalid input: {e}")))?;
            patch.rest.remove("dealId");
            let expected = expected_version(patch.record_version.as_deref())?;
            update_deal(call, self.users.as_ref(), id, patch.rest, expected).await
        })
    }
}

/// Where `customers.update_deal_stage` moves a deal: to a pipeline stage,
/// or to a status (`won`, `lost`, ...), exactly one of the two (the
/// reference's input).
enum StageTarget {
    Stage(Uuid),
    Status(String),
}

const EXACTLY_ONE: &str =
    "Invalid input: toPipelineStageId: Provide exactly one of toPipelineStageId or toStage.";

fn stage_target(input: &Value) -> Result<StageTarget, AppError> {
    let present = |key: &str| input.get(key).is_some_and(|v| !v.is_null());
    match (present("toPipelineStageId"), present("toStage")) {
        (true, false) => input["toPipelineStageId"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .map(StageTarget::Stage)
            .ok_or_else(|| AppError::bad_request("Invalid input: toPipelineStageId: Invalid uuid")),
        (false, true) => match input["toStage"].as_str().map(str::trim) {
            Some(s) if (1..=50).contains(&s.chars().count()) => {
                Ok(StageTarget::Status(s.to_string()))
            }
            _ => Err(AppError::bad_request(
                "Invalid input: toStage: must be a status of 1 to 50 characters",
            )),
        },
        _ => Err(AppError::bad_request(EXACTLY_ONE)),
    }
}

/// The deal's body for `target`: the stage (the service checks it is a
/// stage of the deal's organization and takes its pipeline) or the status.
fn stage_body(target: &StageTarget) -> serde_json::Map<String, Value> {
    let mut body = serde_json::Map::new();
    match target {
        StageTarget::Stage(stage) => {
            body.insert("pipelineStageId".into(), json!(stage));
        }
        StageTarget::Status(status) => {
            body.insert("status".into(), json!(status));
        }
    }
    body
}

/// `customers.update_deal_stage {dealId, toPipelineStageId | toStage}`:
/// the deal's update command as the caller, like `customers.update_deal`.
struct UpdateDealStageTool {
    users: Arc<dyn UserDirectory>,
}

impl ToolHandler for UpdateDealStageTool {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            call.auth.require(DEALS_MANAGE)?;
            let id = deal_id(&call.input)?;
            let target = stage_target(&call.input)?;
            let expected = expected_version(call.input["_recordVersion"].as_str())?;
            update_deal(call, self.users.as_ref(), id, stage_body(&target), expected).await
        })
    }
}

/// The deal a stage move would change, and what it would become: the stage
/// (id and label; a stage of the deal's organization, else 400) or the
/// status, so the approval card shows the move.
struct DealStageBefore {
    users: Arc<dyn UserDirectory>,
}

impl ToolHandler for DealStageBefore {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            call.auth.require(DEALS_VIEW)?;
            let id = deal_id(&call.input)?;
            let target = stage_target(&call.input)?;
            let detail = deals::detail(call.conn, call.auth, self.users.as_ref(), id).await?;
            let after = match &target {
                StageTarget::Stage(stage) => {
                    let found = stages::find(call.conn, detail.deal.tenant_id, *stage)
                        .await?
                        .filter(|s| s.organization_id == detail.deal.organization_id)
                        .ok_or(CustomersError::StageNotFound)?;
                    json!({"pipelineStageId": found.id, "pipelineStage": found.label})
                }
                StageTarget::Status(status) => json!({"status": status}),
            };
            let before = serde_json::to_value(&detail.deal).map_err(AppError::internal)?;
            Ok(json!({
                "recordId": id,
                "entityType": "customers.deal",
                "recordVersion": before["updatedAt"],
                "before": before,
                "after": after,
            }))
        })
    }
}

fn get_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "dealId": {"type": "string", "format": "uuid"},
            "includeRelated": {
                "type": "boolean",
                "description": "Accepted as the reference's; stoa has no notes, activities, people or companies to add (the deal comes with its pipeline stages and owner)."
            }
        },
        "required": ["dealId"],
        "additionalProperties": false
    })
}

/// The reference's input: `dealId` and exactly one of `toPipelineStageId`
/// and `toStage` (checked by the handler and the loader: a plain object
/// schema, which every provider accepts for a function's parameters).
fn stage_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "dealId": {"type": "string", "format": "uuid"},
            "toPipelineStageId": {
                "type": "string",
                "format": "uuid",
                "description": "A pipeline stage of the deal's organization. Provide exactly one of toPipelineStageId or toStage."
            },
            "toStage": {
                "type": "string",
                "minLength": 1,
                "maxLength": 50,
                "description": "A status slug such as won or lost. Provide exactly one of toPipelineStageId or toStage."
            }
        },
        "required": ["dealId"],
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

/// The deal tools, which look owners up in `users`.
pub fn tools(users: &Arc<dyn UserDirectory>) -> Vec<AiTool> {
    let users = || users.clone();
    vec![
        AiTool {
            name: "customers.get_deal",
            module: "customers",
            display_name: "Get deal",
            description: "Reads one deal with its pipeline stages and owner.",
            input_schema: get_schema,
            kind: ToolKind::Read,
            features: &[DEALS_VIEW],
            handler: Arc::new(GetDeal { users: users() }),
            before: None,
        },
        AiTool {
            name: "customers.update_deal_stage",
            module: "customers",
            display_name: "Update deal stage",
            description: "Moves a deal to a pipeline stage (toPipelineStageId) or to a status such as won or lost (toStage): exactly one of the two.",
            input_schema: stage_schema,
            kind: ToolKind::Mutation,
            features: &[DEALS_VIEW, DEALS_MANAGE],
            handler: Arc::new(UpdateDealStageTool { users: users() }),
            before: Some(Arc::new(DealStageBefore { users: users() })),
        },
        AiTool {
            name: "customers.update_deal",
            module: "customers",
            display_name: "Update deal",
            description: "Changes a deal's title, status, probability, value or description.",
            input_schema: update_schema,
            kind: ToolKind::Mutation,
            features: &[DEALS_VIEW, DEALS_MANAGE],
            handler: Arc::new(UpdateDealTool { users: users() }),
            before: Some(Arc::new(DealBefore { users: users() })),
        },
    ]
}
