//! The dashboards module's failures, with the reference's messages, mapped
//! to the API's JSON errors here and nowhere else.

use actix_web::http::StatusCode;
use stoa_core::error::Issue;
use stoa_core::{ApiError, AppError};

#[derive(Debug, thiserror::Error)]
pub enum DashboardsError {
    /// No user to own a layout (an API key acting on its own), a layout
    /// that is another user's, or an analytics source whose features the
    /// caller lacks.
    #[error("Forbidden")]
    Forbidden,
    /// A row of another tenant (an undo naming it).
    #[error("Not found")]
    NotFound,
    #[error("Role not found")]
    RoleNotFound,
    #[error("User not found")]
    UserNotFound,
    #[error("Layout not found")]
    LayoutNotFound,
    #[error("Layout item not found")]
    LayoutItemNotFound,
    /// The `{itemId}` path segment is not a uuid.
    #[error("Invalid payload")]
    InvalidItemId,
    #[error("Layout item IDs must be unique")]
    DuplicateLayoutItems,
    #[error("Unknown widget ids: {}", .0.join(", "))]
    UnknownWidgets(Vec<String>),
    /// A required query id is missing (`<name> is required`).
    #[error("{0} is required")]
    IdRequired(&'static str),
    /// A query id is not a uuid (`Invalid <name>`).
    #[error("Invalid {0}")]
    InvalidId(&'static str),
    #[error("Tenant context is required")]
    TenantRequired,
    #[error("Invalid entity type: {0}")]
    InvalidEntityType(String),
    /// A widget-data request naming an unknown field or a wrong value (the
    /// text names it).
    #[error("{0}")]
    InvalidQuery(String),
    /// No module registered a widget: nothing a layout could hold.
    #[error("Widget registry unavailable")]
    RegistryUnavailable,
}

impl ApiError for DashboardsError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Forbidden => StatusCode::FORBIDDEN,
            Self::NotFound
            | Self::RoleNotFound
            | Self::UserNotFound
            | Self::LayoutNotFound
            | Self::LayoutItemNotFound => StatusCode::NOT_FOUND,
            Self::InvalidItemId
            | Self::DuplicateLayoutItems
            | Self::UnknownWidgets(_)
            | Self::IdRequired(_)
            | Self::InvalidId(_)
            | Self::TenantRequired
            | Self::InvalidEntityType(_)
            | Self::InvalidQuery(_) => StatusCode::BAD_REQUEST,
            Self::RegistryUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// An issue naming `field` (input problems carry the field they are about).
fn issue(field: &str, message: impl Into<String>, code: &'static str) -> Vec<Issue> {
    vec![Issue {
        path: vec![field.into()],
        message: message.into(),
        code: code.into(),
    }]
}

impl From<DashboardsError> for AppError {
    fn from(err: DashboardsError) -> Self {
        let issues = match &err {
            DashboardsError::InvalidItemId => {
                Some(issue("itemId", "Invalid uuid", "invalid_string"))
            }
            DashboardsError::DuplicateLayoutItems => {
                Some(issue("items", err.to_string(), "custom"))
            }
            DashboardsError::UnknownWidgets(_) => {
                Some(issue("widgetIds", err.to_string(), "custom"))
            }
            _ => None,
        };
        let app = AppError::from_api(err);
        match issues {
            Some(issues) => app.with_issues(issues),
            None => app,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn every_variant_renders_its_status_and_body() {
        let cases: Vec<(DashboardsError, u16, Value)> = vec![
            (
                DashboardsError::Forbidden,
                403,
                json!({"error": "Forbidden"}),
            ),
            (
                DashboardsError::NotFound,
                404,
                json!({"error": "Not found"}),
            ),
            (
                DashboardsError::RoleNotFound,
                404,
                json!({"error": "Role not found"}),
            ),
            (
                DashboardsError::UserNotFound,
                404,
                json!({"error": "User not found"}),
            ),
            (
                DashboardsError::LayoutNotFound,
                404,
                json!({"error": "Layout not found"}),
            ),
            (
                DashboardsError::LayoutItemNotFound,
                404,
                json!({"error": "Layout item not found"}),
            ),
            (
                DashboardsError::InvalidItemId,
                400,
                json!({"error": "Invalid payload",
                       "details": {"formErrors": [], "fieldErrors": {"itemId": ["Invalid uuid"]}},
                       "issues": [{"path": ["itemId"], "message": "Invalid uuid", "code": "invalid_string"}]}),
            ),
            (
                DashboardsError::DuplicateLayoutItems,
                400,
                json!({"error": "Layout item IDs must be unique",
                       "details": {"formErrors": [], "fieldErrors": {"items": ["Layout item IDs must be unique"]}},
                       "issues": [{"path": ["items"], "message": "Layout item IDs must be unique", "code": "custom"}]}),
            ),
            (
                DashboardsError::UnknownWidgets(vec!["a".into(), "b".into()]),
                400,
                json!({"error": "Unknown widget ids: a, b",
                       "details": {"formErrors": [], "fieldErrors": {"widgetIds": ["Unknown widget ids: a, b"]}},
                       "issues": [{"path": ["widgetIds"], "message": "Unknown widget ids: a, b", "code": "custom"}]}),
            ),
            (
                DashboardsError::IdRequired("roleId"),
                400,
                json!({"error": "roleId is required"}),
            ),
            (
                DashboardsError::InvalidId("userId"),
                400,
                json!({"error": "Invalid userId"}),
            ),
            (
                DashboardsError::TenantRequired,
                400,
                json!({"error": "Tenant context is required"}),
            ),
            (
                DashboardsError::InvalidEntityType("x:y".into()),
                400,
                json!({"error": "Invalid entity type: x:y"}),
            ),
            (
                DashboardsError::InvalidQuery("Invalid groupBy field: z".into()),
                400,
                json!({"error": "Invalid groupBy field: z"}),
            ),
            (
                DashboardsError::RegistryUnavailable,
                503,
                json!({"error": "Widget registry unavailable"}),
            ),
        ];
        for (err, status, body) in cases {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{body}");
            assert_eq!(app.body(), body);
        }
    }
}
