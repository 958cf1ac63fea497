#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP tests of stoa-devices against a real Postgres (one database per test).

mod api {
    pub mod access;
    pub mod admin;
    pub mod collection;
    pub mod encryption;
    pub mod lists;
    pub mod register;
    pub mod schema;
    pub mod support;
    pub mod undo;
    pub mod update;
}
