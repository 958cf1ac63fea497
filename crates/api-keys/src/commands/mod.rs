//! Key mutations, logged in the action log. Neither is undoable: undoing a
//! deletion would revive a key that may have leaked, and undoing a creation
//! is what deleting the key already does. Snapshots never contain the secret
//! or its hash.
//!
//! A delete goes through the resource kit ([`KeySnapshot`] is a
//! `stoa_acl::resource::Resource`, `delete.rs`); a create is its own command
//! (`create.rs`, crate README "Not on the kit").

mod create;
mod delete;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

pub use create::CreateKeyCommand;
pub use delete::LABEL as DELETE_LABEL;

pub const KEY_KIND: &str = "api_keys.key";
pub const CREATE: &str = "api_keys.keys.create";
pub const DELETE: &str = "api_keys.keys.delete";

/// A key as the action log shows it (and as the kit writes a delete).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KeySnapshot {
    pub id: Uuid,
    pub name: String,
    pub description: Option<String>,
    pub key_prefix: String,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub role_ids: Vec<Uuid>,
    pub created_by: Uuid,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub expires_at: Option<OffsetDateTime>,
    pub deleted: bool,
    /// The keys a delete took with it (made through this one), filled in by
    /// the write: the entry's context and event name them. Not a field of
    /// the key, so never shown in its snapshots.
    #[serde(skip)]
    pub cascaded: Vec<Uuid>,
}

fn to_value(s: &KeySnapshot) -> Value {
    serde_json::to_value(s).unwrap_or(Value::Null)
}
