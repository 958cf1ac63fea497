//! The devices module's failures, with the reference's messages.

use actix_web::http::StatusCode;
use stoa_core::{ApiError, AppError};

/// Most list ids a request may name (`?ids=`).
pub const MAX_IDS: usize = 200;

#[derive(Debug, thiserror::Error)]
pub enum DevicesError {
    /// An API key (or another principal without a user) tried to act as a device owner.
    #[error("Unauthorized")]
    NotADeviceActor,
    #[error("Device not found")]
    NotFound,
    /// The device belongs to another user, or to an organization the caller cannot see.
    #[error("Access denied")]
    AccessDenied,
    #[error("Invalid device id")]
    InvalidId,
    #[error("Invalid query parameters: ids: at most {max} ids are allowed")]
    TooManyIds { max: usize },
    #[error("Invalid query parameters: ids: `{0}` is not a uuid")]
    MalformedListId(String),
    #[error("Target user not found in this tenant")]
    TargetUserNotFound,
    /// Two registrations of the same device raced, or a revival would duplicate a live device.
    #[error("This device is already registered")]
    AlreadyRegistered,
    #[error(transparent)]
    Db(#[from] stoa_core::db::DbError),
    /// A push token could not be encrypted or decrypted (a key is missing
    /// from `STOA_ENCRYPTION_KEYS`, or the stored value is damaged).
    #[error("push token encryption: {0}")]
    Crypto(#[from] stoa_core::crypto::CryptoError),
}

impl From<diesel::result::Error> for DevicesError {
    fn from(err: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind, Error};
        match err {
            Error::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => Self::AlreadyRegistered,
            other => Self::Db(other.into()),
        }
    }
}

impl ApiError for DevicesError {
    fn status(&self) -> StatusCode {
        match self {
            Self::NotADeviceActor => StatusCode::UNAUTHORIZED,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::AccessDenied => StatusCode::FORBIDDEN,
            Self::InvalidId
            | Self::TooManyIds { .. }
            | Self::MalformedListId(_)
            | Self::TargetUserNotFound => StatusCode::BAD_REQUEST,
            Self::AlreadyRegistered => StatusCode::CONFLICT,
            Self::Db(_) | Self::Crypto(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<DevicesError> for AppError {
    fn from(err: DevicesError) -> Self {
        match err {
            DevicesError::Db(db) => db.into(),
            // Logged once with its cause; the client sees a generic 500.
            DevicesError::Crypto(err) => AppError::internal(err),
            // An input problem: rendered in the route's declared shape.
            DevicesError::InvalidId => {
                AppError::from_api(DevicesError::InvalidId).with_issues(vec![
                    stoa_core::error::Issue {
                        path: vec!["id".into()],
                        message: "Invalid uuid".into(),
                        code: "invalid_string".into(),
                    },
                ])
            }
            other => AppError::from_api(other),
        }
    }
}

/// The message of every rejected device body.
pub const INVALID_PAYLOAD: &str = "Invalid device payload";

/// Rewrites a body rejection of the JSON extractor as the reference's
/// `{error:"Invalid device payload", details}`, keeping what names the field:
/// `details` is the flattened `{formErrors, fieldErrors}` every stoa
/// validation error carries (the reference sends zod's `flatten()`), and
/// `issues` the `[{path, message, code}]` list. Other errors (413, ...) pass
/// unchanged.
pub fn invalid_payload(err: AppError) -> AppError {
    if err.status() != StatusCode::BAD_REQUEST {
        return err;
    }
    let issues = match err.issues() {
        Some(issues) => issues.to_vec(),
        None => vec![stoa_core::error::Issue {
            path: Vec::new(),
            message: err.message().to_string(),
            code: "invalid_type".into(),
        }],
    };
    AppError::bad_request(INVALID_PAYLOAD).with_issues(issues)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use stoa_core::error::Issue;

    #[test]
    fn every_variant_renders_its_status_and_body() {
        let cases: Vec<(DevicesError, u16, &str)> = vec![
            (DevicesError::NotADeviceActor, 401, "Unauthorized"),
            (DevicesError::NotFound, 404, "Device not found"),
            (DevicesError::AccessDenied, 403, "Access denied"),
            (DevicesError::InvalidId, 400, "Invalid device id"),
            (
                DevicesError::TooManyIds { max: 200 },
                400,
                "Invalid query parameters: ids: at most 200 ids are allowed",
            ),
            (
                DevicesError::MalformedListId("x".into()),
                400,
                "Invalid query parameters: ids: `x` is not a uuid",
            ),
            (
                DevicesError::TargetUserNotFound,
                400,
                "Target user not found in this tenant",
            ),
            (
                DevicesError::AlreadyRegistered,
                409,
                "This device is already registered",
            ),
            (
                DevicesError::Db(diesel::result::Error::BrokenTransactionManager.into()),
                500,
                "Internal server error",
            ),
            (
                DevicesError::Crypto(stoa_core::crypto::CryptoError::UnknownKey("k".into())),
                500,
                "Internal server error",
            ),
        ];
        for (err, status, message) in cases {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{message}");
            assert_eq!(app.body()["error"], json!(message));
            // Only a malformed id is an input error (with the field named).
            assert_eq!(app.issues().is_some(), message == "Invalid device id");
        }
    }

    #[test]
    fn unique_violations_are_conflicts() {
        let err = diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            Box::new(String::from("duplicate key")),
        );
        assert!(matches!(
            DevicesError::from(err),
            DevicesError::AlreadyRegistered
        ));
    }

    #[test]
    fn invalid_payload_names_the_field() {
        let original =
            AppError::bad_request("Invalid payload: deviceId: too long").with_issues(vec![Issue {
                path: vec![json!("deviceId")],
                message: "length must be between 1 and 255".into(),
                code: "length".into(),
            }]);
        let err = invalid_payload(original);
        assert_eq!(err.status().as_u16(), 400);
        let body = err.body();
        assert_eq!(body["error"], INVALID_PAYLOAD);
        assert_eq!(
            body["details"]["fieldErrors"]["deviceId"],
            json!(["length must be between 1 and 255"])
        );
        assert_eq!(body["issues"][0]["path"], json!(["deviceId"]));
        let empty = invalid_payload(AppError::bad_request(
            "Invalid JSON body: the body is empty",
        ));
        assert_eq!(
            empty.body(),
            json!({"error": INVALID_PAYLOAD, "details": {"formErrors": ["Invalid JSON body: the body is empty"], "fieldErrors": {}}, "issues": [{"path": [], "message": "Invalid JSON body: the body is empty", "code": "invalid_type"}]})
        );
        assert_eq!(
            invalid_payload(AppError::payload_too_large(10))
                .status()
                .as_u16(),
            413
        );
    }
}
