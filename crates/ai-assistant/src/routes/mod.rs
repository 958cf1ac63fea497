//! The assistant's handlers, one file per resource (each handler extracts,
//! checks, calls the service and answers).

pub mod actions;
pub mod agents;
pub mod chat;
pub mod conversations;
pub mod health;
pub mod keys;
pub mod legacy;
pub mod overrides;
pub mod participants;
pub mod run_object;
pub mod settings;
pub mod tools;
pub mod usage;
