//! HTTP tests of stoa-preferences against a real Postgres (one database per test).
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod consents;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod nav;
    pub mod role_boundary;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod sidebar;
    pub mod support;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod variants;
    pub mod variants_collection;
}
