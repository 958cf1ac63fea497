//! `/auth/sidebar/variants`: the caller's named sidebar setups in the
//! request's locale. Writes need `auth.sidebar.manage`; callers without a
//! user (API keys acting on their own) get 403. One handler per file; the
//! collection forms (`PUT /auth/sidebar/variants {id, ...}`, `DELETE
//! /auth/sidebar/variants?id=`), as Open Mercato clients send them, do the
//! same as the `/{id}` forms. The work is in [`crate::service::variants`].

pub mod create;
pub mod delete;
pub mod delete_by_query;
pub mod get;
pub mod list;
pub mod update;
pub mod update_by_body;
