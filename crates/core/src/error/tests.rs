use super::*;
use actix_web::body::MessageBody;

pub(super) fn render(err: &AppError) -> (u16, Value, Option<String>) {
    let res = err.error_response();
    let status = res.status().as_u16();
    let retry = res
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let bytes = res.into_body().try_into_bytes().unwrap_or_default();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        retry,
    )
}

#[derive(Debug, thiserror::Error)]
enum Sample {
    #[error("Device not found")]
    Missing,
    #[error("Too many ids (max {max})")]
    TooMany { max: usize },
    #[error("secret db text")]
    Broken,
}
impl ApiError for Sample {
    fn status(&self) -> StatusCode {
        match self {
            Sample::Missing => StatusCode::NOT_FOUND,
            Sample::TooMany { .. } => StatusCode::BAD_REQUEST,
            Sample::Broken => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
    fn code(&self) -> Option<&'static str> {
        matches!(self, Sample::TooMany { .. }).then_some("too_many_ids")
    }
}

#[test]
fn every_shape_renders_as_documented() {
    let (s, b, _) = render(&AppError::not_found("Role not found"));
    assert_eq!(
        (s, b),
        (404, serde_json::json!({"error": "Role not found"}))
    );

    let (s, b, _) = render(&AppError::bad_request("Invalid credentials").ok_false());
    assert_eq!(
        (s, b),
        (
            400,
            serde_json::json!({"ok": false, "error": "Invalid credentials"})
        )
    );

    let (s, b, _) = render(&AppError::bad_request("x").with_code("reserved_key"));
    assert_eq!(b["code"], "reserved_key");
    assert_eq!(s, 400);

    let (s, b, _) = render(&AppError::forbidden().with_field("requiredFeatures", ["a.b"]));
    assert_eq!(
        (s, b),
        (
            403,
            serde_json::json!({"error": "Forbidden", "requiredFeatures": ["a.b"]})
        )
    );

    let (s, _, retry) = render(&AppError::too_many_requests(30));
    assert_eq!((s, retry.as_deref()), (429, Some("30")));

    let (s, b, _) = render(&AppError::internal("connection reset by peer at 10.0.0.3"));
    assert_eq!(
        (s, b),
        (500, serde_json::json!({"error": "Internal server error"}))
    );
}

#[test]
fn the_bulk_envelope_wraps_any_error() {
    let err = AppError::forbidden()
        .with_field("requiredFeatures", ["a.b"])
        .in_envelope(ErrorEnvelope::Bulk);
    let (s, b, _) = render(&err);
    assert_eq!(
        (s, b),
        (
            403,
            serde_json::json!({"ok": false, "progressJobId": null, "message": "Forbidden",
                "error": "Forbidden", "requiredFeatures": ["a.b"]})
        )
    );
    // An input error keeps the shape's message.
    let err = AppError::bad_request("Invalid input").with_issues(vec![Issue {
        path: vec!["ids".into()],
        message: "Required".into(),
        code: "invalid_type".into(),
    }]);
    let res = err.response_with(ErrorShape::H, Some(ErrorEnvelope::Bulk));
    assert_eq!(res.status().as_u16(), 400);
    let bytes = res.into_body().try_into_bytes().unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    assert_eq!(body["message"], "Invalid payload");
    assert_eq!(body["progressJobId"], Value::Null);
    assert_eq!(body["ok"], false);
}

#[test]
fn domain_errors_keep_status_and_code_but_hide_internals() {
    let (s, b, _) = render(&AppError::from_api(Sample::Missing));
    assert_eq!(
        (s, b),
        (404, serde_json::json!({"error": "Device not found"}))
    );
    let (s, b, _) = render(&AppError::from_api(Sample::TooMany { max: 200 }));
    assert_eq!(s, 400);
    assert_eq!(
        b,
        serde_json::json!({"error": "Too many ids (max 200)", "code": "too_many_ids"})
    );
    let (s, b, _) = render(&AppError::from_api(Sample::Broken));
    assert_eq!(
        (s, b),
        (500, serde_json::json!({"error": "Internal server error"}))
    );
}
