//! `/auth/reset` and `/auth/reset/confirm`, one handler per file (the token
//! work is `service::reset`).

pub mod confirm;
pub mod request;
