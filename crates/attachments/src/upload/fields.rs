//! The form fields of an upload (and of a metadata update): identifiers,
//! tags, assignments and custom fields, checked and normalised with their
//! limits.

use std::collections::HashSet;

use serde_json::Value;
use validator::Validate;

use crate::dto::Assignment;
use crate::error::AttachmentsError;

const MAX_TAGS: usize = 50;
const MAX_ASSIGNMENTS: usize = 100;
const MAX_CUSTOM_FIELDS: usize = 50;
const MAX_CUSTOM_FIELDS_BYTES: usize = 16 * 1024;

/// Entity and record ids are stored and compared, never used as paths; they
/// are still kept to a plain alphabet so nothing that looks like a path
/// (`../`, encoded separators, NUL) is accepted.
pub fn check_identifier(field: &'static str, value: &str) -> Result<(), AttachmentsError> {
    let ok = !value.is_empty()
        && value.len() <= 200
        && !value.contains("..")
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(AttachmentsError::InvalidIdentifier(field))
    }
}

/// Tags from a JSON array of strings or a comma list: trimmed, non-empty,
/// de-duplicated, order kept.
pub fn parse_tags(raw: Option<&str>) -> Result<Vec<String>, AttachmentsError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(Vec::new());
    };
    let list: Vec<String> = if raw.starts_with('[') {
        serde_json::from_str(raw).map_err(|_| AttachmentsError::InvalidField("tags"))?
    } else {
        raw.split(',').map(String::from).collect()
    };
    normalize_tags(list)
}

pub fn normalize_tags(list: Vec<String>) -> Result<Vec<String>, AttachmentsError> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for tag in list {
        let tag = tag.trim().to_string();
        if tag.is_empty() {
            continue;
        }
        if tag.chars().count() > 100 || tag.chars().any(char::is_control) {
            return Err(AttachmentsError::InvalidField("tags"));
        }
        if seen.insert(tag.clone()) {
            out.push(tag);
        }
    }
    if out.len() > MAX_TAGS {
        return Err(AttachmentsError::InvalidField("tags"));
    }
    Ok(out)
}

/// Assignments need a type and an id; the last of one `type:id` wins.
pub fn normalize_assignments(list: Vec<Assignment>) -> Result<Vec<Assignment>, AttachmentsError> {
    let mut out: Vec<Assignment> = Vec::new();
    for mut item in list {
        item.kind = item.kind.trim().to_string();
        item.id = item.id.trim().to_string();
        if item.validate().is_err() {
            return Err(AttachmentsError::InvalidField("assignments"));
        }
        out.retain(|a| !(a.kind == item.kind && a.id == item.id));
        out.push(item);
    }
    if out.len() > MAX_ASSIGNMENTS {
        return Err(AttachmentsError::InvalidField("assignments"));
    }
    Ok(out)
}

pub(super) fn parse_assignments(raw: Option<&str>) -> Result<Vec<Assignment>, AttachmentsError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(Vec::new());
    };
    let list: Vec<Assignment> =
        serde_json::from_str(raw).map_err(|_| AttachmentsError::InvalidField("assignments"))?;
    normalize_assignments(list)
}

/// Custom fields: a flat object (keys of letters, digits and `_`), each value
/// a scalar or a list of scalars, at most 50 keys and 16 KiB.
pub fn check_custom_fields(value: Value) -> Result<Option<Value>, AttachmentsError> {
    let invalid = AttachmentsError::InvalidField("customFields");
    let Value::Object(map) = value else {
        return match value {
            Value::Null => Ok(None),
            _ => Err(invalid),
        };
    };
    if map.len() > MAX_CUSTOM_FIELDS {
        return Err(invalid);
    }
    let scalar = |v: &Value| {
        matches!(
            v,
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)
        )
    };
    for (key, value) in &map {
        let key_ok = !key.is_empty()
            && key.len() <= 100
            && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let value_ok = scalar(value)
            || matches!(value, Value::Array(items) if items.len() <= 100 && items.iter().all(scalar));
        if !key_ok || !value_ok {
            return Err(invalid);
        }
    }
    let size = serde_json::to_vec(&map)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    if size > MAX_CUSTOM_FIELDS_BYTES {
        return Err(invalid);
    }
    Ok((!map.is_empty()).then_some(Value::Object(map)))
}

pub(super) fn parse_custom_fields(raw: Option<&str>) -> Result<Option<Value>, AttachmentsError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let value: Value =
        serde_json::from_str(raw).map_err(|_| AttachmentsError::InvalidField("customFields"))?;
    check_custom_fields(value)
}
