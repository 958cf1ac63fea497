//! The customers module's failures, with the reference's messages, mapped to
//! the API's JSON errors in one place.

use actix_web::http::StatusCode;
use stoa_core::{ApiError, AppError};

#[derive(Debug, thiserror::Error)]
pub enum CustomersError {
    #[error("Deal not found")]
    DealNotFound,
    #[error("Pipeline not found")]
    PipelineNotFound,
    #[error("Pipeline stage not found")]
    StageNotFound,
    /// A deal names a stage of another pipeline than the one it names.
    #[error("Pipeline stage does not belong to the selected pipeline")]
    StageOfOtherPipeline,
    /// The deal, stage or pipeline would join records of two organizations.
    #[error("Pipeline belongs to another organization")]
    OtherOrganization,
    #[error("Owner not found in this tenant")]
    OwnerNotFound,
    /// The caller has no organization selected (nor a home one) to create in.
    #[error("Organization and tenant context required")]
    OrganizationRequired,
    /// An amount without its currency.
    #[error("valueCurrency is required with valueAmount")]
    CurrencyRequired,
    #[error("Pipeline has stages or deals; remove them first")]
    PipelineInUse,
    #[error("Pipeline stage is used by deals; move them first")]
    StageInUse,
    /// Another pipeline is the default of the organization (undo or redo of
    /// an older default while a newer one stands).
    #[error(
        "Another pipeline is the default of this organization; make this one the default instead"
    )]
    DefaultTaken,
    #[error(transparent)]
    Db(#[from] stoa_core::db::DbError),
}

impl From<diesel::result::Error> for CustomersError {
    fn from(err: diesel::result::Error) -> Self {
        Self::Db(err.into())
    }
}

impl ApiError for CustomersError {
    fn status(&self) -> StatusCode {
        match self {
            Self::DealNotFound | Self::PipelineNotFound => StatusCode::NOT_FOUND,
            Self::StageNotFound
            | Self::StageOfOtherPipeline
            | Self::OtherOrganization
            | Self::OwnerNotFound
            | Self::OrganizationRequired
            | Self::CurrencyRequired => StatusCode::BAD_REQUEST,
            Self::PipelineInUse | Self::StageInUse | Self::DefaultTaken => StatusCode::CONFLICT,
            Self::Db(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// Domain errors keep their own message (the reference answers them as
/// `{error}`, not as a validation shape).
impl From<CustomersError> for AppError {
    fn from(err: CustomersError) -> Self {
        match err {
            CustomersError::Db(db) => db.into(),
            other => AppError::from_api(other),
        }
    }
}

/// The stage deletion answer when a foreign key still points at the row.
pub fn in_use(err: diesel::result::Error, answer: CustomersError) -> CustomersError {
    use diesel::result::{DatabaseErrorKind, Error};
    match err {
        Error::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _) => answer,
        other => other.into(),
    }
}

/// A pipeline write refused by the one-default index
/// (`customer_pipelines_one_default`) as 409, anything else unchanged.
pub fn default_taken(err: diesel::result::Error) -> CustomersError {
    use diesel::result::{DatabaseErrorKind, Error};
    match err {
        Error::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => CustomersError::DefaultTaken,
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_renders_its_status_and_body() {
        let cases: Vec<(CustomersError, u16, &str)> = vec![
            (CustomersError::DealNotFound, 404, "Deal not found"),
            (CustomersError::PipelineNotFound, 404, "Pipeline not found"),
            (
                CustomersError::StageNotFound,
                400,
                "Pipeline stage not found",
            ),
            (
                CustomersError::StageOfOtherPipeline,
                400,
                "Pipeline stage does not belong to the selected pipeline",
            ),
            (
                CustomersError::OtherOrganization,
                400,
                "Pipeline belongs to another organization",
            ),
            (
                CustomersError::OwnerNotFound,
                400,
                "Owner not found in this tenant",
            ),
            (
                CustomersError::OrganizationRequired,
                400,
                "Organization and tenant context required",
            ),
            (
                CustomersError::CurrencyRequired,
                400,
                "valueCurrency is required with valueAmount",
            ),
            (
                CustomersError::PipelineInUse,
                409,
                "Pipeline has stages or deals; remove them first",
            ),
            (
                CustomersError::StageInUse,
                409,
                "Pipeline stage is used by deals; move them first",
            ),
            (
                CustomersError::DefaultTaken,
                409,
                "Another pipeline is the default of this organization; make this one the default instead",
            ),
            (
                CustomersError::Db(diesel::result::Error::BrokenTransactionManager.into()),
                500,
                "Internal server error",
            ),
        ];
        for (err, status, message) in cases {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{message}");
            assert_eq!(app.body()["error"], serde_json::json!(message));
        }
    }
}
