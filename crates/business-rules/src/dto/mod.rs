//! Request and response bodies, by resource: rules, sets and members,
//! execute, logs and the platform-call options; here what they share.

mod execute;
mod logs;
mod options;
mod rules;
mod sets;

pub use execute::*;
pub use logs::*;
pub use options::*;
pub use rules::*;
pub use sets::*;

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

/// A key that is present (even as `null`) becomes `Some(..)`.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
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

/// `?id=` of the collection deletes.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IdQuery {
    pub id: Option<String>,
}

/// `?memberId=`.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct MemberIdQuery {
    pub member_id: Option<String>,
}

/// The list envelope every list DTO flattens.
pub use stoa_core::list::ListPage;
/// The one sort direction of every list (`stoa_core::list`); each list
/// names its own default.
pub use stoa_core::list::SortDir;
