//! HTTP tests of stoa-devices against a real Postgres (one database per test).
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod access;
    pub mod admin;
    pub mod collection;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod encryption;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod lists;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod register;
    pub mod schema;
    #[expect(
        clippy::unwrap_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod undo;
    pub mod update;
}
