//! The pipeline and stage bodies, the stage reorder.

use serde::{Deserialize, Serialize};
use stoa_core::serde_util::double_option;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::{Validate, ValidationErrors};

use super::{check_len, finish, problem, set};
use crate::model::{PipelineItem, StageItem};

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
