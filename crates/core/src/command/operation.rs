//! The logged operation clients see in the `x-om-operation` response header.

use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

/// The logged operation, as clients see it in `x-om-operation`.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    pub id: Uuid,
    pub undo_token: Option<String>,
    pub command_id: String,
    pub action_label: Option<String>,
    pub resource_kind: Option<String>,
    pub resource_id: Option<String>,
    #[serde(with = "crate::serde_util::timestamp")]
    pub executed_at: OffsetDateTime,
}

/// The response header carrying the operation.
pub const OPERATION_HEADER: &str = "x-om-operation";

impl Operation {
    /// `omop:<encodeURIComponent(JSON)>`, as the reference sends it.
    pub fn header_value(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        format!("omop:{}", encode_uri_component(&json))
    }
}

/// Adds `x-om-operation` to a success response when the logged operation can
/// be undone (the one place every module's write handlers go through).
pub fn with_operation(
    mut builder: actix_web::HttpResponseBuilder,
    op: &Operation,
) -> actix_web::HttpResponseBuilder {
    if op.undo_token.is_some() {
        builder.insert_header((OPERATION_HEADER, op.header_value()));
    }
    builder
}

/// JavaScript's `encodeURIComponent`.
fn encode_uri_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_header_is_uri_encoded_json() {
        let op = Operation {
            id: Uuid::nil(),
            undo_token: Some("t".into()),
            command_id: "a.b.update".into(),
            action_label: None,
            resource_kind: Some("a.b".into()),
            resource_id: Some("1".into()),
            executed_at: OffsetDateTime::UNIX_EPOCH,
        };
        let value = op.header_value();
        assert!(value.starts_with("omop:%7B%22id%22%3A%22"), "{value}");
        assert!(!value[5..].contains(['{', '"', ' ', ':']));
    }
}
