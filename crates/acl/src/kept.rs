//! A kept list page (`stoa_core::http::read_cache`): the value, the read
//! models it was computed from and the versions its statement saw, answered
//! for the caller it was authorized for.

use serde::Serialize;
use stoa_core::AppError;

use crate::AuthContext;

/// A list page and what keeps it (`stoa_core::http::read_cache`): the read
/// models it was computed from and the versions its statement saw (`None`
/// when it returned no row: an empty page is not kept).
pub struct Kept<T> {
    pub value: T,
    pub deps: stoa_core::http::read_cache::ReadDeps,
    pub versions: Option<Vec<i64>>,
}

impl<R> Kept<Vec<R>> {
    /// The rows of a statement that selected the versions of `deps` beside
    /// each row (`read_cache::versions`): an empty result carries none and
    /// is answered without being kept.
    pub fn of_rows(rows: Vec<(R, Vec<i64>)>, deps: stoa_core::http::read_cache::ReadDeps) -> Self {
        let versions = <[_]>::first(&rows).map(|r| r.1.clone());
        Kept {
            value: rows.into_iter().map(|(row, _)| row).collect(),
            deps,
            versions,
        }
    }
}

impl<T> Kept<T> {
    /// The same page in another shape (the answer's DTO), kept by the same
    /// versions.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Kept<U> {
        Kept {
            value: f(self.value),
            deps: self.deps,
            versions: self.versions,
        }
    }
}

impl<T: Serialize> Kept<T> {
    /// The page as JSON, kept for the caller when its statement returned a
    /// row (`read_cache::answer_json`): the same page again is then the
    /// session check alone.
    pub fn answer(
        self,
        http: &actix_web::HttpRequest,
        ctx: &AuthContext,
    ) -> Result<actix_web::HttpResponse, AppError> {
        stoa_core::http::read_cache::answer_json(
            http,
            ctx.read_owner(),
            &self.value,
            self.deps,
            self.versions,
            None,
        )
    }
}
