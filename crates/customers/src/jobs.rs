//! The bulk jobs: `customers.deals.bulk_update_owner` and
//! `customers.deals.bulk_update_stage`.
//!
//! Each job acts as its creator (`JobContext::unit_as`): units of
//! [`UNIT_SIZE`] deals, each in one transaction that re-resolves the
//! creator's grants, locks the unit's deals, checks every deal (tenant,
//! organization scope, the stage's organization), changes the rest with one
//! statement, asks the write guards about each change and records one
//! undoable action-log entry per changed deal with one statement
//! (`record_batch`); when no guard applies, the change and its entries are
//! one statement built in SQL (`queries::deal_bulk`). A deal that fails a
//! check or that a guard refuses is listed in the job's result
//! (`report.fail`) and left as it was; the others commit. The unit's record and progress commit with its changes, so a
//! worker killed mid-job leaves whole units behind and the retry skips them.

use std::collections::HashMap;

use diesel_async::{AsyncConnection, AsyncPgConnection};
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{GuardInput, GuardLog, LogEntry, Phase, WriteGuards, record_batch};
use stoa_progress::{JobContext, JobError, JobHandler, Outcome, UnitError, UnitReport};
use uuid::Uuid;

use crate::DEALS_MANAGE;
use crate::commands::deals::{BULK_OWNER, BULK_STAGE, deal_entry};
use crate::model::{DealRow, DealState, StageRow};
use crate::queries::deal_bulk::{self, BulkSet};
use crate::queries::deals::DealCheck;
use crate::queries::{deals as q, stages};

/// Deals per unit: one lock statement and one statement for the change and
/// its records (or, when a guard applies, one update, one action-log insert
/// and one outbox insert). On the guarded path a unit's entries are in
/// memory together (about 15 KB per deal: snapshots, undo payload, two
/// events), so 250 keeps two jobs' units near 6 MiB each; 500 took the
/// server's peak RSS over 80 MB during the bulk benchmark and was no faster.
pub const UNIT_SIZE: usize = 250;

/// What a bulk job changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// A new owner (`None` clears it).
    Owner(Option<Uuid>),
    /// A stage (and its pipeline and label).
    Stage(Uuid),
}

impl Change {
    fn command_id(self) -> &'static str {
        match self {
            Self::Owner(_) => BULK_OWNER,
            Self::Stage(_) => BULK_STAGE,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Owner(_) => "Reassign deal owner",
            Self::Stage(_) => "Move deal to stage",
        }
    }

    /// The job's change, from its payload.
    pub fn of(kind: &str, payload: &serde_json::Value) -> Result<Self, JobError> {
        let uuid = |key: &str| -> Result<Option<Uuid>, JobError> {
            match payload.get(key) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(v) => serde_json::from_value(v.clone())
                    .map(Some)
                    .map_err(|_| JobError::fatal(format!("invalid {key} in the job's payload"))),
            }
        };
        match kind {
            BULK_OWNER => Ok(Self::Owner(uuid("ownerUserId")?)),
            BULK_STAGE => uuid("pipelineStageId")?
                .map(Self::Stage)
                .ok_or_else(|| JobError::fatal("no pipelineStageId in the job's payload")),
            other => Err(JobError::fatal(format!(
                "not a customers bulk job: {other}"
            ))),
        }
    }
}

/// The ids of the job's payload.
pub fn payload_ids(payload: &serde_json::Value) -> Result<Vec<Uuid>, JobError> {
    // Read from the payload in place (not from a copy of its 10,000 ids).
    payload
        .get("ids")
        .and_then(|v| <Vec<Uuid> as serde::Deserialize>::deserialize(v).ok())
        .ok_or_else(|| JobError::fatal("no ids in the job's payload"))
}

/// The key of unit `index` (stable across retries: the ids' order is the payload's).
pub fn unit_key(index: usize) -> String {
    index.to_string()
}

/// The handler of both bulk jobs.
pub struct BulkDeals {
    kind: &'static str,
    users: std::sync::Arc<dyn stoa_acl::UserDirectory>,
}

impl BulkDeals {
    pub fn owner(users: std::sync::Arc<dyn stoa_acl::UserDirectory>) -> Self {
        Self {
            kind: BULK_OWNER,
            users,
        }
    }
    pub fn stage(users: std::sync::Arc<dyn stoa_acl::UserDirectory>) -> Self {
        Self {
            kind: BULK_STAGE,
            users,
        }
    }
}

