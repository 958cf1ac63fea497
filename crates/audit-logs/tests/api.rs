#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP tests of stoa-audit-logs and the command bus behind it.

mod api {
    pub mod batch;
    pub mod export;
    pub mod guards;
    pub mod lists;
    pub mod outbox;
    pub mod support;
    pub mod undo;
    pub mod undo_attacks;
    pub mod user_reads;
}
