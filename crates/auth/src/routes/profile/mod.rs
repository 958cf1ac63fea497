//! `/auth/profile`: read and change the caller's own account, one handler per
//! file (the change is saved by `service::profile`).

pub mod get;
pub mod update;
