//! HTTP tests of stoa-preferences against a real Postgres (one database per test).

mod api {
    pub mod consents;
    pub mod nav;
    pub mod sidebar;
    pub mod support;
    pub mod variants;
    pub mod variants_collection;
}
