#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP tests of stoa-directory (with stoa-auth providing identities).

mod api {
    pub mod collection;
    pub mod lookup;
    pub mod organizations;
    pub mod provision;
    pub mod scope;
    pub mod slugs;
    pub mod support;
    pub mod switcher;
    pub mod tenants;
}
