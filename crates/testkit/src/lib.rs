//! stoa-testkit: real-Postgres test harness (a dev-dependency only).
//!
//! - [`TestDb`]: the migrations are applied once to a template database (named
//!   after a hash of `migrations/`, shared by every test process and rebuilt when
//!   a migration changes); each test gets its own database cloned from it with
//!   `CREATE DATABASE ... TEMPLATE ...`, dropped `WITH (FORCE)` afterwards.
//! - [`app`]: an actix test app built exactly like the server's (same middleware,
//!   same error handling) from any set of module configurators.
//! - [`requests`]: bearer-token request builders (GET/POST/PUT/PATCH/DELETE,
//!   forms) and [`Multipart`] bodies with file parts.
//! - [`StreamingResponse`] ([`TestApp::stream`]): reads a body while the handler
//!   still produces it, as chunks or server-sent-event frames, with timeouts.
//! - [`OmOperation`] ([`TestResponse::operation`]): the `x-om-operation` header;
//!   [`operation`]: the same header as the JSON it carries.
//! - [`sql`] / [`count`]: raw SQL fixtures and counts against a test database.
//! - [`outbox_events`]: the event outbox, each event in its envelope.
//! - [`assert_timestamps`]: every timestamp of a JSON body written
//!   `YYYY-MM-DDTHH:MM:SS.mmmZ` (`stoa_core::serde_util::timestamp`).
//! - [`FakeUpstream`]: a scripted HTTP server for outbound calls (webhooks,
//!   model providers): whole or streamed answers, servers that hang or stall.
//!
//! The database server is `DATABASE_URL` when set, otherwise the private cluster
//! that `cargo xtask test` (or `cargo xtask dev`) started, whose URL it writes to
//! `.stoa/database-url`.
#![doc = include_str!("../README.md")]
#![expect(
    clippy::expect_used,
    reason = "a test harness fails the test by panicking with a clear message"
)]

mod app;
mod database;
mod events;
mod operation;
mod sql;
mod streaming;
mod timestamps;
mod upstream;

pub mod requests;

pub use app::{AppService, TestApp, TestAppBuilder, TestResponse, app};
pub use database::{TestDb, server_url, spawn_on_own_runtime, with_database};
pub use events::{outbox_events, outbox_events_named};
pub use operation::{OmOperation, operation};
pub use requests::Multipart;
pub use sql::{count, sql};
pub use streaming::{SseFrame, SseMessage, StreamEnd, StreamingResponse};
pub use timestamps::{assert_timestamps, is_canonical_timestamp, misformatted_timestamps};
pub use upstream::{Answer, FakeUpstream, Recorded};
