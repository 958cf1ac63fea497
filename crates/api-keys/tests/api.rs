#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP tests of stoa-api-keys: the endpoints, and signing in with keys.

mod api {
    pub mod authentication;
    pub mod create;
    pub mod delete;
    pub mod features;
    pub mod list;
    pub mod support;
}
