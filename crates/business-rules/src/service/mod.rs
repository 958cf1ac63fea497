//! The module's rules. Reads take a connection; writes open the transaction,
//! lock what they check and run the command through the bus.

pub mod checks;
pub mod execute;
pub mod logs;
pub mod options;
pub mod rules;
pub mod sets;

use stoa_acl::AuthContext;
use stoa_core::AppError;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::error::RulesError;

/// The organization a new record goes to (and rules run in): the selected
/// one, else the caller's home organization.
pub fn target_organization(ctx: &AuthContext) -> Result<Uuid, AppError> {
    let org = ctx
        .organization_id()
        .or(ctx.home_organization_id)
        .ok_or(RulesError::ScopeRequired)?;
    ctx.require_organizations([Some(org)])?;
    Ok(org)
}

/// `(page, pageSize)` with the defaults (1, 50).
pub fn page_of(page: Option<i64>, size: Option<i64>) -> (i64, i64) {
    (page.unwrap_or(1).max(1), size.unwrap_or(50).clamp(1, 100))
}

pub fn total_pages(total: i64, size: i64) -> i64 {
    ((total + size - 1) / size).max(1)
}

/// A date (`YYYY-MM-DD`, midnight UTC) or an RFC 3339 date-time.
pub fn parse_time(s: &str) -> Option<OffsetDateTime> {
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return Some(t);
    }
    time::Date::parse(s, time::macros::format_description!("[year]-[month]-[day]"))
        .ok()
        .map(|d| d.midnight().assume_utc())
}
