//! The recurring jobs: expiry of pending actions
//! (`ai_assistant.expire_actions`, every 5 minutes) and the usage prune
//! (`ai_assistant.prune_usage`, daily), as the reference schedules them.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use stoa_core::config::{ConfigError, Env};
use stoa_jobs::{BoxFuture, JobContext, JobError, JobHandler, Outcome, Schedule};

use crate::config::{DEFAULT_USAGE_RETENTION_DAYS, MAX_USAGE_RETENTION_DAYS};
use crate::{actions, usage};

pub const EXPIRE_ACTIONS: &str = "ai_assistant.expire_actions";

/// How often overdue actions are expired (the reference's cleanup: 5 minutes).
pub const EXPIRE_EVERY: Duration = Duration::from_secs(300);

/// At most this many per run (the next run takes the rest).
const BATCH: i64 = 1_000;

pub const PRUNE_USAGE: &str = "ai_assistant.prune_usage";

/// How often old usage rows are pruned (the reference: 24 hours).
pub const PRUNE_EVERY: Duration = Duration::from_secs(86_400);

/// Rows per delete statement, and statements per run.
pub const PRUNE_BATCH: i64 = 5_000;
pub const PRUNE_MAX_BATCHES: u32 = 200;

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

/// `ai_assistant.prune_usage` `{retentionDays}`: deletes per-step usage rows
/// older than that in batches and reconciles the daily rollup's session
/// counts. A missing or out-of-range value falls back to 90 days (the
/// payload is written by [`schedules`], never by a client).
pub struct PruneUsage;

/// The retention a prune payload names.
pub fn retention_of(payload: &serde_json::Value) -> u32 {
    payload["retentionDays"]
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| (1..=MAX_USAGE_RETENTION_DAYS).contains(v))
        .unwrap_or(DEFAULT_USAGE_RETENTION_DAYS)
}

impl JobHandler for PruneUsage {
    fn kind(&self) -> &'static str {
        PRUNE_USAGE
    }

    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let days = retention_of(ctx.payload());
            let mut conn = ctx.db.conn().await?;
            let pruned = usage::prune(&mut conn, days, PRUNE_BATCH, PRUNE_MAX_BATCHES)
                .await
                .map_err(|e| JobError::retry(e.to_string()))?;
            Ok(Outcome::Completed(Some(json!({
                "deleted": pruned.deleted,
                "reconciled": pruned.reconciled,
                "more": pruned.more,
            }))))
        })
    }
}

pub fn handlers() -> Vec<Arc<dyn JobHandler>> {
    vec![Arc::new(ExpireActions), Arc::new(PruneUsage)]
}

/// The schedules, the prune carrying `AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS`
/// from `vars`.
pub fn schedules_from(
    vars: &std::collections::HashMap<String, String>,
) -> Result<Vec<Schedule>, ConfigError> {
    let days = crate::config::usage_retention_days(&Env(vars))?;
    Ok(vec![
        Schedule::new(EXPIRE_ACTIONS, EXPIRE_ACTIONS, EXPIRE_EVERY),
        Schedule::new(PRUNE_USAGE, PRUNE_USAGE, PRUNE_EVERY)
            .payload(json!({"retentionDays": days})),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prune_schedule_carries_the_retention_it_reads_back() {
        let vars = std::collections::HashMap::from([(
            "AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS".to_string(),
            "7".to_string(),
        )]);
        let schedules = schedules_from(&vars).unwrap_or_default();
        let prune = schedules.iter().find(|s| s.name == PRUNE_USAGE);
        assert_eq!(prune.map(|s| retention_of(&s.payload)), Some(7));
        assert_eq!(prune.map(|s| s.period), Some(PRUNE_EVERY));
        assert_eq!(retention_of(&json!({})), 90);
        assert_eq!(retention_of(&json!({"retentionDays": 0})), 90);
        let bad = std::collections::HashMap::from([(
            "AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS".to_string(),
            "x".to_string(),
        )]);
        assert!(schedules_from(&bad).is_err());
    }
}
