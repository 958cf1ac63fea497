//! `/auth/locale` query and bodies.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

#[derive(Debug, Deserialize, validator::Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LocaleQuery {
    /// One of `en`, `pl`, `es`, `de`, `ko`.
    pub locale: Option<String>,
    /// A local path to go to (default `/`); other targets fall back to `/`.
    pub redirect: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct LocaleBody {
    pub locale: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LocaleSet {
    pub ok: bool,
}
