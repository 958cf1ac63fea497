//! Request and response bodies. Update fields are tri-state where the
//! column may be empty: absent keeps the stored value, `null` clears it, a
//! value sets it. Unknown fields are ignored, as the reference strips them.

use serde::{Deserialize, Deserializer, Serialize};
use stoa_core::money::Money;
use stoa_core::serde_util::double_option;
use time::format_description::well_known::Rfc3339;
use time::{Date, OffsetDateTime, Time};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::{Validate, ValidationError, ValidationErrors};

use crate::model::{DealItem, DealView, PipelineItem, StageItem};

/// Most deals one bulk request may name (the reference's limit).
pub const MAX_BULK_IDS: usize = 10_000;

fn problem(errors: &mut ValidationErrors, field: &'static str, code: &'static str, msg: String) {
    errors.add(field, ValidationError::new(code).with_message(msg.into()));
}

/// A text field's length in characters, when present.
fn check_len(
    errors: &mut ValidationErrors,
    field: &'static str,
    value: Option<&str>,
    min: usize,
    max: usize,
) {
    if let Some(value) = value {
        let len = value.trim().chars().count();
        if len < min || value.chars().count() > max {
            problem(
                errors,
                field,
                "length",
                format!("must be between {min} and {max} characters"),
            );
        }
    }
}

fn check_currency(errors: &mut ValidationErrors, value: Option<&str>) {
    if let Some(c) = value
        && !(c.len() == 3 && c.bytes().all(|b| b.is_ascii_uppercase()))
    {
        problem(
            errors,
            "value_currency",
            "currency",
            "must be a 3-letter ISO 4217 code such as \"EUR\"".into(),
        );
    }
}

fn check_probability(errors: &mut ValidationErrors, value: Option<i32>) {
    if value.is_some_and(|p| !(0..=100).contains(&p)) {
        problem(
            errors,
            "probability",
            "range",
            "must be between 0 and 100".into(),
        );
    }
}

fn check_amount(errors: &mut ValidationErrors, value: Option<&Money>) {
    if value.is_some_and(|m| m.decimal().is_sign_negative()) {
        problem(
            errors,
            "value_amount",
            "range",
            "must not be negative".into(),
        );
    }
}

fn check_outcome(errors: &mut ValidationErrors, value: Option<&str>) {
    if value.is_some_and(|v| v != "won" && v != "lost") {
        problem(
            errors,
            "closure_outcome",
            "enum",
            "must be \"won\" or \"lost\"".into(),
        );
    }
}

fn finish(errors: ValidationErrors) -> Result<(), ValidationErrors> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// A close date: an ISO-8601 date-time, or a plain date (midnight UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloseDate(pub OffsetDateTime);

impl<'de> Deserialize<'de> for CloseDate {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(de)?;
        parse_close_date(&raw).map(CloseDate).ok_or_else(|| {
            serde::de::Error::custom("must be a date (YYYY-MM-DD) or an ISO-8601 date-time")
        })
    }
}

/// Parses `2026-03-31` or `2026-03-31T12:00:00Z`.
pub fn parse_close_date(raw: &str) -> Option<OffsetDateTime> {
    let raw = raw.trim();
    if let Ok(at) = OffsetDateTime::parse(raw, &Rfc3339) {
        return Some(at);
    }
    let format = time::macros::format_description!("[year]-[month]-[day]");
    Date::parse(raw, &format)
        .ok()
        .map(|d| d.with_time(Time::MIDNIGHT).assume_utc())
}

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

fn set<T>(value: &Option<Option<T>>) -> Option<&T> {
    value.as_ref().and_then(Option::as_ref)
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
    pub items: Vec<DealItem>,
    pub total: u64,
    pub page: u64,
    pub page_size: u64,
    pub total_pages: u64,
    pub total_capped: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
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

/// `{id}` of a created record.
#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    pub id: Uuid,
}

/// `{ok: true}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Done {
    pub ok: bool,
}

/// `POST /customers/pipelines`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatePipeline {
    #[validate(length(min = 1, max = 200))]
    pub name: String,
    pub is_default: Option<bool>,
}

/// `PUT /customers/pipelines/{id}`.
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePipeline {
    #[validate(length(min = 1, max = 200))]
    pub name: Option<String>,
    pub is_default: Option<bool>,
}

/// `GET /customers/pipelines` filter.
#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PipelineListQuery {
    pub is_default: Option<bool>,
}

/// `GET /customers/pipelines`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PipelineList {
    pub items: Vec<PipelineItem>,
    pub total: usize,
}

