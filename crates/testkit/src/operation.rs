//! The `x-om-operation` response header (`omop:<encodeURIComponent(JSON)>`)
//! parsed for assertions.

use serde::Deserialize;
use serde_json::Value;
use uuid::Uuid;

use crate::TestResponse;

/// The `x-om-operation` header of `res` as the JSON it carries
/// (`undoToken`, `commandId`, ...), for tests that hand it on as a body;
/// panics when the header is absent or malformed.
pub fn operation(res: &TestResponse) -> Value {
    let raw = res
        .header(stoa_core::command::OPERATION_HEADER)
        .expect("an x-om-operation header");
    let json = decoded(raw);
    serde_json::from_str(&json)
        .unwrap_or_else(|err| panic!("x-om-operation is not JSON ({err}): {json}"))
}

/// The JSON text of a header value (`omop:<encodeURIComponent(JSON)>`).
fn decoded(value: &str) -> String {
    let encoded = value
        .strip_prefix("omop:")
        .unwrap_or_else(|| panic!("x-om-operation without the omop: prefix: {value}"));
    percent_decode(encoded)
        .unwrap_or_else(|| panic!("x-om-operation is not percent-encoded UTF-8: {value}"))
}

/// The undoable operation a write logged, as clients read it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct OmOperation {
    pub id: Uuid,
    pub undo_token: Option<String>,
    pub command_id: String,
    pub action_label: Option<String>,
    pub resource_kind: Option<String>,
    pub resource_id: Option<String>,
    /// RFC 3339, as sent.
    pub executed_at: String,
}

impl OmOperation {
    /// Parses a header value; panics with the value when it is malformed
    /// (a test asserting on it should fail loudly).
    pub fn parse(value: &str) -> Self {
        let json = decoded(value);
        serde_json::from_str(&json)
            .unwrap_or_else(|err| panic!("x-om-operation is not an operation ({err}): {json}"))
    }
}

/// Decodes `%XX` escapes (JavaScript's `decodeURIComponent`).
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use stoa_core::command::Operation;

    #[test]
    fn round_trips_what_the_server_sends() {
        let op = Operation {
            id: Uuid::from_u128(7),
            undo_token: Some("tok/+ en".into()),
            command_id: "devices.update".into(),
            action_label: Some("Update device «x»".into()),
            resource_kind: Some("devices.device".into()),
            resource_id: None,
            executed_at: time::macros::datetime!(2026-11-25 10:00 UTC),
        };
        let parsed = OmOperation::parse(&op.header_value());
        assert_eq!(parsed.id, op.id);
        assert_eq!(parsed.undo_token.as_deref(), Some("tok/+ en"));
        assert_eq!(parsed.command_id, "devices.update");
        assert_eq!(parsed.action_label.as_deref(), Some("Update device «x»"));
        assert_eq!(parsed.resource_kind.as_deref(), Some("devices.device"));
        assert_eq!(parsed.resource_id, None);
        assert_eq!(parsed.executed_at, "2026-11-25T10:00:00.000Z");
        assert_eq!(percent_decode("%E2%82"), None);
        assert_eq!(percent_decode("%4"), None);
    }
}