impl JobHandler for BulkDeals {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let change = Change::of(self.kind, ctx.payload())?;
            let ids = payload_ids(ctx.payload())?;
            for (index, chunk) in ids.chunks(UNIT_SIZE).enumerate() {
                let chunk = chunk.to_vec();
                let users = self.users.clone();
                ctx.unit_as(
                    &unit_key(index),
                    chunk.len(),
                    Box::new(move |conn, creator| {
                        Box::pin(async move {
                            run_unit(conn, &creator, users.as_ref(), change, chunk).await
                        })
                    }),
                )
                .await?;
            }
            let mut conn = ctx.db.conn().await?;
            let (_, failed) = stoa_progress::units::failed_items(&mut conn, ctx.job.id).await?;
            let affected = i64::try_from(ids.len()).unwrap_or(i64::MAX) - failed;
            Ok(Outcome::Completed(Some(json!({"affectedCount": affected}))))
        })
    }
}

/// What the unit writes the deals to, checked in the unit's transaction.
enum Target {
    Owner(Option<Uuid>),
    Stage(StageRow),
}

async fn target(
    conn: &mut AsyncPgConnection,
    creator: &AuthContext,
    users: &dyn stoa_acl::UserDirectory,
    change: Change,
) -> Result<Target, UnitError> {
    let tenant = creator.tenant()?;
    match change {
        Change::Owner(None) => Ok(Target::Owner(None)),
        Change::Owner(Some(owner)) => match users.user(conn, owner).await? {
            Some(user) if user.tenant_id == Some(tenant) => Ok(Target::Owner(Some(owner))),
            _ => Err(
                JobError::fatal(format!("Owner {owner} is no longer a user of this tenant")).into(),
            ),
        },
        // Read FOR SHARE: the stage cannot be deleted until the unit commits.
        Change::Stage(stage) => match stages::find(conn, tenant, stage).await? {
            Some(row) => Ok(Target::Stage(row)),
            None => Err(JobError::fatal(format!(
                "Pipeline stage {stage} does not exist in this tenant"
            ))
            .into()),
        },
    }
}

/// Why a deal is left out, or `None` when the creator may change it.
fn refusal(creator: &AuthContext, row: Option<&DealCheck>, target: &Target) -> Option<String> {
    let Some(row) = row else {
        return Some("Deal not found".into());
    };
    if creator.tenant_id != Some(row.tenant_id)
        || !creator.can_see_organization(row.organization_id)
    {
        return Some("Deal not found".into());
    }
    if let Err(err) = creator.require_organizations([Some(row.organization_id)]) {
        return Some(err.message().to_string());
    }
    if let Target::Stage(stage) = target
        && stage.organization_id != row.organization_id
    {
        return Some("Pipeline stage belongs to another organization".into());
    }
    None
}

fn unchanged(row: &DealCheck, target: &Target) -> bool {
    match target {
        Target::Owner(owner) => row.owner_user_id == *owner,
        Target::Stage(stage) => row.pipeline_stage_id == Some(stage.id),
    }
}

async fn write(
    conn: &mut AsyncPgConnection,
    ids: &[Uuid],
    target: &Target,
) -> Result<Vec<DealRow>, diesel::result::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    match target {
        Target::Owner(owner) => q::set_owner(conn, ids, *owner).await,
        Target::Stage(stage) => {
            q::set_stage(conn, ids, stage.id, stage.pipeline_id, &stage.label).await
        }
    }
}

fn entries(
    change: Change,
    before: &HashMap<Uuid, DealState>,
    after: &[DealRow],
) -> Vec<(&'static str, Uuid, LogEntry)> {
    after
        .iter()
        .map(|row| {
            let after = DealState::from(row);
            let entry = deal_entry(change.label(), before.get(&row.id), Some(&after));
            (change.command_id(), row.id, entry)
        })
        .collect()
}

/// How the guarded pass ended.
enum Pass {
    /// Some deals were refused: the savepoint rolled back.
    Refused(Vec<(Uuid, String)>),
    Failed(AppError),
}

impl From<diesel::result::Error> for Pass {
    fn from(err: diesel::result::Error) -> Self {
        Self::Failed(err.into())
    }
}

