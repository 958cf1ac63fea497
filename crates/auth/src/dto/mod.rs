//! Request and response bodies of the auth endpoints, one file per area. The
//! schema names in the OpenAPI document are the type names, so they stay
//! unique across the areas.

pub mod acls;
pub mod features;
pub mod invite;
pub mod locale;
pub mod profile;
pub mod reset;
pub mod roles;
pub mod session;
pub mod users;

pub use acls::*;
pub use features::*;
pub use invite::*;
pub use locale::*;
pub use profile::*;
pub use reset::*;
pub use roles::*;
pub use session::*;
pub use users::*;
