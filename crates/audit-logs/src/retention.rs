//! Audit-trail retention (a bounded audit trail, issue 33).
//!
//! **Partitions.** The action log (`action_logs`) and the access log
//! (`access_reads`) are partitioned by UTC month of `created_at`, each with a
//! DEFAULT partition that catches rows of a month without its partition (an
//! insert never fails). The recurring job `audit_logs.partitions` (every
//! [`PARTITIONS_EVERY`]) creates the current and the next month's
//! partitions ahead of time (moving rows the DEFAULT partition caught into
//! theirs) and drops whole months past their retention: action-log months
//! that ended more than `AUDIT_LOGS_ACTION_RETENTION_MONTHS` months ago
//! (default 24; the reference keeps them forever), access-log months that
//! ended before the longer of the two access-log ages. A dropped month is
//! gone at once (no row-by-row delete, no bloat); undo and redo of its
//! entries answer 400 `entry_pruned` (`stoa_core::command::pruned`).
//!
//! **Access-log ages.** The recurring job `audit_logs.prune_access` deletes
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

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Integer, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::json;
use std::collections::HashMap;
use stoa_core::command::access::retention::{PURGE_BATCH, Retention, purge_expired};
use stoa_core::config::FromEnv;
use stoa_core::config::{ConfigError, Env};
use stoa_jobs::{BoxFuture, JobContext, JobError, JobHandler, Outcome, Schedule};

/// The kinds kept for the core retention (the reference's list).
pub const CORE_KINDS: &[&str] = &["auth.user", "auth.role"];

/// How often the purge runs.
pub const PRUNE_EVERY: Duration = Duration::from_secs(300);

/// The purge job's kind (and its schedule's name).
pub const PRUNE_ACCESS: &str = "audit_logs.prune_access";

/// How often the partition job runs (creating ahead, dropping past months).
pub const PARTITIONS_EVERY: Duration = Duration::from_secs(3_600);

/// The partition job's kind (and its schedule's name).
pub const PARTITIONS: &str = "audit_logs.partitions";

const CORE_DAYS_VAR: &str = "AUDIT_LOGS_CORE_RETENTION_DAYS";
const OTHER_HOURS_VAR: &str = "AUDIT_LOGS_NON_CORE_RETENTION_HOURS";
/// Months of action log kept (whole months are dropped).
pub const ACTION_MONTHS_VAR: &str = "AUDIT_LOGS_ACTION_RETENTION_MONTHS";

/// The longest configurable action-log retention: a hundred years.
const MAX_MONTHS: u32 = 1_200;

/// The longest configurable age: ten years, in either unit.
const MAX_DAYS: u32 = 3_650;
const MAX_HOURS: u32 = MAX_DAYS * 24;

/// How long access-log reads and action-log entries are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetentionConfig {
    pub core_days: u32,
    pub other_hours: u32,
    /// Months of action log kept: a month is dropped once it ended this many
    /// months ago (so an entry is kept at least this long, at most a month
    /// longer).
    pub action_months: u32,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        Self {
            core_days: 7,
            other_hours: 8,
            action_months: 24,
        }
    }
}

impl RetentionConfig {
    /// Both recurring jobs: the access-log purge and the partition job.
    pub fn schedules(&self) -> Vec<Schedule> {
        vec![self.schedule(), self.partitions_schedule()]
    }

