//! The JSON shapes of error bodies: input [`Issue`]s, the documented
//! [`ErrorBody`] and zod's `flatten()` form of the issues.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};

/// One problem with an input field, as returned in `issues`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Issue {
    /// Where the problem is: field names joined by `.`, array indices as numbers.
    pub path: Vec<Value>,
    pub message: String,
    /// A short machine-readable label such as `invalid_type` or `too_big`.
    pub code: Cow<'static, str>,
}

/// The JSON body of every error response (the `ok`, `code` and extra fields are
/// present only where documented).
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    #[schema(example = "Invalid payload")]
    pub error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issues: Option<Vec<Issue>>,
    /// With `issues`: the same problems, as `{formErrors: [..], fieldErrors:
    /// {field: [..]}}` or as the list of issues, depending on the route's
    /// error shape (docs/validation-errors); a refused guard puts an object
    /// here too.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = details_schema)]
    pub details: Option<Value>,
}

// Used by operations declaring the bulk envelope (`super::ErrorEnvelope::Bulk`).
/// The error body of a bulk operation: the same envelope as its success
/// answer, with `ok:false` and no job, beside `error` (also for 401 and 403).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkErrorBody {
    /// Always `false`.
    pub ok: bool,
    /// Always `null`: no job was queued.
    #[schema(value_type = Option<String>, format = Uuid)]
    pub progress_job_id: Option<String>,
    /// The error's text (`Invalid payload` for input errors).
    #[schema(example = "Invalid payload")]
    pub message: String,
    #[schema(example = "Invalid payload")]
    pub error: String,
    /// The declared features, on a 403 of the access check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_features: Option<Vec<String>>,
    /// Input problems, on a 400.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issues: Option<Vec<Issue>>,
}

/// `details`: an object, a list of issues, or absent.
fn details_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
    Schema::OneOf(
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Object))
            .item(ArrayBuilder::new().items(utoipa::openapi::Ref::from_schema_name("Issue")))
            .item(ObjectBuilder::new().schema_type(Type::Null))
            .build(),
    )
}

/// `{formErrors: [message], fieldErrors: {field: [message]}}`: problems with the
/// whole input go to `formErrors`, the others under their first path segment.
pub fn flatten(issues: &[Issue]) -> Value {
    let mut form_errors = Vec::new();
    let mut field_errors = Map::new();
    for issue in issues {
        let message = Value::String(issue.message.clone());
        match issue.path.first() {
            None => form_errors.push(message),
            Some(first) => {
                let key = match first {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                if let Value::Array(list) = field_errors
                    .entry(key)
                    .or_insert_with(|| Value::Array(Vec::new()))
                {
                    list.push(message);
                }
            }
        }
    }
    serde_json::json!({"formErrors": form_errors, "fieldErrors": field_errors})
}
