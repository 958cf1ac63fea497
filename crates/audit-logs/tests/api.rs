//! HTTP tests of stoa-audit-logs and the command bus behind it.
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod batch;
    pub mod export;
    pub mod export_formulas;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod guard_rules;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod guards;
    pub mod lists;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod outbox;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod outbox_batches;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod partitions;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod retention;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod scope_attacks;
    #[expect(
        clippy::unwrap_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
    pub mod undo;
    pub mod undo_attacks;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod undo_races;
    pub mod user_reads;
}
