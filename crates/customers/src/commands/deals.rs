//! Deals as a resource of the kit (`stoa_acl::resource`): their undo state,
//! their entries and events, and their own checks (stage, owner). Create,
//! update, delete and the bulk jobs' owner and stage changes all write
//! through the kit.

use diesel_async::AsyncPgConnection;
use serde_json::{Value, json};
use stoa_acl::resource::{self, Resource};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::AppError;
use stoa_core::command::LogEntry;
use stoa_core::command::tracked::{Tracked, entry};
use uuid::Uuid;

use crate::error::CustomersError;
use crate::model::DealState;
use crate::queries::{deals as q, stages};
use crate::{DEALS_MANAGE, owners};

/// The action log's resource kind of a deal.
pub const DEAL_KIND: &str = "customers.deal";
pub const CREATE: &str = "customers.deals.create";
pub const UPDATE: &str = "customers.deals.update";
pub const DELETE: &str = "customers.deals.delete";
pub const BULK_OWNER: &str = "customers.deals.bulk_update_owner";
pub const BULK_STAGE: &str = "customers.deals.bulk_update_stage";

pub const CREATED_EVENT: &str = "customers.deal.created";
pub const UPDATED_EVENT: &str = "customers.deal.updated";
pub const DELETED_EVENT: &str = "customers.deal.deleted";
pub const STAGE_CHANGED_EVENT: &str = "customers.deal.stage_changed";
pub const WON_EVENT: &str = "customers.deal.won";
pub const LOST_EVENT: &str = "customers.deal.lost";

/// Every event a deal write may emit (business rules react to them).
pub const EVENTS: &[&str] = &[
    CREATED_EVENT,
    UPDATED_EVENT,
    DELETED_EVENT,
    STAGE_CHANGED_EVENT,
    WON_EVENT,
    LOST_EVENT,
];

fn payload(state: &DealState) -> Value {
    json!({
        "id": state.id,
        "tenantId": state.tenant_id,
        "organizationId": state.organization_id,
        "status": state.status,
        "pipelineId": state.pipeline_id,
        "pipelineStageId": state.pipeline_stage_id,
        "ownerUserId": state.owner_user_id,
        "valueAmount": state.value_amount,
        "valueCurrency": state.value_currency,
    })
}

/// The entry of a deal going from `before` to `after` (either may be absent),
/// in the deal's organization, with its domain events.
pub fn deal_entry(label: &str, before: Option<&DealState>, after: Option<&DealState>) -> LogEntry {
    let Some(any) = after.or(before) else {
        return LogEntry::default();
    };
    let mut log = entry(label, any.id, before, after);
    log.organization_id = Some(any.organization_id);
    match (before, after) {
        (None, Some(after)) => {
            log = log.with_event(CREATED_EVENT, payload(after));
        }
        (Some(before), None) => {
            log = log.with_event(DELETED_EVENT, payload(before));
        }
        (Some(before), Some(after)) => {
            log = log.with_event(UPDATED_EVENT, payload(after));
            if before.pipeline_stage_id != after.pipeline_stage_id {
                let mut data = payload(after);
                if let Value::Object(map) = &mut data {
                    map.insert("fromStageId".into(), json!(before.pipeline_stage_id));
                    map.insert("toStageId".into(), json!(after.pipeline_stage_id));
                }
                log = log.with_event(STAGE_CHANGED_EVENT, data);
            }
        }
        (None, None) => {}
    }
    if let Some(after) = after
        && before.is_none_or(|b| b.status != after.status)
    {
        match after.status.as_str() {
            "won" => log = log.with_event(WON_EVENT, payload(after)),
            "lost" => log = log.with_event(LOST_EVENT, payload(after)),
            _ => {}
        }
    }
    log
}

/// The references of a state the actor writes: the stage (and its pipeline)
/// in the deal's tenant and organization, the owner a user of the tenant.
/// `previous` skips what did not change (undo of a stage deleted since
/// fails on the foreign key instead).
/// `users` is `None` when no directory was handed over (an undo handler
/// built without one): an owner change is then refused.
async fn check_references(
    conn: &mut AsyncPgConnection,
    users: Option<&dyn UserDirectory>,
    state: &DealState,
    previous: Option<&DealState>,
) -> Result<(), AppError> {
    if let Some(stage) = state.pipeline_stage_id
        && previous.is_none_or(|p| p.pipeline_stage_id != Some(stage))
    {
        let found = stages::find(conn, state.tenant_id, stage).await?;
        match found {
            Some(s)
                if s.organization_id == state.organization_id
                    && Some(s.pipeline_id) == state.pipeline_id => {}
            _ => return Err(CustomersError::StageNotFound.into()),
        }
    }
    if let Some(owner) = state.owner_user_id
        && previous.is_none_or(|p| p.owner_user_id != Some(owner))
    {
        let users = users.ok_or_else(AppError::forbidden)?;
        owners::check(users, conn, state.tenant_id, owner).await?;
    }
    Ok(())
}

impl Tracked for DealState {
    const KIND: &'static str = DEAL_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        Ok(q::lock(conn, id).await?.as_ref().map(DealState::from))
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        q::upsert(conn, self).await?;
        Ok(())
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        q::delete(conn, id).await?;
        Ok(())
    }

    fn view(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    // The snapshots hold the whole state: the undo payload names them (a
    // bulk job's entries stay under Postgres's 2 KB compression size).
    const VIEW_IS_STATE: bool = true;

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    stoa_acl::kit_authorize!();
}

/// A deal through the resource kit: `customers.deals.manage`, its
/// organization, its stage and owner (the owner through the user directory
/// the module is built with, for the routes and the undo handlers alike).
impl Resource for DealState {
    const TABLE: &'static str = "customer_deals";
    const FEATURE: &'static str = DEALS_MANAGE;
    // A deal outside the selected organization is 404 (the module's contract).
    const SELECTION_HIDES: bool = true;
    type Services = dyn UserDirectory;

    stoa_acl::resource_identity!();
    fn not_found() -> AppError {
        CustomersError::DealNotFound.into()
    }
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        deal_entry(label, before, after)
    }
    async fn check(
        conn: &mut AsyncPgConnection,
        _: &AuthContext,
        users: Option<&dyn UserDirectory>,
        target: &Self,
        previous: Option<&Self>,
    ) -> Result<(), AppError> {
        check_references(conn, users, target, previous).await
    }
    /// One statement: the upsert returns the row as stored.
    async fn save(&self, conn: &mut AsyncPgConnection) -> Result<Self, AppError> {
        Ok(DealState::from(&q::upsert(conn, self).await?))
    }
}
