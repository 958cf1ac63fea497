//! HTTP-level tests of stoa-core against a real Postgres (one database per test).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api {
    pub mod db;
    pub mod extractors;
    pub mod fixtures;
    pub mod middleware;
    pub mod money;
    pub mod outbound;
    pub mod storage;
    pub mod system;
    pub mod upload;
}
