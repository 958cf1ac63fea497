//! The one way stoa writes a timestamp in JSON: UTC with exactly three
//! fraction digits and `Z` (`2026-01-01T00:00:00.000Z`), as the reference
//! (JavaScript's `Date#toISOString`) writes them. Values are truncated to the
//! millisecond when written; any RFC 3339 timestamp is read.
//!
//! ```rust,ignore
//! #[derive(Serialize, Deserialize)]
//! struct Item {
//!     #[serde(with = "stoa_core::serde_util::timestamp")]
//!     created_at: OffsetDateTime,
//!     #[serde(with = "stoa_core::serde_util::timestamp::option")]
//!     deleted_at: Option<OffsetDateTime>,
//! }
//! ```
//!
//! Values a client sends back to be compared with a stored one (optimistic
//! locks, cursors) are compared at the precision they were sent with
//! ([`same_instant`], [`is_millisecond`]): a millisecond value matches a stored
//! microsecond value in the same millisecond, and a microsecond value sent
//! by an older client still matches exactly.

use serde::{Deserialize, Deserializer, Serializer};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime, UtcOffset};

/// The pattern every written timestamp matches.
pub const PATTERN: &str = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$";

/// `t` in UTC as `YYYY-MM-DDTHH:MM:SS.mmmZ` (truncated to the millisecond).
pub fn format(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// [`format`] as a JSON string.
pub fn value(t: OffsetDateTime) -> serde_json::Value {
    serde_json::Value::String(format(t))
}

/// Any RFC 3339 timestamp (`None` when `raw` is not one).
pub fn parse(raw: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(raw.trim(), &Rfc3339).ok()
}

/// `t` truncated to the millisecond (what [`format`] writes).
pub fn truncate(t: OffsetDateTime) -> OffsetDateTime {
    t - Duration::nanoseconds(i64::from(t.nanosecond() % 1_000_000))
}

/// Whether `t` has nothing below the millisecond (a value as stoa writes it).
pub fn is_millisecond(t: OffsetDateTime) -> bool {
    t.nanosecond().is_multiple_of(1_000_000)
}

/// Whether `sent` (a value a client read and sent back) names the stored
/// instant `stored`, compared at the precision `sent` carries: milliseconds
/// as stoa writes them, or the microseconds older answers carried.
pub fn same_instant(sent: OffsetDateTime, stored: OffsetDateTime) -> bool {
    let unit: i128 = if is_millisecond(sent) {
        1_000_000
    } else {
        1_000
    };
    sent.unix_timestamp_nanos().div_euclid(unit) == stored.unix_timestamp_nanos().div_euclid(unit)
}

/// SQL writing the `timestamptz` expression `expr` as [`format`] does, for
/// JSON built by Postgres (`to_json(timestamptz)` writes six digits and
/// `+00:00`). Postgres's `MS` truncates, like [`format`].
pub fn sql(expr: &str) -> String {
    format!("to_char(({expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')")
}

pub fn serialize<S: Serializer>(t: &OffsetDateTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format(*t))
}

pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<OffsetDateTime, D::Error> {
    let raw = std::borrow::Cow::<str>::deserialize(de)?;
    OffsetDateTime::parse(&raw, &Rfc3339).map_err(serde::de::Error::custom)
}

/// The same for `Option<OffsetDateTime>` (`null` when absent).
pub mod option {
    use super::*;

    pub fn serialize<S: Serializer>(t: &Option<OffsetDateTime>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&format(*t)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        de: D,
    ) -> Result<Option<OffsetDateTime>, D::Error> {
        match Option::<std::borrow::Cow<str>>::deserialize(de)? {
            Some(raw) => OffsetDateTime::parse(&raw, &Rfc3339)
                .map(Some)
                .map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Item {
        #[serde(with = "super")]
        at: OffsetDateTime,
        #[serde(with = "super::option")]
        maybe: Option<OffsetDateTime>,
    }

    #[test]
    fn writes_three_digits_in_utc_and_reads_any_rfc3339() {
        let at = OffsetDateTime::parse("2026-01-01T02:00:00.123456789+02:00", &Rfc3339).unwrap();
        assert_eq!(format(at), "2026-01-01T00:00:00.123Z");
        let whole = OffsetDateTime::parse("2026-01-01T00:00:00Z", &Rfc3339).unwrap();
        assert_eq!(format(whole), "2026-01-01T00:00:00.000Z");
        let json = serde_json::to_value(Item { at, maybe: None }).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"at": "2026-01-01T00:00:00.123Z", "maybe": null})
        );
        let back: Item = serde_json::from_value(serde_json::json!({
            "at": "2026-01-01T00:00:00.123456Z", "maybe": "2026-01-01T00:00:00+01:00"
        }))
        .unwrap();
        assert_eq!(back.at.nanosecond(), 123_456_000);
        assert_eq!(format(back.maybe.unwrap()), "2025-12-31T23:00:00.000Z");
        assert!(
            serde_json::from_value::<Item>(serde_json::json!({"at": "yesterday", "maybe": null}))
                .is_err()
        );
        assert_eq!(truncate(at).nanosecond(), 123_000_000);
    }

    #[test]
    fn compares_at_the_precision_sent() {
        let stored = parse("2026-01-01T00:00:00.123456Z").unwrap();
        assert!(same_instant(
            parse("2026-01-01T00:00:00.123Z").unwrap(),
            stored
        ));
        assert!(same_instant(
            parse("2026-01-01T00:00:00.123456Z").unwrap(),
            stored
        ));
        assert!(!same_instant(
            parse("2026-01-01T00:00:00.123457Z").unwrap(),
            stored
        ));
        assert!(!same_instant(
            parse("2026-01-01T00:00:00.122Z").unwrap(),
            stored
        ));
        let before_epoch = parse("1969-12-31T23:59:59.999500Z").unwrap();
        assert!(same_instant(
            parse("1969-12-31T23:59:59.999Z").unwrap(),
            before_epoch
        ));
    }
}
