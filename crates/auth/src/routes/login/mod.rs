//! `/auth/login`, `/auth/logout` and `/auth/autologin`, one handler per file.

pub mod autologin;
pub mod logout;
pub mod sign_in;
