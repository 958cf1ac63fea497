//! Request and response bodies. Update fields are tri-state where the
//! column may be empty: absent keeps the stored value, `null` clears it, a
//! value sets it. Unknown fields are ignored, as the reference strips them.

mod bulk;
mod deals;
mod pipelines;

use serde::{Deserialize, Deserializer, Serialize};
use stoa_core::money::Money;
use time::format_description::well_known::Rfc3339;
use time::{Date, OffsetDateTime, Time};
use utoipa::ToSchema;
use uuid::Uuid;
use validator::{ValidationError, ValidationErrors};

pub use bulk::*;
pub use deals::*;
pub use pipelines::*;

fn problem(errors: &mut ValidationErrors, field: &'static str, code: &'static str, msg: String) {
    errors.add(field, ValidationError::new(code).with_message(msg.into()));
}

/// A text field's length in characters, when present.
fn check_len(
    errors: &mut ValidationErrors,
    field: &'static str,
    value: Option<&str>,
    min: usize,
    max: usize,
) {
    if let Some(value) = value {
        let len = value.trim().chars().count();
        if len < min || value.chars().count() > max {
            problem(
                errors,
                field,
                "length",
                format!("must be between {min} and {max} characters"),
            );
        }
    }
}

fn check_currency(errors: &mut ValidationErrors, value: Option<&str>) {
    if let Some(c) = value
        && !(c.len() == 3 && c.bytes().all(|b| b.is_ascii_uppercase()))
    {
        problem(
            errors,
            "value_currency",
            "currency",
            "must be a 3-letter ISO 4217 code such as \"EUR\"".into(),
        );
    }
}

fn check_probability(errors: &mut ValidationErrors, value: Option<i32>) {
    if value.is_some_and(|p| !(0..=100).contains(&p)) {
        problem(
            errors,
            "probability",
            "range",
            "must be between 0 and 100".into(),
        );
    }
}

fn check_amount(errors: &mut ValidationErrors, value: Option<&Money>) {
    if value.is_some_and(|m| m.decimal().is_sign_negative()) {
        problem(
            errors,
            "value_amount",
            "range",
            "must not be negative".into(),
        );
    }
}

fn check_outcome(errors: &mut ValidationErrors, value: Option<&str>) {
    if value.is_some_and(|v| v != "won" && v != "lost") {
        problem(
            errors,
            "closure_outcome",
            "enum",
            "must be \"won\" or \"lost\"".into(),
        );
    }
}

fn finish(errors: ValidationErrors) -> Result<(), ValidationErrors> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// A close date: an ISO-8601 date-time, or a plain date (midnight UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloseDate(pub OffsetDateTime);

impl<'de> Deserialize<'de> for CloseDate {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(de)?;
        parse_close_date(&raw).map(CloseDate).ok_or_else(|| {
            serde::de::Error::custom("must be a date (YYYY-MM-DD) or an ISO-8601 date-time")
        })
    }
}

/// Parses `2026-03-31` or `2026-03-31T12:00:00Z`.
pub fn parse_close_date(raw: &str) -> Option<OffsetDateTime> {
    let raw = raw.trim();
    if let Ok(at) = OffsetDateTime::parse(raw, &Rfc3339) {
        return Some(at);
    }
    let format = time::macros::format_description!("[year]-[month]-[day]");
    Date::parse(raw, &format)
        .ok()
        .map(|d| d.with_time(Time::MIDNIGHT).assume_utc())
}

/// `{id}` of a created record.
#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    pub id: Uuid,
}

/// `{ok: true}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Done {
    pub ok: bool,
}

fn set<T>(value: &Option<Option<T>>) -> Option<&T> {
    value.as_ref().and_then(Option::as_ref)
}
