//! HTTP tests of stoa-directory (with stoa-auth providing identities).
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    pub mod collection;
    pub mod events;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod lists;
    pub mod lookup;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod organizations;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod provision;
    pub mod scope;
    pub mod slugs;
    pub mod support;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod switcher;
    pub mod tenants;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod tree_cycles;
    #[expect(clippy::unwrap_used, reason = "helpers fail the test by panicking")]
    pub mod write_scope;
}
