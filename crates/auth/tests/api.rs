//! HTTP tests of stoa-auth against a real Postgres (one database per test).
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod acl_scope;
    pub mod acls;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod cross_site;
    pub mod features;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod grant_sync;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod invite;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod kept_lists;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod login;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod login_limits;
    pub mod names;
    pub mod onboarding;
    pub mod profile;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod reset;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod roles;
    pub mod self_service;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod session;
    #[expect(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
    pub mod tokens;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod users;
}
