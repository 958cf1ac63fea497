//! The recurring expiry of pending actions (`ai_assistant.expire_actions`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use stoa_progress::{BoxFuture, JobContext, JobError, JobHandler, Outcome, Schedule};

use crate::actions;

pub const EXPIRE_ACTIONS: &str = "ai_assistant.expire_actions";

/// How often overdue actions are expired (the reference's cleanup: 5 minutes).
pub const EXPIRE_EVERY: Duration = Duration::from_secs(300);

/// At most this many per run (the next run takes the rest).
const BATCH: i64 = 1_000;

/// Expires overdue pending actions, each with `ai.action.expired`.
pub struct ExpireActions;

impl JobHandler for ExpireActions {
    fn kind(&self) -> &'static str {
        EXPIRE_ACTIONS
    }

    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let expired = actions::expire_due(&ctx.db, &ctx.actor(), BATCH)
                .await
                .map_err(|e| JobError::retry(e.to_string()))?;
            Ok(Outcome::Completed(Some(json!({"expired": expired}))))
        })
    }
}

pub fn handlers() -> Vec<Arc<dyn JobHandler>> {
    vec![Arc::new(ExpireActions)]
}

pub fn schedules() -> Vec<Schedule> {
    vec![Schedule::new(EXPIRE_ACTIONS, EXPIRE_ACTIONS, EXPIRE_EVERY)]
}
