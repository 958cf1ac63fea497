//! Request and response bodies of the layout and assignment routes (the
//! widget data language is in [`crate::analytics::request`]). Unknown keys
//! are ignored, as the reference strips them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::{Validate, ValidationError, ValidationErrors};

use crate::model::{LayoutItem, Mode, Size};
use crate::widgets::CatalogEntry;

/// Most items a layout holds.
pub const MAX_ITEMS: u64 = 100;
/// Most widget ids one assignment names, and the longest id.
pub const MAX_WIDGET_IDS: u64 = 200;

/// One item of `PUT /dashboards/layout` (its `order` and `priority` are
/// replaced by its position in the array).
#[derive(Debug, Deserialize, Serialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LayoutItemInput {
    pub id: Uuid,
    #[validate(length(min = 1, max = 200))]
    pub widget_id: String,
    #[validate(range(min = 0))]
    pub order: i64,
    #[validate(range(min = 0))]
    pub priority: Option<i64>,
    pub size: Option<Size>,
    #[schema(value_type = Option<Object>)]
    pub settings: Option<Value>,
}

/// `PUT /dashboards/layout`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
pub struct PutLayout {
    #[validate(length(max = MAX_ITEMS), nested)]
    pub items: Vec<LayoutItemInput>,
}

/// `PATCH /dashboards/layout/{itemId}`: a JSON object with `size` and/or
/// `settings` (absent or `null` keeps the stored value).
#[derive(Debug, Deserialize, ToSchema)]
#[schema(value_type = PatchLayoutItemDoc)]
pub struct PatchLayoutItem(pub Map<String, Value>);

// The documented form of `PatchLayoutItem`.
/// The item's changes: a new `size`, new `settings`, or both.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PatchLayoutItemDoc {
    pub size: Option<Size>,
    #[schema(value_type = Option<Object>)]
    pub settings: Option<Value>,
}

impl PatchLayoutItem {
    /// The new size, if one is sent (checked by `validate`).
    pub fn size(&self) -> Option<Size> {
        self.0
            .get("size")
            .filter(|v| !v.is_null())
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }
    pub fn settings(&self) -> Option<Value> {
        self.0.get("settings").filter(|v| !v.is_null()).cloned()
    }
}

impl Validate for PatchLayoutItem {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        if let Some(size) = self.0.get("size").filter(|v| !v.is_null())
            && serde_json::from_value::<Size>(size.clone()).is_err()
        {
            errors.add(
                "size",
                ValidationError::new("invalid_enum_value")
                    .with_message("size must be one of sm, md, lg".into()),
            );
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Every widget id is 1–200 characters.
fn each_widget_id(ids: &[String]) -> Result<(), ValidationError> {
    if ids
        .iter()
        .any(|id| id.is_empty() || id.chars().count() > MAX_WIDGET_IDS as usize)
    {
        return Err(ValidationError::new("too_small")
            .with_message("each widget id must be 1 to 200 characters".into()));
    }
    Ok(())
}

/// `PUT /dashboards/roles/widgets`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PutRoleWidgets {
    pub role_id: Uuid,
    #[validate(length(max = MAX_WIDGET_IDS), custom(function = "each_widget_id"))]
    pub widget_ids: Vec<String>,
}

/// `PUT /dashboards/users/widgets`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PutUserWidgets {
    pub user_id: Uuid,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    #[validate(length(max = MAX_WIDGET_IDS), custom(function = "each_widget_id"))]
    pub widget_ids: Vec<String>,
}

/// `?roleId=&tenantId=&organizationId=` (the scope only for super admins).
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RoleWidgetsQuery {
    /// Required.
    pub role_id: Option<String>,
    pub tenant_id: Option<String>,
    pub organization_id: Option<String>,
}

/// `?userId=&tenantId=&organizationId=` (the scope only for super admins).
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct UserWidgetsQuery {
    /// Required.
    pub user_id: Option<String>,
    pub tenant_id: Option<String>,
    pub organization_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Ok {
    pub ok: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Layout {
    pub items: Vec<LayoutItem>,
}

/// Who the dashboard belongs to.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DashboardContext {
    pub user_id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub user_name: Option<String>,
    pub user_email: Option<String>,
    /// The name, else the e-mail, else the user id.
    pub user_label: String,
}

/// `GET /dashboards/layout`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LayoutResponse {
    pub layout: Layout,
    pub allowed_widget_ids: Vec<String>,
    pub can_configure: bool,
    pub context: DashboardContext,
    pub widgets: Vec<CatalogEntry>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Catalog {
    pub items: Vec<CatalogEntry>,
}

#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScopeView {
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleWidgets {
    pub widget_ids: Vec<String>,
    pub has_custom: bool,
    pub scope: ScopeView,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleWidgetsSaved {
    pub ok: bool,
    pub widget_ids: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserWidgets {
    pub mode: Mode,
    pub widget_ids: Vec<String>,
    pub has_custom: bool,
    pub effective_widget_ids: Vec<String>,
    pub scope: ScopeView,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserWidgetsSaved {
    pub ok: bool,
    pub mode: Mode,
    pub widget_ids: Vec<String>,
}
