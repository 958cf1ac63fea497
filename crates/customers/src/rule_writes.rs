//! Deals as business rules write them (`SET_FIELD`, the
//! `stoa_acl::RuleWriter` slot): one top-level field of the update route's
//! body, checked exactly as the route checks it (its body type and
//! validation), written through the deals service's update (command bus,
//! action log, undo, events, write guards) as the rule's system principal.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use stoa_acl::{FieldWrite, FieldWriter, RuleWriter, UserDirectory};
use stoa_core::AppError;
use uuid::Uuid;
use validator::Validate;

use crate::commands::deals::DEAL_KIND;
use crate::dto::UpdateDeal;
use crate::service::deals::{self, WrittenBy};
use crate::{DEALS_MANAGE, DEALS_VIEW, MODULE};

/// The fields of `PUT /customers/deals/{id}` a rule may set.
pub const WRITABLE: &[&str] = &[
    "title",
    "description",
    "status",
    "pipelineId",
    "pipelineStageId",
    "valueAmount",
    "valueCurrency",
    "probability",
    "expectedCloseAt",
    "ownerUserId",
    "source",
    "closureOutcome",
    "lossNotes",
];

/// The update body setting `field` to `value`, as the route would accept it.
fn body_of(field: &str, value: &Value) -> Result<UpdateDeal, String> {
    let mut map = Map::new();
    map.insert(field.to_string(), value.clone());
    let body: UpdateDeal = serde_json::from_value(Value::Object(map))
        .map_err(|e| format!("is not a valid value: {e}"))?;
    body.validate()
        .map_err(|e| format!("is not a valid value: {e}"))?;
    Ok(body)
}

struct DealFields {
    users: Arc<dyn UserDirectory>,
}

impl FieldWriter for DealFields {
    fn check(&self, field: &str, value: &Value) -> Result<(), String> {
        body_of(field, value).map(|_| ())
    }

    fn write<'a>(&'a self, call: FieldWrite<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
        Box::pin(async move {
            let id: Uuid = call
                .record_id
                .parse()
                .map_err(|_| AppError::bad_request("the record id is not a deal id"))?;
            let body = body_of(call.field, &call.value)
                .map_err(|m| AppError::bad_request(format!("{} {m}", call.field)))?;
            let by = WrittenBy {
                actor: call.actor(),
                context: Some(call.context.clone()),
            };
            let op = deals::update_in(
                call.conn,
                call.auth,
                self.users.as_ref(),
                id,
                body,
                None,
                by,
            )
            .await?;
            Ok(json!({"operationId": op.id, "commandId": op.command_id}))
        })
    }
}

/// The slot [`crate::register`] declares. Saving a rule that writes deals
/// takes the features of the update route.
pub fn deal_writer(users: Arc<dyn UserDirectory>) -> RuleWriter {
    RuleWriter {
        entity_type: DEAL_KIND,
        module: MODULE.id,
        fields: WRITABLE,
        features: &[DEALS_VIEW, DEALS_MANAGE],
        writer: Arc::new(DealFields { users }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_as_the_update_route_checks_them() {
        assert!(body_of("probability", &json!(40)).is_ok());
        assert!(body_of("probability", &json!(400)).is_err());
        assert!(body_of("probability", &json!("high")).is_err());
        assert!(body_of("status", &json!("won")).is_ok());
        assert!(body_of("status", &json!("x".repeat(51))).is_err());
        assert!(body_of("pipelineStageId", &json!("not-a-uuid")).is_err());
        assert!(body_of("pipelineStageId", &json!(Uuid::nil())).is_ok());
        assert!(body_of("valueCurrency", &json!("EURO")).is_err());
        assert!(body_of("expectedCloseAt", &json!("2026-12-01")).is_ok());
    }
}
