//! The SQL of the session endpoints: users (`users.rs`), sessions and refresh
//! tokens (`sessions.rs`), reset and invitation tokens (`resets.rs`). Functions
//! take a connection so the services (`crate::service`) compose them into one
//! transaction.

mod resets;
mod sessions;
mod users;

pub use resets::*;
pub use sessions::*;
pub use users::*;

use diesel::prelude::*;
use uuid::Uuid;

#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = crate::schema::users)]
pub struct UserRow {
    pub id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub email: String,
    pub name: Option<String>,
    pub password_hash: Option<String>,
    pub is_confirmed: bool,
    pub is_active: bool,
}

/// E-mails are compared trimmed and lower-cased.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

/// Whether a normalised e-mail is acceptable for an account: one `@`-split
/// with a non-empty local part, a dotted domain that neither starts nor ends
/// with a dot, no white space or control characters, at most 254 bytes.
pub fn valid_email(email: &str) -> bool {
    email.len() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        })
}
