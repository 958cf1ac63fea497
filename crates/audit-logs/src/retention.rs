//! Access-log retention: the recurring job `audit_logs.prune_access` deletes
//! access-log reads past their age, as the reference purges them.
//!
//! Users and roles (`auth.user`, `auth.role`: reads of personal data and of
//! privileges) are kept `AUDIT_LOGS_CORE_RETENTION_DAYS` days (default 7);
//! every other kind `AUDIT_LOGS_NON_CORE_RETENTION_HOURS` hours (default 8).
//! The reference purges from whichever process happens to log, at most once
//! a minute each; here one run every [`PRUNE_EVERY`] across all processes
//! does it (a schedule of the job queue), so several servers never race to
//! delete the same rows.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use stoa_core::command::access::retention::{PURGE_BATCH, Retention, purge_expired};
use stoa_core::config::{ConfigError, Env};
use stoa_progress::{BoxFuture, JobContext, JobError, JobHandler, Outcome, Schedule};

/// The kinds kept for the core retention (the reference's list).
pub const CORE_KINDS: &[&str] = &["auth.user", "auth.role"];

/// How often the purge runs.
pub const PRUNE_EVERY: Duration = Duration::from_secs(300);

/// The purge job's kind (and its schedule's name).
pub const PRUNE_ACCESS: &str = "audit_logs.prune_access";

const CORE_DAYS_VAR: &str = "AUDIT_LOGS_CORE_RETENTION_DAYS";
const OTHER_HOURS_VAR: &str = "AUDIT_LOGS_NON_CORE_RETENTION_HOURS";

/// The longest configurable age: ten years, in either unit.
const MAX_DAYS: u32 = 3_650;
const MAX_HOURS: u32 = MAX_DAYS * 24;

/// How long access-log reads are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetentionConfig {
    pub core_days: u32,
    pub other_hours: u32,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        Self {
            core_days: 7,
            other_hours: 8,
        }
    }
}

impl RetentionConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_vars(&std::env::vars().collect())
    }

    pub fn from_vars(
        vars: &std::collections::HashMap<String, String>,
    ) -> Result<Self, ConfigError> {
        let env = Env(vars);
        let d = Self::default();
        Ok(Self {
            core_days: bounded(&env, CORE_DAYS_VAR, d.core_days, MAX_DAYS)?,
            other_hours: bounded(&env, OTHER_HOURS_VAR, d.other_hours, MAX_HOURS)?,
        })
    }

    /// The purge's schedule, carrying these ages as its payload.
    pub fn schedule(&self) -> Schedule {
        Schedule::new(PRUNE_ACCESS, PRUNE_ACCESS, PRUNE_EVERY).payload(json!({
            "coreRetentionDays": self.core_days,
            "nonCoreRetentionHours": self.other_hours,
        }))
    }
}

/// Whether `value` is an age the settings allow: 1 to `max`.
fn allowed(value: u32, max: u32) -> bool {
    (1..=max).contains(&value)
}

/// `var` as a whole number from 1 to `max`, or `default` when unset.
fn bounded(env: &Env<'_>, var: &'static str, default: u32, max: u32) -> Result<u32, ConfigError> {
    let value: u32 = env.parse_or(var, default)?;
    if !allowed(value, max) {
        return Err(ConfigError {
            var,
            message: format!("must be between 1 and {max}"),
        });
    }
    Ok(value)
}

/// `audit_logs.prune_access` `{coreRetentionDays, nonCoreRetentionHours}`:
/// deletes the access-log reads older than that, in batches. A missing or
/// out-of-range value falls back to the default (a payload is written by
/// [`RetentionConfig::schedule`], never by a client).
pub struct PruneAccessLogs;

impl JobHandler for PruneAccessLogs {
    fn kind(&self) -> &'static str {
        PRUNE_ACCESS
    }

    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let retention = retention_of(ctx.payload());
            let mut conn = ctx.db.conn().await?;
            let deleted = purge_expired(&mut conn, &retention, PURGE_BATCH).await?;
            Ok(Outcome::Completed(Some(json!({"deleted": deleted}))))
        })
    }
}

/// The ages a purge payload names (defaults for what it lacks).
fn retention_of(payload: &serde_json::Value) -> Retention {
    let d = RetentionConfig::default();
    let field = |name: &str, default: u32, max: u32| {
        payload[name]
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .filter(|v| allowed(*v, max))
            .unwrap_or(default)
    };
    let days = field("coreRetentionDays", d.core_days, MAX_DAYS);
    let hours = field("nonCoreRetentionHours", d.other_hours, MAX_HOURS);
    Retention {
        core_kinds: CORE_KINDS.iter().map(|k| (*k).to_owned()).collect(),
        core_age: Duration::from_secs(u64::from(days) * 86_400),
        other_age: Duration::from_secs(u64::from(hours) * 3_600),
    }
}

/// The module's job handlers.
pub fn handlers() -> Vec<Arc<dyn JobHandler>> {
    vec![Arc::new(PruneAccessLogs)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> std::collections::HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn ages_come_from_the_environment_with_the_reference_defaults() {
        assert_eq!(
            RetentionConfig::from_vars(&vars(&[])).ok(),
            Some(RetentionConfig::default())
        );
        let config =
            RetentionConfig::from_vars(&vars(&[(CORE_DAYS_VAR, "30"), (OTHER_HOURS_VAR, "48")]));
        assert_eq!(
            config.ok(),
            Some(RetentionConfig {
                core_days: 30,
                other_hours: 48
            })
        );
    }

    #[test]
    fn a_zero_negative_huge_or_malformed_age_stops_start_up_naming_the_variable() {
        for bad in ["0", "-1", "abc", "1.5", "3651"] {
            let err = RetentionConfig::from_vars(&vars(&[(CORE_DAYS_VAR, bad)]));
            assert_eq!(err.err().map(|e| e.var), Some(CORE_DAYS_VAR), "{bad}");
        }
        let err = RetentionConfig::from_vars(&vars(&[(OTHER_HOURS_VAR, "87601")]));
        assert_eq!(err.err().map(|e| e.var), Some(OTHER_HOURS_VAR));
    }

    #[test]
    fn the_schedule_carries_the_ages_the_job_reads_back() {
        let config = RetentionConfig {
            core_days: 2,
            other_hours: 5,
        };
        let retention = retention_of(&config.schedule().payload);
        assert_eq!(retention.core_age, Duration::from_secs(2 * 86_400));
        assert_eq!(retention.other_age, Duration::from_secs(5 * 3_600));
        assert_eq!(retention.core_kinds, ["auth.user", "auth.role"]);
        // A payload without usable ages keeps the defaults.
        let retention =
            retention_of(&json!({"coreRetentionDays": 0, "nonCoreRetentionHours": "x"}));
        assert_eq!(retention.core_age, Duration::from_secs(7 * 86_400));
        assert_eq!(retention.other_age, Duration::from_secs(8 * 3_600));
    }
}
