//! HTTP tests of stoa-customers against a real Postgres (one database per test).
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod bulk;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod bulk_sql;
    pub mod crud;
    pub mod events;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod kit;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod lists;
    pub mod pipeline_defaults;
    pub mod pipelines;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod read_versions;
    pub mod reorder;
    pub mod scope;
    #[expect(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
    pub mod undo;
}
