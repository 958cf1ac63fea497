//! Request and response shapes of the directory's endpoints (serde +
//! validator + utoipa), one file per resource; everything is re-exported
//! here, so handlers import `crate::dto::*`. Database rows are in `model.rs`.

mod lookup;
mod organizations;
mod switcher;
mod tenants;

pub use lookup::*;
pub use organizations::*;
pub use switcher::*;
pub use tenants::*;

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IdQuery {
    pub id: Uuid,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    pub id: Uuid,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Ok {
    pub ok: bool,
}

impl Ok {
    pub const fn yes() -> Self {
        Self { ok: true }
    }
}
