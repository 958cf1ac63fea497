//! Thin handlers, one per file: sidebar preferences and variants, the admin
//! navigation and the consents list. They extract, authorize and call the
//! service ([`crate::service`]) or a query. They share the module's state
//! ([`crate::state::PreferencesState`]), which [`crate::configure`] registers
//! as app data.

pub mod consents;
pub mod nav;
pub mod sidebar;
pub mod variants;

/// The preferences state registered as app data.
pub type State = actix_web::web::Data<crate::state::PreferencesState>;
