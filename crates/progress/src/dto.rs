//! Request and response bodies of the `/progress/...` endpoints (the job
//! itself is [`crate::service::ProgressJob`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_core::list::ListPage;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use crate::service::ProgressJob;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActiveJobs {
    pub active: Vec<ProgressJob>,
    pub recently_completed: Vec<ProgressJob>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum JobSort {
    #[default]
    CreatedAt,
    StartedAt,
    FinishedAt,
}

#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct JobListQuery {
    /// One status or a comma-separated list.
    pub status: Option<String>,
    #[validate(length(max = 100))]
    pub job_type: Option<String>,
    pub parent_job_id: Option<Uuid>,
    /// Without `status`, only pending and running jobs are listed unless this is true.
    pub include_completed: Option<bool>,
    /// ISO-8601: jobs finished at or after.
    pub completed_since: Option<String>,
    pub page: Option<u64>,
    /// Default 20, max 100.
    pub page_size: Option<u64>,
    #[validate(length(max = 200))]
    pub search: Option<String>,
    #[param(inline)]
    pub sort_field: Option<JobSort>,
    /// `asc` or `desc` (default).
    #[param(inline)]
    pub sort_dir: Option<stoa_core::list::SortDir>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<ProgressJob>,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateJob {
    #[validate(length(min = 1, max = 100))]
    pub job_type: String,
    #[validate(length(min = 1, max = 255))]
    pub name: String,
    #[validate(length(max = 1000))]
    pub description: Option<String>,
    #[validate(range(min = 1))]
    pub total_count: Option<i32>,
    pub cancellable: Option<bool>,
    pub meta: Option<serde_json::Map<String, Value>>,
    pub parent_job_id: Option<Uuid>,
    #[validate(range(min = 0))]
    pub partition_index: Option<i32>,
    #[validate(range(min = 1))]
    pub partition_count: Option<i32>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    pub id: Uuid,
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct JobPath {
    pub id: String,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateJob {
    #[validate(range(min = 0))]
    pub processed_count: Option<i32>,
    #[validate(range(min = 0, max = 100))]
    pub progress_percent: Option<i16>,
    #[validate(range(min = 1))]
    pub total_count: Option<i32>,
    #[validate(range(min = 0))]
    pub eta_seconds: Option<i32>,
    /// Shallow-merged into the stored meta.
    pub meta: Option<serde_json::Map<String, Value>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Updated {
    pub ok: bool,
    pub progress_percent: i16,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CancelResponse {
    pub ok: bool,
}
