//! Rows of the customers tables, what the API shows of them, and the states
//! undo and redo write back (`stoa_core::command::Tracked`, implemented in
//! [`crate::commands`]).
//!
//! States leave `updated_at` out: every write moves it (the table's trigger),
//! undo included, so comparing it would make every undone record look
//! "changed since".

use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use stoa_core::money::Money;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::schema::{customer_deals, customer_pipeline_stages, customer_pipelines};

/// One deal as stored.
#[derive(Clone, Debug, PartialEq, Queryable, Selectable)]
#[diesel(table_name = customer_deals)]
#[diesel(check_for_backend(diesel::pg::Pg))]
pub struct DealRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub title: String,
    pub description: Option<String>,
    pub status: String,
    pub pipeline_stage: Option<String>,
    pub pipeline_id: Option<Uuid>,
    pub pipeline_stage_id: Option<Uuid>,
    pub value_amount: Option<Money>,
    pub value_currency: Option<String>,
    pub probability: Option<i32>,
    pub expected_close_at: Option<OffsetDateTime>,
    pub owner_user_id: Option<Uuid>,
    pub source: Option<String>,
    pub closure_outcome: Option<String>,
    pub loss_notes: Option<String>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// A deal's whole state, as the action log records it and undo writes it
/// back (a deleted deal is re-inserted with the same id).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DealState {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub title: String,
    pub description: Option<String>,
    pub status: String,
    pub pipeline_stage: Option<String>,
    pub pipeline_id: Option<Uuid>,
    pub pipeline_stage_id: Option<Uuid>,
    pub value_amount: Option<Money>,
    pub value_currency: Option<String>,
    pub probability: Option<i32>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub expected_close_at: Option<OffsetDateTime>,
    pub owner_user_id: Option<Uuid>,
    pub source: Option<String>,
    pub closure_outcome: Option<String>,
    pub loss_notes: Option<String>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub created_at: OffsetDateTime,
}

impl From<&DealRow> for DealState {
    fn from(row: &DealRow) -> Self {
        Self {
            id: row.id,
            tenant_id: row.tenant_id,
            organization_id: row.organization_id,
            title: row.title.clone(),
            description: row.description.clone(),
            status: row.status.clone(),
            pipeline_stage: row.pipeline_stage.clone(),
            pipeline_id: row.pipeline_id,
            pipeline_stage_id: row.pipeline_stage_id,
            value_amount: row.value_amount,
            value_currency: row.value_currency.clone(),
            probability: row.probability,
            expected_close_at: row.expected_close_at,
            owner_user_id: row.owner_user_id,
            source: row.source.clone(),
            closure_outcome: row.closure_outcome.clone(),
            loss_notes: row.loss_notes.clone(),
            created_at: row.created_at,
        }
    }
}

