//! Thin handlers: sidebar preferences and variants, the admin navigation and
//! the consents list. They share stoa-auth's state (database, configuration,
//! authenticator, registry), which stoa-auth registers as app data.

pub mod consents;
pub mod nav;
pub mod sidebar;
pub mod variants;
pub mod variants_collection;

pub use stoa_auth::routes::State;
