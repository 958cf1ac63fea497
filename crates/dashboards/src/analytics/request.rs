//! The widget data request (the reference's language) and its result.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use validator::{Validate, ValidationError, ValidationErrors};

use super::presets::Preset;

/// Most members of an `in` / `not_in` filter.
pub const MAX_IN_VALUES: usize = 200;
/// Most filters of one request.
pub const MAX_FILTERS: u64 = 20;
/// Most entries of a batch.
pub const MAX_BATCH: u64 = 50;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Granularity {
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Granularity {
    /// The `date_trunc` unit (a constant, never input).
    pub fn unit(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Quarter => "quarter",
            Self::Year => "year",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operator {
    Eq,
    Neq,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    NotIn,
    IsNull,
    IsNotNull,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ComparisonType {
    PreviousPeriod,
    PreviousYear,
}

#[derive(Clone, Debug, Deserialize, Serialize, Validate, ToSchema)]
pub struct Metric {
    #[validate(length(min = 1, max = 200))]
    pub field: String,
    pub aggregate: Aggregate,
}

#[derive(Clone, Debug, Deserialize, Serialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupBy {
    #[validate(length(min = 1, max = 200))]
    pub field: String,
    /// For date fields (default `day`); ignored on others.
    pub granularity: Option<Granularity>,
    /// 1–100 (default 100).
    #[validate(range(min = 1, max = 100))]
    pub limit: Option<i64>,
    pub resolve_labels: Option<bool>,
}

#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
pub struct Filter {
    pub field: String,
    pub operator: Operator,
    /// A scalar; for `in` / `not_in` an array of at most 200 scalars (a
    /// scalar counts as one member); unused by `is_null` / `is_not_null`.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub value: Option<Value>,
}

fn problem(code: &'static str, message: &str) -> ValidationError {
    ValidationError::new(code).with_message(message.to_string().into())
}

impl Validate for Filter {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        if self.field.is_empty() || self.field.chars().count() > 200 {
            errors.add(
                "field",
                problem("too_small", "field must be 1 to 200 characters"),
            );
        }
        let scalar = |v: &Value| matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_));
        match (self.operator, &self.value) {
            (Operator::In | Operator::NotIn, Some(Value::Array(items))) => {
                if items.len() > MAX_IN_VALUES {
                    errors.add("value", problem("too_big", "at most 200 values"));
                } else if !items.iter().all(scalar) {
                    errors.add(
                        "value",
                        problem(
                            "invalid_type",
                            "values must be strings, numbers or booleans",
                        ),
                    );
                }
            }
            (Operator::IsNull | Operator::IsNotNull, _) => {}
            (_, Some(v)) if !scalar(v) && !v.is_null() => {
                errors.add(
                    "value",
                    problem(
                        "invalid_type",
                        "value must be a string, number, boolean or null",
                    ),
                );
            }
            _ => {}
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
pub struct DateRange {
    pub field: String,
    pub preset: Preset,
}

#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
pub struct Comparison {
    #[serde(rename = "type")]
    pub kind: ComparisonType,
}

/// `POST /dashboards/widgets/data`.
#[derive(Clone, Debug, Deserialize, Serialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetDataRequest {
    /// A registered analytics entity, e.g. `auth:users`, `customers:deals`.
    #[validate(length(min = 1, max = 200))]
    pub entity_type: String,
    #[validate(nested)]
    pub metric: Metric,
    #[validate(nested)]
    pub group_by: Option<GroupBy>,
    #[validate(length(max = MAX_FILTERS), nested)]
    pub filters: Option<Vec<Filter>>,
    pub date_range: Option<DateRange>,
    /// Needs `dateRange`; both types compare with the preset's previous period.
    pub comparison: Option<Comparison>,
}

/// One entry of a batch.
#[derive(Clone, Debug, Deserialize, Serialize, Validate, ToSchema)]
pub struct BatchEntry {
    #[validate(length(min = 1, max = 200))]
    pub id: String,
    #[validate(nested)]
    pub request: WidgetDataRequest,
}

/// `POST /dashboards/widgets/data/batch`: 1–50 requests.
#[derive(Clone, Debug, Deserialize, Serialize, Validate, ToSchema)]
pub struct BatchRequest {
    #[validate(length(min = 1, max = MAX_BATCH), nested)]
    pub requests: Vec<BatchEntry>,
}

/// One group of a grouped result.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataPoint {
    /// The group's value: a string (dates as ISO-8601 UTC period starts), a
    /// number for number fields, `null` for the records without one.
    #[schema(value_type = Option<Object>)]
    pub group_key: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_label: Option<String>,
    #[schema(value_type = Option<f64>)]
    pub value: Value,
    /// The value as Postgres computed it (exact for money sums).
    pub exact_value: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComparisonResult {
    #[schema(value_type = Option<f64>)]
    pub value: Value,
    /// Percent change from the previous period.
    pub change: f64,
    /// `up`, `down` or `unchanged`.
    pub direction: &'static str,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    pub fetched_at: String,
    pub record_count: i64,
    /// Always `null`: analytics sources declare no currency column yet.
    pub currency: Option<String>,
}

/// The widget data result.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetData {
    #[schema(value_type = Option<f64>)]
    pub value: Value,
    /// The value as Postgres computed it (exact for money sums).
    pub exact_value: Option<String>,
    pub data: Vec<DataPoint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<ComparisonResult>,
    pub metadata: Metadata,
}

/// One result of a batch: `data` when `ok`, else `error`.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct BatchResult {
    pub id: String,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<WidgetData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct BatchResults {
    pub results: Vec<BatchResult>,
}
