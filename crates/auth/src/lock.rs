//! Optimistic locking: the helpers live in stoa-core
//! ([`stoa_core::http::lock`]), shared by every module; re-exported here for
//! stoa-auth's handlers.

pub use stoa_core::http::lock::{OPTIMISTIC_LOCK_HEADER, check_lock, expected_updated_at};
