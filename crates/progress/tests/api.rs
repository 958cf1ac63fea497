#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP tests of stoa-progress and the job queue.

mod api {
    pub mod bulk;
    pub mod collection;
    pub mod endpoints;
    pub mod queue;
    pub mod schedules;
    pub mod support;
}
