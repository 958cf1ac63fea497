//! Optimistic locking, as the reference's clients do it: a write may carry
//! the `updatedAt` it last read in `x-om-ext-optimistic-lock-expected-updated-at`
//! and is refused with 409 when the record changed since. The header is one
//! of the [`ALLOWED_HEADERS`](super::ALLOWED_HEADERS) CORS lets through.

use crate::{AppError, AppResult};
use actix_web::HttpRequest;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The header carrying the `updatedAt` a client last read (optimistic locking).
pub const OPTIMISTIC_LOCK_HEADER: &str = super::headers::OPTIMISTIC_LOCK;

/// The expected `updatedAt` of the optimistic-lock header; 400 when it is not
/// an ISO-8601 timestamp.
pub fn expected_updated_at(req: &HttpRequest) -> AppResult<Option<OffsetDateTime>> {
    let Some(raw) = req
        .headers()
        .get(OPTIMISTIC_LOCK_HEADER)
        .map(|v| v.to_str().unwrap_or("\u{0}").trim())
        .filter(|v| !v.is_empty())
    else {
        return Ok(None);
    };
    OffsetDateTime::parse(raw, &Rfc3339).map(Some).map_err(|_| {
        AppError::bad_request(format!(
            "Invalid {OPTIMISTIC_LOCK_HEADER} header: expected an ISO-8601 timestamp"
        ))
    })
}

fn iso(t: OffsetDateTime) -> String {
    crate::serde_util::timestamp::format(t)
}

/// 409 `record_modified` when the client expected another version than the
/// stored one. Nothing to compare (no header, or no stored row) passes.
/// Versions are compared to the precision the client sent: milliseconds as
/// stoa answers them (`serde_util::timestamp`), or the microseconds older
/// answers carried.
pub fn check_lock(
    expected: Option<OffsetDateTime>,
    current: Option<OffsetDateTime>,
) -> AppResult<()> {
    let (Some(expected), Some(current)) = (expected, current) else {
        return Ok(());
    };
    if crate::serde_util::timestamp::same_instant(expected, current) {
        return Ok(());
    }
    Err(AppError::conflict("record_modified")
        .with_code("optimistic_lock_conflict")
        .with_field("currentUpdatedAt", iso(current))
        .with_field("expectedUpdatedAt", iso(expected)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_compares_at_the_precision_sent() {
        let t = OffsetDateTime::from_unix_timestamp_nanos(1_700_000_000_123_456_000).unwrap();
        let same_ms = OffsetDateTime::from_unix_timestamp_nanos(1_700_000_000_123_000_000).unwrap();
        let other_us =
            OffsetDateTime::from_unix_timestamp_nanos(1_700_000_000_123_457_000).unwrap();
        assert!(check_lock(Some(same_ms), Some(t)).is_ok());
        assert!(check_lock(Some(t), Some(t)).is_ok());
        assert!(check_lock(Some(other_us), Some(t)).is_err());
        assert!(check_lock(None, Some(t)).is_ok());
        assert!(check_lock(Some(t), None).is_ok());
        let err = check_lock(Some(t - time::Duration::SECOND), Some(t)).unwrap_err();
        assert_eq!(err.status().as_u16(), 409);
        assert_eq!(err.body()["code"], "optimistic_lock_conflict");
        assert_eq!(err.body()["error"], "record_modified");
    }
}
