//! HTTP tests of stoa-api-keys: the endpoints, and signing in with keys.
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    pub mod authentication;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod create;
    pub mod delete;
    pub mod features;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod list;
    #[expect(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
}
