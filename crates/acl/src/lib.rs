//! stoa-acl: feature-based access control.
//!
//! Features are strings `module.action` (`devices.manage`, `auth.sidebar.manage`).
//! Grants may use wildcards: `*` grants everything and `module.*` grants `module`
//! itself and every `module.<anything>`. Every module registers the features it
//! checks in the [`Registry`], which serves the feature catalog and validates ACL
//! edits. The request-level `AuthContext` extractor builds on this crate (identity
//! issue).

mod matching;
mod registry;

pub use matching::{feature_granted, features_granted};
pub use registry::{Feature, ModuleInfo, Registry, RegistryError};
