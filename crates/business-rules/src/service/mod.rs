//! The module's rules. Reads take a connection; writes open the transaction,
//! lock what they check and run the command through the bus.

pub mod checks;
pub mod execute;
pub mod logs;
pub mod options;
pub mod rule_list;
pub mod rules;
pub mod set_list;
pub mod sets;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use stoa_acl::AuthContext;
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::{AppError, PageQuery};
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

/// A date (`YYYY-MM-DD`, midnight UTC) or an RFC 3339 date-time.
pub fn parse_time(s: &str) -> Option<OffsetDateTime> {
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return Some(t);
    }
    time::Date::parse(s, time::macros::format_description!("[year]-[month]-[day]"))
        .ok()
        .map(|d| d.midnight().assume_utc())
}

/// The sorted column's value in a list cursor's key (times as unix
/// microseconds, Postgres' precision). A key whose value does not fit the
/// list's sort is 400 ([`bad_cursor`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SortValue {
    Text(String),
    Int(i64),
    Time(i64),
    Uuid(Uuid),
    Bool(bool),
}

impl SortValue {
    pub fn time(at: OffsetDateTime) -> Self {
        Self::Time(i64::try_from(at.unix_timestamp_nanos() / 1_000).unwrap_or(i64::MAX))
    }
    pub fn text(&self) -> Result<String, AppError> {
        match self {
            Self::Text(s) => Ok(s.clone()),
            _ => Err(bad_cursor()),
        }
    }
    pub fn int(&self) -> Result<i32, AppError> {
        match self {
            Self::Int(n) => i32::try_from(*n).map_err(|_| bad_cursor()),
            _ => Err(bad_cursor()),
        }
    }
    pub fn big(&self) -> Result<i64, AppError> {
        match self {
            Self::Int(n) => Ok(*n),
            _ => Err(bad_cursor()),
        }
    }
    pub fn at(&self) -> Result<OffsetDateTime, AppError> {
        match self {
            Self::Time(us) => OffsetDateTime::from_unix_timestamp_nanos(i128::from(*us) * 1_000)
                .map_err(|_| bad_cursor()),
            _ => Err(bad_cursor()),
        }
    }
    pub fn uuid(&self) -> Result<Uuid, AppError> {
        match self {
            Self::Uuid(id) => Ok(*id),
            _ => Err(bad_cursor()),
        }
    }
    pub fn flag(&self) -> Result<bool, AppError> {
        match self {
            Self::Bool(b) => Ok(*b),
            _ => Err(bad_cursor()),
        }
    }
}

/// A cursor whose key does not fit the list's sort (400, as
/// `stoa_core::list` answers a foreign one).
pub fn bad_cursor() -> AppError {
    AppError::bad_request("Invalid query parameters: cursor: not a cursor of this list")
}

/// The window of a list: `page` 1–100,000 and `pageSize` 1–100 (default
/// 50), or the cursor's position.
pub fn list_request<K: Serialize + DeserializeOwned>(
    page: Option<u64>,
    page_size: Option<u64>,
    params: &ListParams,
    tag: &'static str,
) -> Result<ListRequest<K>, AppError> {
    let page = PageQuery { page, page_size }.resolve(50, 100)?;
    ListRequest::new(page, params, tag)
}

/// Keeps the rows after the cursor's in `$desc` order of `$col`, ties
/// broken by `$tail` (the condition on the tie-breaking columns): a range
/// on the sorted column first, so the index scan starts there.
macro_rules! after {
    ($q:expr, $col:expr, $v:expr, $desc:expr, $tail:expr) => {{
        let v = $v;
        if $desc {
            $q.filter($col.le(v.clone()))
                .filter($col.lt(v.clone()).or($col.eq(v).and($tail)))
        } else {
            $q.filter($col.ge(v.clone()))
                .filter($col.gt(v.clone()).or($col.eq(v).and($tail)))
        }
    }};
}
pub(crate) use after;

/// Orders `$q` by `$col`, descending when `$desc`.
macro_rules! by {
    ($q:expr, $col:expr, $desc:expr) => {
        if $desc {
            $q.order($col.desc())
        } else {
            $q.order($col.asc())
        }
    };
}
pub(crate) use by;

pub use stoa_acl::Kept;
