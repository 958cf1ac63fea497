//! The AI assistant's tools over products (`stoa_acl::AiTool`, registered in
//! [`crate::register`]): they call this module's services as the calling
//! user, never its tables, so a change is authorized, logged, undoable and
//! seen by write guards exactly like the route.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use stoa_acl::{AiTool, OrganizationDirectory, ToolCall, ToolHandler, ToolKind};
use stoa_core::AppError;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use validator::Validate;

use crate::dto::UpdateProduct;
use crate::service;
use crate::{MANAGE, VIEW};

fn product_id(input: &Value) -> Result<String, AppError> {
    input["productId"]
        .as_str()
        .map(String::from)
        .ok_or_else(|| AppError::bad_request("productId is required"))
}

/// `catalog.get_product {productId}`.
struct GetProduct;

impl ToolHandler for GetProduct {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            let id = product_id(&call.input)?;
            let detail = service::product_detail_in(call.conn, call.auth, &id).await?;
            serde_json::to_value(detail).map_err(AppError::internal)
        })
    }
}

/// The product a change would touch: `{recordId, entityType,
/// recordVersion, before, after}` (`after`: the fields as the route takes
/// them, the price as `priceAmount` / `priceCurrency`).
struct ProductBefore;

impl ToolHandler for ProductBefore {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            let id = product_id(&call.input)?;
            let detail = service::product_detail_in(call.conn, call.auth, &id).await?;
            let mut changes = call.input.as_object().cloned().unwrap_or_default();
            changes.retain(|k, _| k != "productId" && !k.starts_with('_'));
            let after = product_body(changes, detail.item.price_currency.as_deref())?;
            let before = serde_json::to_value(&detail.item).map_err(AppError::internal)?;
            Ok(json!({
                "recordId": detail.item.id,
                "entityType": "catalog.product",
                "recordVersion": before["updated_at"],
                "before": before,
                "after": after,
            }))
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProductPatch {
    #[serde(default, rename = "_recordVersion")]
    record_version: Option<String>,
    #[serde(flatten)]
    rest: serde_json::Map<String, Value>,
}

/// The route's body for the tool's input: `price {currencyCode?, amount}`
/// becomes `priceAmount` (and `priceCurrency`). The currency must be the
/// product's own (the reference changes an existing price only); a product
/// without a price takes the one given.
fn product_body(
    mut rest: serde_json::Map<String, Value>,
    current_currency: Option<&str>,
) -> Result<serde_json::Map<String, Value>, AppError> {
    let Some(price) = rest.remove("price") else {
        return Ok(rest);
    };
    // The schema allows `priceKindId` (stoa has no price kinds: it is
    // ignored), `currencyCode` and `amount` (required).
    let amount = price
        .get("amount")
        .cloned()
        .ok_or_else(|| AppError::bad_request("Invalid input: price.amount: Required"))?;
    if let Some(code) = price
        .get("currencyCode")
        .and_then(Value::as_str)
        .map(str::trim)
    {
        match current_currency {
            Some(current) if !current.eq_ignore_ascii_case(code) => {
                return Err(AppError::bad_request(format!(
                    "Invalid input: price.currencyCode: the product has no price in {code} (its price is in {current})"
                )));
            }
            Some(_) => {}
            None => {
                rest.insert(
                    "priceCurrency".into(),
                    Value::String(code.to_ascii_uppercase()),
                );
            }
        }
    }
    rest.insert("priceAmount".into(), amount);
    Ok(rest)
}

/// `catalog.update_product`: `PUT /catalog/products/{id}` through the
/// catalog service, as the caller (`_recordVersion`: the optimistic lock).
struct UpdateProductTool {
    organizations: Arc<dyn OrganizationDirectory>,
}

impl ToolHandler for UpdateProductTool {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            call.auth.require(MANAGE)?;
            let id = product_id(&call.input)?;
            let mut patch: ProductPatch = serde_json::from_value(call.input.clone())
                .map_err(|e| AppError::bad_request(format!("Invalid input: {e}")))?;
            patch.rest.remove("productId");
            let expected = patch
                .record_version
                .as_deref()
                .map(|v| OffsetDateTime::parse(v, &Rfc3339))
                .transpose()
                .map_err(|_| {
                    AppError::bad_request("_recordVersion must be an ISO-8601 timestamp")
                })?;
            let rest = if patch.rest.contains_key("price") {
                let detail = service::product_detail_in(call.conn, call.auth, &id).await?;
                product_body(patch.rest, detail.item.price_currency.as_deref())?
            } else {
                patch.rest
            };
            let body: UpdateProduct = serde_json::from_value(Value::Object(rest))
                .map_err(|e| AppError::bad_request(format!("Invalid input: {e}")))?;
            body.validate()
                .map_err(|e| AppError::bad_request(format!("Invalid input: {e}")))?;
            let op = service::update_product_in(
                call.conn,
                call.auth,
                self.organizations.as_ref(),
                &id,
                body,
                expected,
            )
            .await?;
            Ok(json!({"recordId": id, "commandName": op.command_id, "operation": op}))
        })
    }
}

fn get_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "productId": {"type": "string", "format": "uuid"},
            "includeRelated": {
                "type": "boolean",
                "description": "Accepted as the reference's; stoa has no categories, variants or media to add."
            }
        },
        "required": ["productId"],
        "additionalProperties": false
    })
}

/// The reference's input (`price` strict: `priceKindId?`, `currencyCode?`,
/// `amount`).
fn update_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "productId": {"type": "string", "format": "uuid"},
            "title": {"type": "string", "minLength": 1, "maxLength": 255},
            "subtitle": {"type": ["string", "null"], "maxLength": 255},
            "description": {"type": ["string", "null"], "maxLength": 4000},
            "isActive": {"type": "boolean"},
            "price": {
                "type": "object",
                "properties": {
                    "priceKindId": {"type": "string", "format": "uuid"},
                    "currencyCode": {"type": "string", "minLength": 3, "maxLength": 8},
                    "amount": {"type": "number", "minimum": 0}
                },
                "required": ["amount"],
                "additionalProperties": false
            }
        },
        "required": ["productId"],
        "additionalProperties": false
    })
}

/// The product tools.
pub fn tools(organizations: &Arc<dyn OrganizationDirectory>) -> Vec<AiTool> {
    vec![
        AiTool {
            name: "catalog.get_product",
            module: "catalog",
            display_name: "Get product",
            description: "Reads one product of the catalog.",
            input_schema: get_schema,
            kind: ToolKind::Read,
            features: &[VIEW],
            handler: Arc::new(GetProduct),
            before: None,
        },
        AiTool {
            name: "catalog.update_product",
            module: "catalog",
            display_name: "Update product",
            description: "Changes a product's title, texts, activity or price.",
            input_schema: update_schema,
            kind: ToolKind::Mutation,
            features: &[VIEW, MANAGE],
            handler: Arc::new(UpdateProductTool {
                organizations: organizations.clone(),
            }),
            before: Some(Arc::new(ProductBefore)),
        },
    ]
}
