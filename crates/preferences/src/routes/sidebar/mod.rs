//! `GET|PUT|DELETE /auth/sidebar/preferences`: the caller's or a role's
//! sidebar preference in the request's locale. One handler per file; the
//! work is in [`crate::service::preferences`].

pub mod delete;
pub mod get;
pub mod update;
