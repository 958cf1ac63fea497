//! The deal bodies: create, update (tri-state), the list's query and
//! answer, the detail.

use serde::{Deserialize, Serialize};
use stoa_core::list::ListPage;
use stoa_core::money::Money;
use stoa_core::serde_util::double_option;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::{Validate, ValidationErrors};

use super::{
    CloseDate, check_amount, check_currency, check_len, check_outcome, check_probability, finish,
    set,
};
use crate::model::{DealItem, DealView};

/// `POST /customers/deals`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateDeal {
    /// 1–200 characters.
    pub title: String,
    /// At most 4,000 characters.
    pub description: Option<String>,
    /// Free text, 1–50 characters (default `open`; `won` and `lost` emit
    /// `customers.deal.won|lost`).
    pub status: Option<String>,
    /// A pipeline of the deal's organization; implied by `pipelineStageId`.
    pub pipeline_id: Option<Uuid>,
    /// A stage of the deal's organization (sets the pipeline and copies the label).
    pub pipeline_stage_id: Option<Uuid>,
    /// A decimal string (`"1250.50"`), at least 0; needs `valueCurrency`.
    #[schema(value_type = Option<String>)]
    pub value_amount: Option<Money>,
    /// ISO 4217, e.g. `EUR`.
    pub value_currency: Option<String>,
    /// 0–100.
    pub probability: Option<i32>,
    /// A date (`YYYY-MM-DD`) or an ISO-8601 date-time.
    #[schema(value_type = Option<String>)]
    pub expected_close_at: Option<CloseDate>,
    /// A user of the tenant.
    pub owner_user_id: Option<Uuid>,
    /// At most 150 characters.
    pub source: Option<String>,
    /// `won` or `lost`.
    pub closure_outcome: Option<String>,
    /// At most 4,000 characters.
    pub loss_notes: Option<String>,
}

impl Validate for CreateDeal {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_len(&mut errors, "title", Some(&self.title), 1, 200);
        check_len(
            &mut errors,
            "description",
            self.description.as_deref(),
            0,
            4000,
        );
        check_len(&mut errors, "status", self.status.as_deref(), 1, 50);
        check_amount(&mut errors, self.value_amount.as_ref());
        check_currency(&mut errors, self.value_currency.as_deref());
        check_probability(&mut errors, self.probability);
        check_len(&mut errors, "source", self.source.as_deref(), 0, 150);
        check_outcome(&mut errors, self.closure_outcome.as_deref());
        check_len(
            &mut errors,
            "loss_notes",
            self.loss_notes.as_deref(),
            0,
            4000,
        );
        finish(errors)
    }
}

/// `PUT /customers/deals/{id}` (and `PUT /customers/deals {id, ...}`).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateDeal {
    pub title: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
    pub status: Option<String>,
    /// `null` takes the deal out of its pipeline (and stage).
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Uuid>)]
    pub pipeline_id: Option<Option<Uuid>>,
    /// `null` clears the stage (the pipeline stays).
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Uuid>)]
    pub pipeline_stage_id: Option<Option<Uuid>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub value_amount: Option<Option<Money>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub value_currency: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<i32>)]
    pub probability: Option<Option<i32>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub expected_close_at: Option<Option<CloseDate>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Uuid>)]
    pub owner_user_id: Option<Option<Uuid>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub source: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub closure_outcome: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub loss_notes: Option<Option<String>>,
}

impl Validate for UpdateDeal {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_len(&mut errors, "title", self.title.as_deref(), 1, 200);
        check_len(
            &mut errors,
            "description",
            set(&self.description).map(String::as_str),
            0,
            4000,
        );
        check_len(&mut errors, "status", self.status.as_deref(), 1, 50);
        check_amount(&mut errors, set(&self.value_amount));
        check_currency(&mut errors, set(&self.value_currency).map(String::as_str));
        check_probability(&mut errors, set(&self.probability).copied());
        check_len(
            &mut errors,
            "source",
            set(&self.source).map(String::as_str),
            0,
            150,
        );
        check_outcome(&mut errors, set(&self.closure_outcome).map(String::as_str));
        check_len(
            &mut errors,
            "loss_notes",
            set(&self.loss_notes).map(String::as_str),
            0,
            4000,
        );
        finish(errors)
    }
}

/// The deal list's sort fields (`sortField`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum DealSort {
    CreatedAt,
    UpdatedAt,
    Title,
    Value,
    Probability,
    ExpectedCloseAt,
}

/// `GET /customers/deals` filters. Repeated keys (`ownerUserId=a&ownerUserId=b`)
/// match any of the values.
#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct DealListQuery {
    /// One deal.
    pub id: Option<Uuid>,
    /// Matches the title, description or source (case-insensitive).
    #[validate(length(max = 200))]
    pub search: Option<String>,
    #[serde(default)]
    pub status: Vec<String>,
    #[serde(default)]
    pub pipeline_id: Vec<Uuid>,
    #[serde(default)]
    pub pipeline_stage_id: Vec<Uuid>,
    #[serde(default)]
    pub owner_user_id: Vec<Uuid>,
    /// Smallest value (inclusive), a decimal string.
    #[param(value_type = Option<String>)]
    pub value_min: Option<Money>,
    /// Largest value (inclusive), a decimal string.
    #[param(value_type = Option<String>)]
    pub value_max: Option<Money>,
    pub value_currency: Option<String>,
    /// Earliest expected close (inclusive): a date or date-time.
    #[param(value_type = Option<String>)]
    pub expected_close_at_from: Option<CloseDate>,
    /// Latest expected close (inclusive).
    #[param(value_type = Option<String>)]
    pub expected_close_at_to: Option<CloseDate>,
    /// Default `createdAt`.
    #[param(value_type = Option<String>)]
    pub sort_field: Option<DealSort>,
    /// Default `desc`.
    #[param(value_type = Option<String>)]
    pub sort_dir: Option<stoa_core::list::SortDir>,
}

/// `GET /customers/deals`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DealList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<DealItem>,
}

/// A stage of the deal's pipeline, in the detail.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetailStage {
    pub id: Uuid,
    pub label: String,
    pub order: i32,
    pub color: Option<String>,
    pub icon: Option<String>,
}

/// The owner, in the detail.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DealOwner {
    pub id: Uuid,
    pub name: Option<String>,
}

/// `GET /customers/deals/{id}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DealDetail {
    pub deal: DealView,
    pub pipeline_name: Option<String>,
    pub pipeline_stages: Vec<DetailStage>,
    pub owner: Option<DealOwner>,
}
