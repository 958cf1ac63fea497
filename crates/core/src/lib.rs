//! stoa-core: the foundation every stoa module stands on.
//!
//! It owns configuration ([`config`]), the error vocabulary ([`error`]), request
//! extractors that turn bad input into clear 4xx answers ([`extract`]), the Postgres
//! pool, transactions and embedded migrations ([`db`]), statements kept prepared
//! ([`prepared`]), pagination ([`pagination`]),
//! HTTP plumbing shared by the server and the test harness ([`http`]), logging
//! ([`telemetry`]) and the system endpoints `/version`, `/health` and `/docs`
//! ([`system`]). It knows nothing about tenants, users or any domain module.
//!
//! Input/output shared by modules: outbound HTTP with an address guard
//! ([`outbound`]), object storage ([`storage`]), streamed multipart uploads
//! ([`upload`]) and exact money amounts ([`money`]); work left running after
//! an answer ([`behind`]); names people read, without hidden characters
//! ([`text`]).
#![doc = include_str!("../README.md")]

pub mod behind;
pub mod collection;
pub mod command;
pub mod config;
pub mod crypto;
pub mod db;
pub mod error;
pub mod extract;
pub mod http;
pub mod i18n;
pub mod imaging;
pub mod list;
pub mod money;
pub mod outbound;
pub mod pagination;
pub mod pooler;
pub mod prepared;
pub mod rate_limit;
pub mod rls;
pub mod search;
pub mod serde_util;
pub mod storage;
pub mod system;
pub mod telemetry;
pub mod text;
pub mod traces;
pub mod upload;

pub use config::Config;
pub use error::{ApiError, AppError, AppResult};
pub use extract::{Form, Json, Path, Query};
pub use pagination::{Page, PageQuery};

/// The version this build reports at `GET /api/version` unless overridden by
/// `STOA_VERSION` (or the reference's `OM_VERSION`).
pub const BUILD_VERSION: &str = env!("CARGO_PKG_VERSION");