    /// The partition job's schedule, carrying the ages it needs.
    pub fn partitions_schedule(&self) -> Schedule {
        Schedule::new(PARTITIONS, PARTITIONS, PARTITIONS_EVERY).payload(json!({
            "actionRetentionMonths": self.action_months,
            "coreRetentionDays": self.core_days,
            "nonCoreRetentionHours": self.other_hours,
        }))
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

/// What one run of the partition job did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Maintenance {
    /// Partitions created (months that had none yet).
    pub created: i64,
    /// Partitions dropped, by name (`action_logs_p2024_09`, ...).
    pub dropped: Vec<String>,
}

#[derive(QueryableByName)]
struct Created {
    #[diesel(sql_type = Integer)]
    created: i32,
}

#[derive(QueryableByName)]
struct Dropped {
    #[diesel(sql_type = Text)]
    name: String,
}

/// The partition job's work (`audit_logs.partitions`): for both logs, the
/// current and the next UTC month's partitions exist afterwards (rows the
/// DEFAULT partition caught move into theirs), and the months past their
/// retention are dropped: action-log months that ended `action_months`
/// months ago or earlier, access-log months that ended before the longer
/// of `access`'s two ages (plus the span of a row's repeated reads,
/// `stoa_core::command::access::REPEAT_SPAN`). The
/// SQL functions (migration `audit_log_partitions`) run as the tables'
/// owner and serialise concurrent runs.
pub async fn maintain_partitions(
    conn: &mut AsyncPgConnection,
    action_months: u32,
    access: &Retention,
) -> diesel::QueryResult<Maintenance> {
    let mut done = Maintenance::default();
    for table in ["action_logs", "access_reads"] {
        let created: Created = diesel::sql_query(
            "SELECT stoa_log_partitions_ensure($1, now(), now() + interval '1 month') AS created",
        )
        .bind::<Text, _>(table)
        .get_result(conn)
        .await?;
        done.created += i64::from(created.created);
    }
    let dropped: Vec<Dropped> = diesel::sql_query(
        "SELECT stoa_log_partitions_drop_before('action_logs',          now() - make_interval(months => $1)) AS name",
    )
    .bind::<Integer, _>(i32::try_from(action_months).unwrap_or(i32::MAX))
    .load(conn)
    .await?;
    done.dropped.extend(dropped.into_iter().map(|d| d.name));
    // A second more than the longer age covers a row's repeated reads
    // (`REPEAT_SPAN`, 10 ms, after its own time).
    let access_age = access.core_age.max(access.other_age) + Duration::from_secs(1);
    let dropped: Vec<Dropped> = diesel::sql_query(
        "SELECT stoa_log_partitions_drop_before('access_reads',          now() - make_interval(secs => $1)) AS name",
    )
    .bind::<BigInt, _>(i64::try_from(access_age.as_secs()).unwrap_or(i64::MAX))
    .load(conn)
    .await?;
    done.dropped.extend(dropped.into_iter().map(|d| d.name));
    Ok(done)
}

/// `audit_logs.partitions` `{actionRetentionMonths, coreRetentionDays,
/// nonCoreRetentionHours}`: [`maintain_partitions`]. A missing or
/// out-of-range value falls back to the default.
pub struct MaintainPartitions;

impl JobHandler for MaintainPartitions {
    fn kind(&self) -> &'static str {
        PARTITIONS
    }

    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let payload = ctx.payload();
            let access = retention_of(payload);
            let months = action_months_of(payload);
            let mut conn = ctx.db.conn().await?;
            let done = maintain_partitions(&mut conn, months, &access).await?;
            Ok(Outcome::Completed(Some(json!(done))))
        })
    }
}

/// The action-log retention a partition payload names (the default when it
/// lacks a usable one).
fn action_months_of(payload: &serde_json::Value) -> u32 {
    payload["actionRetentionMonths"]
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| allowed(*v, MAX_MONTHS))
        .unwrap_or(RetentionConfig::default().action_months)
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
    vec![Arc::new(PruneAccessLogs), Arc::new(MaintainPartitions)]
}

impl FromEnv for RetentionConfig {
    fn from_vars(vars: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let env = Env(vars);
        let d = Self::default();
        Ok(Self {
            core_days: bounded(&env, CORE_DAYS_VAR, d.core_days, MAX_DAYS)?,
            other_hours: bounded(&env, OTHER_HOURS_VAR, d.other_hours, MAX_HOURS)?,
            action_months: bounded(&env, ACTION_MONTHS_VAR, d.action_months, MAX_MONTHS)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stoa_core::config::vars;

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
                other_hours: 48,
                action_months: 24,
            })
        );
        let config = RetentionConfig::from_vars(&vars(&[(ACTION_MONTHS_VAR, "6")]));
        assert_eq!(config.ok().map(|c| c.action_months), Some(6));
    }

    #[test]
    fn a_zero_negative_huge_or_malformed_age_stops_start_up_naming_the_variable() {
        for bad in ["0", "-1", "abc", "1.5", "3651"] {
            let err = RetentionConfig::from_vars(&vars(&[(CORE_DAYS_VAR, bad)]));
            assert_eq!(err.err().map(|e| e.var), Some(CORE_DAYS_VAR), "{bad}");
        }
        let err = RetentionConfig::from_vars(&vars(&[(OTHER_HOURS_VAR, "87601")]));
        assert_eq!(err.err().map(|e| e.var), Some(OTHER_HOURS_VAR));
        for bad in ["0", "x", "1201"] {
            let err = RetentionConfig::from_vars(&vars(&[(ACTION_MONTHS_VAR, bad)]));
            assert_eq!(err.err().map(|e| e.var), Some(ACTION_MONTHS_VAR), "{bad}");
        }
    }

    #[test]
    fn the_schedule_carries_the_ages_the_job_reads_back() {
        let config = RetentionConfig {
            core_days: 2,
            other_hours: 5,
            action_months: 3,
        };
        let partitions = config.partitions_schedule();
        assert_eq!(action_months_of(&partitions.payload), 3);
        assert_eq!(
            retention_of(&partitions.payload).core_age,
            Duration::from_secs(2 * 86_400)
        );
        assert_eq!(action_months_of(&json!({"actionRetentionMonths": 0})), 24);
        assert_eq!(
            config
                .schedules()
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>(),
            [PRUNE_ACCESS, PARTITIONS]
        );
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
