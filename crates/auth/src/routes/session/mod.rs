//! `/auth/session/refresh`: the JSON exchange and the cookie redirect, one
//! handler per file (rotation itself is `service::session`).

pub mod refresh;
pub mod refresh_redirect;