/// Asks the actor's guards about each entry; the refused ones by id.
async fn refused(
    conn: &mut AsyncPgConnection,
    guards: &WriteGuards,
    actor: &stoa_core::command::Actor,
    entries: &[(&'static str, Uuid, LogEntry)],
) -> Result<Vec<(Uuid, String)>, AppError> {
    let mut refused = Vec::new();
    if guards.is_empty() {
        return Ok(refused);
    }
    for (command_id, id, entry) in entries {
        let log = GuardLog::default();
        let input = GuardInput::new(command_id, Phase::Execute, actor, entry, &log);
        if let Err(err) = guards.check(conn, &input).await {
            if err.status() == actix_web::http::StatusCode::UNPROCESSABLE_ENTITY {
                refused.push((*id, err.message().to_string()));
            } else {
                return Err(err);
            }
        }
    }
    Ok(refused)
}

/// One unit: check, change, guard and record the deals `ids` as `creator`.
pub async fn run_unit(
    conn: &mut AsyncPgConnection,
    creator: &AuthContext,
    users: &dyn stoa_acl::UserDirectory,
    change: Change,
    ids: Vec<Uuid>,
) -> Result<UnitReport, UnitError> {
    let mut report = UnitReport::ok();
    if !creator.has(DEALS_MANAGE) {
        for id in &ids {
            report.fail(
                id.to_string(),
                format!("The job's creator no longer holds {DEALS_MANAGE}"),
            );
        }
        return Ok(report);
    }
    let target = target(conn, creator, users, change).await?;
    let rows = q::lock_many(conn, &ids).await?;
    let by_id: HashMap<Uuid, &DealCheck> = rows.iter().map(|r| (r.id, r)).collect();
    let mut to_change = Vec::new();
    for id in &ids {
        let row = by_id.get(id).copied();
        match (refusal(creator, row, &target), row) {
            (Some(message), _) => report.fail(id.to_string(), message),
            (None, Some(row)) if !unchanged(row, &target) => to_change.push(row.id),
            _ => {}
        }
    }
    let actor = creator.actor();
    if !actor
        .guards
        .applies_now(conn, change.command_id(), actor.tenant_id)
        .await?
    {
        // Nothing can refuse a change: the change and its records in one
        // statement, built by Postgres (no savepoint to roll back to).
        let set = match &target {
            Target::Owner(owner) => BulkSet::Owner(*owner),
            Target::Stage(stage) => BulkSet::Stage {
                stage: stage.id,
                pipeline: stage.pipeline_id,
                label: &stage.label,
            },
        };
        deal_bulk::write_and_record(conn, &actor, change.label(), to_change, set).await?;
        return Ok(report);
    }
    let before: HashMap<Uuid, DealState> = q::rows(conn, &to_change)
        .await?
        .iter()
        .map(|row| (row.id, DealState::from(row)))
        .collect();
    let accepted: Vec<Uuid> = {
        let guards = actor.guards.clone();
        let mut unguarded = actor.clone();
        unguarded.guards = WriteGuards::default();
        // Guards see each change in the database: the deals change in a
        // savepoint, which rolls back when any of them is refused.
        let pass = conn
            .transaction::<_, Pass, _>(async |conn| {
                let after = write(conn, &to_change, &target).await?;
                let list = entries(change, &before, &after);
                let no = refused(conn, &guards, &actor, &list)
                    .await
                    .map_err(Pass::Failed)?;
                if no.is_empty() {
                    Ok(list)
                } else {
                    Err(Pass::Refused(no))
                }
            })
            .await;
        let list = match pass {
            Ok(list) => {
                record_batch(conn, &unguarded, strip(list)).await?;
                return Ok(report);
            }
            Err(Pass::Failed(err)) => return Err(err.into()),
            Err(Pass::Refused(no)) => no,
        };
        let refused_ids: Vec<Uuid> = list.iter().map(|(id, _)| *id).collect();
        for (id, message) in list {
            report.fail(id.to_string(), message);
        }
        to_change
            .into_iter()
            .filter(|id| !refused_ids.contains(id))
            .collect()
    };
    let after = write(conn, &accepted, &target).await?;
    // Guards (if any) decide again on the accepted changes (and log them with the write).
    record_batch(conn, &actor, strip(entries(change, &before, &after))).await?;
    Ok(report)
}

fn strip(list: Vec<(&'static str, Uuid, LogEntry)>) -> Vec<(&'static str, LogEntry)> {
    list.into_iter().map(|(c, _, e)| (c, e)).collect()
}
