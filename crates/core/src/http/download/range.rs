//! The `Range` header of a download: one `bytes=` range, or the whole file.

use std::ops::RangeInclusive;

/// What a `Range` header asks of a file.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Wanted {
    /// One satisfiable range, `start..=end` within the file.
    Part(RangeInclusive<u64>),
    /// A well-formed range that starts past the end (416).
    Unsatisfiable,
}

/// One `bytes=` range of a file of `length` bytes (RFC 9110 14.1.2); `None`
/// for a malformed or multi-range header (the whole file is sent instead).
pub(super) fn parse_range(value: &str, length: u64) -> Option<Wanted> {
    let (unit, spec) = value.trim().split_once('=')?;
    if !unit.trim().eq_ignore_ascii_case("bytes") || spec.contains(',') {
        return None;
    }
    let (first, last) = spec.trim().split_once('-')?;
    let (first, last) = (first.trim(), last.trim());
    let number = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let wanted = if first.is_empty() {
        // A suffix: the last n bytes.
        let n = number(last)?;
        if n == 0 || length == 0 {
            Wanted::Unsatisfiable
        } else {
            Wanted::Part(length.saturating_sub(n)..=length - 1)
        }
    } else {
        let start = number(first)?;
        let end = if last.is_empty() {
            None
        } else {
            Some(number(last)?)
        };
        if end.is_some_and(|end| end < start) {
            return None;
        }
        if start >= length {
            Wanted::Unsatisfiable
        } else {
            Wanted::Part(start..=end.unwrap_or(u64::MAX).min(length - 1))
        }
    };
    Some(wanted)
}
