//! The work behind the session and self-service endpoints: a handler
//! extracts and rate-limits, a service function here opens the transaction
//! (where a write needs one), checks what the caller may do and runs the
//! command, and the SQL is in `crate::queries`. Account administration (users, roles, ACL edits) has
//! the same shape in `crate::accounts`.

pub mod invite;
pub mod login;
pub mod profile;
pub mod reset;
pub mod session;
