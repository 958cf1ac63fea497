//! Access-log entries for reads that expose personal data: the helpers live
//! in stoa-acl ([`stoa_acl::read_log`]), shared with the modules that answer
//! with users' data; re-exported here for stoa-auth's handlers.

pub use stoa_acl::read_log::{USER, fields_of, record_user_reads};
