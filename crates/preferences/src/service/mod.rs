//! What the sidebar handlers ask for, orchestrated: each function opens the
//! transaction a write needs, checks the input against the database, runs the
//! command on the bus and builds the response. Handlers extract, authorize
//! and call one of these; the SQL stays in `crate::sidebar::queries` and
//! `crate::sidebar::variants`.

pub mod preferences;
pub mod variants;