/// `POST /customers/pipeline-stages`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateStage {
    pub pipeline_id: Uuid,
    pub label: String,
    pub order: Option<i32>,
    pub color: Option<String>,
    pub icon: Option<String>,
}

impl Validate for CreateStage {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_len(&mut errors, "label", Some(&self.label), 1, 200);
        if self.order.is_some_and(|o| o < 0) {
            problem(&mut errors, "order", "range", "must be at least 0".into());
        }
        check_len(&mut errors, "color", self.color.as_deref(), 0, 20);
        check_len(&mut errors, "icon", self.icon.as_deref(), 0, 100);
        finish(errors)
    }
}

/// `PUT /customers/pipeline-stages/{id}`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStage {
    pub label: Option<String>,
    pub order: Option<i32>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub color: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub icon: Option<Option<String>>,
}

impl Validate for UpdateStage {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_len(&mut errors, "label", self.label.as_deref(), 1, 200);
        if self.order.is_some_and(|o| o < 0) {
            problem(&mut errors, "order", "range", "must be at least 0".into());
        }
        check_len(
            &mut errors,
            "color",
            set(&self.color).map(String::as_str),
            0,
            20,
        );
        check_len(
            &mut errors,
            "icon",
            set(&self.icon).map(String::as_str),
            0,
            100,
        );
        finish(errors)
    }
}

/// Most stages one reorder may name.
pub const MAX_REORDER_STAGES: usize = 1000;

/// One stage's new place in `POST /customers/pipeline-stages/reorder`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageOrder {
    /// A stage of the caller's tenant, in an organization it may write.
    pub id: Uuid,
    /// Its new `order` (0 or more).
    pub order: i32,
}

/// `POST /customers/pipeline-stages/reorder`: the stages and their new order.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReorderStages {
    /// 1–1,000 stages, each named once, with their new order.
    pub stages: Vec<StageOrder>,
}

impl Validate for ReorderStages {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        if self.stages.is_empty() || self.stages.len() > MAX_REORDER_STAGES {
            problem(
                &mut errors,
                "stages",
                "length",
                format!("must list between 1 and {MAX_REORDER_STAGES} stages"),
            );
        }
        let mut seen = std::collections::HashSet::new();
        for (i, stage) in self.stages.iter().enumerate() {
            if stage.order < 0 {
                problem(
                    &mut errors,
                    "stages",
                    "range",
                    format!("stages.{i}.order must be at least 0"),
                );
            }
            if !seen.insert(stage.id) {
                problem(
                    &mut errors,
                    "stages",
                    "duplicate",
                    format!("stages.{i}.id names stage {} twice", stage.id),
                );
            }
        }
        finish(errors)
    }
}

/// `GET /customers/pipeline-stages` filter.
#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct StageListQuery {
    pub pipeline_id: Option<Uuid>,
}

/// `GET /customers/pipeline-stages`.
#[derive(Debug, Serialize, ToSchema)]
pub struct StageList {
    pub items: Vec<StageItem>,
    pub total: usize,
}

fn check_ids(errors: &mut ValidationErrors, ids: &[Uuid]) {
    if ids.is_empty() || ids.len() > MAX_BULK_IDS {
        problem(
            errors,
            "ids",
            "length",
            format!("must list between 1 and {MAX_BULK_IDS} deal ids"),
        );
    }
}

/// `POST /customers/deals/bulk-update-owner`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkUpdateOwner {
    /// 1–10,000 deal ids (duplicates are dropped).
    pub ids: Vec<Uuid>,
    /// A user of the tenant; `null` clears the owner (required: absent is 400).
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Uuid>)]
    pub owner_user_id: Option<Option<Uuid>>,
}

impl Validate for BulkUpdateOwner {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_ids(&mut errors, &self.ids);
        if self.owner_user_id.is_none() {
            problem(&mut errors, "owner_user_id", "required", "Required".into());
        }
        finish(errors)
    }
}

/// `POST /customers/deals/bulk-update-stage`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkUpdateStage {
    /// 1–10,000 deal ids (duplicates are dropped).
    pub ids: Vec<Uuid>,
    /// A stage of the tenant.
    pub pipeline_stage_id: Uuid,
}

impl Validate for BulkUpdateStage {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_ids(&mut errors, &self.ids);
        finish(errors)
    }
}

/// The bulk routes' answer (also their errors: `ok:false`, `progressJobId: null`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkQueued {
    pub ok: bool,
    pub progress_job_id: Option<Uuid>,
    pub message: String,
}
