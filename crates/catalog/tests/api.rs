//! HTTP tests of stoa-catalog against a real Postgres (one database per test).
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod bulk;
    pub mod crud;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod lists;
    pub mod registry;
    pub mod scope;
    #[expect(
        clippy::unwrap_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
    pub mod undo;
}
