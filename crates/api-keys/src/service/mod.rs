//! The rules of API keys: who may create which key, what a caller may list and
//! delete. Handlers call these functions; the write functions open their own
//! transaction, the checks take the caller's connection (its transaction).

mod create;
mod delete;
mod list;

pub use create::{NewKey, create, parse_expiry, prepare};
pub use delete::delete;
pub use list::{KeyListKey, ListScope, ListedKeys, READ_DEPS, list, list_request};

/// How many API keys may stand between a key and the user who started the chain
/// (a key created by a key created by a key ...).
pub const MAX_CHAIN: usize = 5;
