#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP tests of stoa-auth against a real Postgres (one database per test).

mod api {
    pub mod acl_scope;
    pub mod acls;
    pub mod features;
    pub mod grant_sync;
    pub mod invite;
    pub mod login;
    pub mod login_limits;
    pub mod profile;
    pub mod reset;
    pub mod roles;
    pub mod session;
    pub mod support;
    pub mod tokens;
    pub mod users;
}
