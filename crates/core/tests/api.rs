//! HTTP-level tests of stoa-core against a real Postgres (one database per test).
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod access_log;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod db;
    pub mod downloads;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod extractors;
    pub mod fixtures;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod headers;
    pub mod middleware;
    pub mod money;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod outbound;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod rls;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod schema;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod storage;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod streaming;
    pub mod system;
    pub mod upload;
}