/// Declares a deal as the API shows it, once for each key case: the list's rows
/// use snake_case keys and the detail camelCase, as the reference does, and
/// both carry the same fields.
macro_rules! deal_view {
    ($(#[$meta:meta])* $name:ident, $case:literal) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Serialize, ToSchema)]
        #[serde(rename_all = $case)]
        pub struct $name {
            pub id: Uuid,
            pub title: String,
            pub description: Option<String>,
            pub status: String,
            /// The stage's label.
            pub pipeline_stage: Option<String>,
            pub pipeline_id: Option<Uuid>,
            pub pipeline_stage_id: Option<Uuid>,
            /// A decimal string, e.g. `"1250.5"`.
            #[schema(value_type = Option<String>)]
            pub value_amount: Option<Money>,
            pub value_currency: Option<String>,
            pub probability: Option<i32>,
            #[serde(with = "stoa_core::serde_util::timestamp::option")]
            #[schema(value_type = Option<String>, format = DateTime)]
            pub expected_close_at: Option<OffsetDateTime>,
            pub owner_user_id: Option<Uuid>,
            pub source: Option<String>,
            pub closure_outcome: Option<String>,
            pub loss_notes: Option<String>,
            pub organization_id: Uuid,
            pub tenant_id: Uuid,
            #[serde(with = "stoa_core::serde_util::timestamp")]
            #[schema(value_type = String, format = DateTime)]
            pub created_at: OffsetDateTime,
            #[serde(with = "stoa_core::serde_util::timestamp")]
            #[schema(value_type = String, format = DateTime)]
            pub updated_at: OffsetDateTime,
        }

        impl From<DealRow> for $name {
            fn from(row: DealRow) -> Self {
                Self {
                    id: row.id,
                    title: row.title,
                    description: row.description,
                    status: row.status,
                    pipeline_stage: row.pipeline_stage,
                    pipeline_id: row.pipeline_id,
                    pipeline_stage_id: row.pipeline_stage_id,
                    value_amount: row.value_amount,
                    value_currency: row.value_currency,
                    probability: row.probability,
                    expected_close_at: row.expected_close_at,
                    owner_user_id: row.owner_user_id,
                    source: row.source,
                    closure_outcome: row.closure_outcome,
                    loss_notes: row.loss_notes,
                    organization_id: row.organization_id,
                    tenant_id: row.tenant_id,
                    created_at: row.created_at,
                    updated_at: row.updated_at,
                }
            }
        }
    };
}

// snake_case keys, as the reference's list rows.
deal_view!(
    /// A deal as the list shows it (snake_case keys).
    DealItem,
    "snake_case"
);

deal_view!(
    /// A deal as `GET /customers/deals/{id}` shows it (camelCase keys, as the
    /// reference's detail).
    DealView,
    "camelCase"
);

/// One pipeline as stored.
#[derive(Clone, Debug, PartialEq, Queryable, Selectable)]
#[diesel(table_name = customer_pipelines)]
#[diesel(check_for_backend(diesel::pg::Pg))]
pub struct PipelineRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub name: String,
    pub is_default: bool,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// A pipeline's whole state (undo and redo).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineState {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub name: String,
    pub is_default: bool,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub created_at: OffsetDateTime,
}

impl From<&PipelineRow> for PipelineState {
    fn from(row: &PipelineRow) -> Self {
        Self {
            id: row.id,
            tenant_id: row.tenant_id,
            organization_id: row.organization_id,
            name: row.name.clone(),
            is_default: row.is_default,
            created_at: row.created_at,
        }
    }
}

/// A pipeline as the API shows it.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PipelineItem {
    pub id: Uuid,
    pub name: String,
    pub is_default: bool,
    pub organization_id: Uuid,
    pub tenant_id: Uuid,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<PipelineRow> for PipelineItem {
    fn from(row: PipelineRow) -> Self {
        Self {
            id: row.id,
            name: row.name,
            is_default: row.is_default,
            organization_id: row.organization_id,
            tenant_id: row.tenant_id,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// One pipeline stage as stored.
#[derive(Clone, Debug, PartialEq, Queryable, Selectable)]
#[diesel(table_name = customer_pipeline_stages)]
#[diesel(check_for_backend(diesel::pg::Pg))]
pub struct StageRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub pipeline_id: Uuid,
    pub label: String,
    pub position: i32,
    pub color: Option<String>,
    pub icon: Option<String>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// A stage's whole state (undo and redo).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageState {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub pipeline_id: Uuid,
    pub label: String,
    pub order: i32,
    pub color: Option<String>,
    pub icon: Option<String>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub created_at: OffsetDateTime,
}

impl From<&StageRow> for StageState {
    fn from(row: &StageRow) -> Self {
        Self {
            id: row.id,
            tenant_id: row.tenant_id,
            organization_id: row.organization_id,
            pipeline_id: row.pipeline_id,
            label: row.label.clone(),
            order: row.position,
            color: row.color.clone(),
            icon: row.icon.clone(),
            created_at: row.created_at,
        }
    }
}

/// A stage as the API shows it (`label` and `order`).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageItem {
    pub id: Uuid,
    pub pipeline_id: Uuid,
    pub label: String,
    pub order: i32,
    pub color: Option<String>,
    pub icon: Option<String>,
    pub organization_id: Uuid,
    pub tenant_id: Uuid,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<StageRow> for StageItem {
    fn from(row: StageRow) -> Self {
        Self {
            id: row.id,
            pipeline_id: row.pipeline_id,
            label: row.label,
            order: row.position,
            color: row.color,
            icon: row.icon,
            organization_id: row.organization_id,
            tenant_id: row.tenant_id,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}
