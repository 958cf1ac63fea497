//! HTTP tests of stoa-business-rules against a real Postgres (one database
//! per test).
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    pub mod actions;
    pub mod crud;
    #[expect(
        clippy::unwrap_used,
        reason = "the module's helpers fail the calling test by panicking"
    )]
    pub mod delegation;
    pub mod execute;
    pub mod guard;
    pub mod lists;
    pub mod parser;
    #[expect(
        clippy::unwrap_used,
        reason = "the module's helpers fail the calling test by panicking"
    )]
    pub mod platform;
    pub mod set_field;
    #[expect(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
    #[expect(
        clippy::unwrap_used,
        reason = "the module's helpers fail the calling test by panicking"
    )]
    pub mod webhook_secrets;
}
