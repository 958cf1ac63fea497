//! HTTP tests of stoa-ai-assistant against a real Postgres (one database
//! per test) and scripted fake providers on 127.0.0.1.
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    pub mod actions;
    pub mod agents;
    pub mod chat;
    pub mod compat;
    #[expect(
        clippy::unwrap_used,
        reason = "the failpoint's helpers fail the calling test by panicking"
    )]
    pub mod confirm_tx;
    pub mod conversations;
    pub mod legacy;
    pub mod limits;
    pub mod looping;
    pub mod moderation;
    pub mod objects;
    pub mod participants;
    pub mod round3;
    pub mod settings;
    #[expect(
        clippy::unwrap_used,
        reason = "the module's helpers fail the calling test by panicking"
    )]
    pub mod sibling;
    #[expect(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
    pub mod task_plan;
    pub mod transcript;
}
