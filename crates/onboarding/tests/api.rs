//! HTTP tests of stoa-onboarding against a real Postgres (one database per test).
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    pub mod enumeration;
    pub mod gate;
    pub mod jobs;
    pub mod mail_window;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod rate_limit;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod submit;
    #[expect(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod verify;
    pub mod workspace;
}
