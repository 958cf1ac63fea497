//! End-to-end tests of the `stoa` binary and the assembled application.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api {
    pub mod authorization;
    pub mod cli;
    pub mod hardening;
    pub mod openapi;
}
