//! HTTP tests of stoa-progress and the job queue.
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod bulk;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod collection;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod creator;
    pub mod endpoints;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod lists;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod queue;
    pub mod schedules;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod scope;
    #[expect(
        clippy::unwrap_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
    pub mod validation;
}
