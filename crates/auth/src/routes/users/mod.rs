//! `/auth/users`: one handler per file; the rules are in
//! `accounts/users.rs` and `accounts/user_list/`. The `id` of a delete
//! (query or body) is read here, for `/auth/roles` too.

pub mod create;
pub mod delete;
pub mod list;
pub mod update;

use serde::Deserialize;
use stoa_core::AppError;
pub use stoa_core::command::with_operation;
use uuid::Uuid;

use crate::dto::IdQuery;
use crate::error::AuthError;

/// The `id` of a delete: the query's, else the JSON body's.
pub fn id_of(query: &IdQuery, body: &[u8]) -> Result<Uuid, AppError> {
    #[derive(Deserialize)]
    struct Body {
        id: Option<String>,
    }
    stoa_core::extract::check_json_body(body)?;
    let raw = query
        .id
        .clone()
        .or_else(|| serde_json::from_slice::<Body>(body).ok().and_then(|b| b.id));
    raw.as_deref()
        .map(str::trim)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| AuthError::IdRequired.into())
}
