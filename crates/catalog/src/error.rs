//! The catalog module's failures, with the reference's messages, mapped to
//! the API's JSON errors in one place.

use actix_web::http::StatusCode;
use stoa_core::error::Issue;
use stoa_core::{ApiError, AppError};

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("Product not found")]
    NotFound,
    /// A collection-style request without an id.
    #[error("Product id is required.")]
    MissingId,
    #[error("Invalid product id")]
    InvalidId,
    /// Neither the body nor the caller's scope names an organization.
    #[error("Organization context required")]
    OrganizationRequired,
    /// `organizationId` names no live organization of the tenant.
    #[error("Organization not found")]
    OrganizationNotFound,
    /// Another product of the tenant has this SKU.
    #[error("A product with this SKU already exists")]
    SkuTaken,
    /// Another product of the tenant has this handle.
    #[error("A product with this handle already exists")]
    HandleTaken,
    #[error(transparent)]
    Db(#[from] stoa_core::db::DbError),
}

impl From<diesel::result::Error> for CatalogError {
    fn from(err: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind, Error};
        match err {
            Error::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                match info.constraint_name() {
                    Some("catalog_products_tenant_handle") => Self::HandleTaken,
                    // The SKU index, and any other unique key of the table.
                    _ => Self::SkuTaken,
                }
            }
            other => Self::Db(other.into()),
        }
    }
}

impl ApiError for CatalogError {
    fn status(&self) -> StatusCode {
        match self {
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MissingId
            | Self::InvalidId
            | Self::OrganizationRequired
            | Self::OrganizationNotFound => StatusCode::BAD_REQUEST,
            Self::SkuTaken | Self::HandleTaken => StatusCode::CONFLICT,
            Self::Db(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn code(&self) -> Option<&'static str> {
        match self {
            Self::SkuTaken => Some("sku_taken"),
            Self::HandleTaken => Some("handle_taken"),
            _ => None,
        }
    }
}

/// The input error naming `field`.
fn with_field(err: CatalogError, field: &str, message: &str, code: &'static str) -> AppError {
    AppError::from_api(err).with_issues(vec![Issue {
        path: vec![field.into()],
        message: message.into(),
        code: code.into(),
    }])
}

impl From<CatalogError> for AppError {
    fn from(err: CatalogError) -> Self {
        match err {
            CatalogError::Db(db) => db.into(),
            // Input problems: rendered in the route's declared shape, naming the field.
            CatalogError::MissingId => with_field(err, "id", "Required", "invalid_type"),
            CatalogError::InvalidId => with_field(err, "id", "Invalid uuid", "invalid_string"),
            CatalogError::OrganizationRequired => {
                with_field(err, "organizationId", "Required", "invalid_type")
            }
            CatalogError::OrganizationNotFound => with_field(
                err,
                "organizationId",
                "No such organization in this tenant",
                "invalid_reference",
            ),
            other => AppError::from_api(other),
        }
    }
}

/// A product id as sent (path or collection form): 400 when missing or not
/// a uuid.
pub fn parse_id(raw: &str) -> Result<uuid::Uuid, CatalogError> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(CatalogError::MissingId);
    }
    raw.parse().map_err(|_| CatalogError::InvalidId)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_variant_renders_its_status_and_body() {
        let cases: Vec<(CatalogError, u16, &str, bool)> = vec![
            (CatalogError::NotFound, 404, "Product not found", false),
            (
                CatalogError::MissingId,
                400,
                "Product id is required.",
                true,
            ),
            (CatalogError::InvalidId, 400, "Invalid product id", true),
            (
                CatalogError::OrganizationRequired,
                400,
                "Organization context required",
                true,
            ),
            (
                CatalogError::OrganizationNotFound,
                400,
                "Organization not found",
                true,
            ),
            (
                CatalogError::SkuTaken,
                409,
                "A product with this SKU already exists",
                false,
            ),
            (
                CatalogError::HandleTaken,
                409,
                "A product with this handle already exists",
                false,
            ),
            (
                CatalogError::Db(diesel::result::Error::BrokenTransactionManager.into()),
                500,
                "Internal server error",
                false,
            ),
        ];
        for (err, status, message, input) in cases {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{message}");
            assert_eq!(app.body()["error"], json!(message));
            assert_eq!(app.issues().is_some(), input, "{message}");
        }
    }

    #[test]
    fn ids_are_required_and_uuids() {
        assert!(matches!(parse_id(" "), Err(CatalogError::MissingId)));
        assert!(matches!(parse_id("nope"), Err(CatalogError::InvalidId)));
        let id = uuid::Uuid::from_u128(7);
        assert_eq!(parse_id(&format!(" {id} ")).ok(), Some(id));
    }
}
