//! The widget data engine: the reference's request language compiled to one
//! parameterised statement over an [`stoa_acl::slots::AnalyticsSource`].
//!
//! Entity and field names are looked up in the registry; only the SQL the
//! declaring module wrote, and constants of this module, reach the statement
//! text. Every value of the request is bound.

pub mod cache;
pub mod compile;
pub mod presets;
pub mod request;
pub mod run;
