#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP tests of stoa-progress and the job queue.

mod api {
    pub mod collection;
    pub mod endpoints;
    pub mod queue;
    pub mod support;
}
