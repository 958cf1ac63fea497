//! HTTP tests of stoa-dashboards against a real Postgres (one database per test).
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    pub mod assign;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod data;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod layout;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod reach;
    #[expect(
        clippy::unwrap_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
}
