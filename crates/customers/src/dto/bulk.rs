//! The bulk owner and stage requests and their answer.

use serde::{Deserialize, Serialize};
use stoa_core::serde_util::double_option;
use utoipa::ToSchema;
use uuid::Uuid;
use validator::{Validate, ValidationErrors};

use super::{finish, problem};

/// Most deals one bulk request may name (the reference's limit).
pub const MAX_BULK_IDS: usize = 10_000;

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
