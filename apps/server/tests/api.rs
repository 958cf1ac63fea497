//! End-to-end tests of the `stoa` binary and the assembled application.
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod authorization;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod cli;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod context;
    pub mod docs;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod hardening;
    pub mod openapi;
    #[expect(
        clippy::unwrap_used,
        reason = "a scan of the source; a failure is the test's"
    )]
    pub mod table_ownership;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod timestamps;
}
