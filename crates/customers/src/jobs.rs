//! The bulk jobs: `customers.deals.bulk_update_owner` and
//! `customers.deals.bulk_update_stage`.
//!
//! Each job acts as its creator (`JobContext::unit_as`): units of
//! [`UNIT_SIZE`] deals, each in one transaction that re-resolves the
//! creator's grants and hands the unit to the resource kit
//! (`stoa_acl::resource::write_many_in`): it locks the unit's deals, checks
//! every deal as any deal write (tenant, organization reach, feature) and
//! the stage's organization, changes the rest with one statement, asks the
//! write guards about each change and records one undoable action-log entry
//! per changed deal with one statement (`record_batch`); when no guard
//! applies, the change and its entries are one statement built in SQL
//! (`queries::deal_bulk`, the plan's `apply_and_record`). A deal that fails a
//! check or that a guard refuses is listed in the job's result
//! (`report.fail`) and left as it was; the others commit. The unit's record and progress commit with its changes, so a
//! worker killed mid-job leaves whole units behind and the retry skips them.

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_acl::AuthContext;
use stoa_acl::resource::{Many, write_many_in};
use stoa_core::AppError;
use stoa_core::command::Actor;
use stoa_jobs::{JobContext, JobError, JobHandler, Outcome, UnitError, UnitReport};
use uuid::Uuid;

use crate::DEALS_MANAGE;
use crate::commands::deals::{BULK_OWNER, BULK_STAGE};
use crate::model::{DealState, StageRow};
use crate::queries::deal_bulk::{self, BulkSet};
use crate::queries::deals::DealCheck;
use crate::queries::{deals as q, stages};

/// Deals per unit: one lock statement and one statement for the change and
/// its records, built by Postgres (`queries::deal_bulk`), plus the unit's
/// own (its `job_units` row, the creator's grants, the stage, progress).
/// Units of 250 spent a fifth of the job on those per-unit statements and
/// commits (issue 52); 1,000 keeps ten units per job of 10,000 ids, so the
/// progress still moves every few hundred milliseconds.
pub const UNIT_SIZE: usize = 1_000;

/// Deals per kit call when a write guard applies: the guarded path holds its
/// entries in memory together (about 15 KB per deal: snapshots, undo
/// payload, two events), so 250 keeps two jobs' units near 6 MiB each; 500
/// took the server's peak RSS over 80 MB during the bulk benchmark and was
/// no faster.
pub const GUARDED_CHUNK: usize = 250;

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
            let (_, failed) = stoa_jobs::units::failed_items(&mut conn, ctx.job.id).await?;
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

/// A unit's change as the resource kit applies it to many deals
/// (`stoa_acl::resource::write_many_in`): the kit locks, checks each deal
/// for the creator (tenant, organization reach, feature), asks the guards
/// and records; the plan says what changes and how.
struct Plan {
    change: Change,
    target: Target,
}

impl Many<DealState> for Plan {
    type Row = DealCheck;

    fn command_id(&self) -> &'static str {
        self.change.command_id()
    }

    fn label(&self) -> &'static str {
        self.change.label()
    }

    fn lock<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<Vec<DealCheck>, AppError>> {
        Box::pin(async move { Ok(q::lock_many(conn, ids).await?) })
    }

    fn placement(row: &DealCheck) -> (Uuid, Uuid, Option<Uuid>) {
        (row.id, row.tenant_id, Some(row.organization_id))
    }

    fn refusal(&self, row: &DealCheck) -> Option<String> {
        match &self.target {
            Target::Stage(stage) if stage.organization_id != row.organization_id => {
                Some("Pipeline stage belongs to another organization".into())
            }
            _ => None,
        }
    }

    fn unchanged(&self, row: &DealCheck) -> bool {
        match &self.target {
            Target::Owner(owner) => row.owner_user_id == *owner,
            Target::Stage(stage) => row.pipeline_stage_id == Some(stage.id),
        }
    }

    fn states<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<Vec<DealState>, AppError>> {
        Box::pin(async move {
            Ok(q::rows(conn, ids)
                .await?
                .iter()
                .map(DealState::from)
                .collect())
        })
    }

    fn apply<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<Vec<DealState>, AppError>> {
        Box::pin(async move {
            let rows = match &self.target {
                Target::Owner(owner) => q::set_owner(conn, ids, *owner).await?,
                Target::Stage(stage) => {
                    q::set_stage(conn, ids, stage.id, stage.pipeline_id, &stage.label).await?
                }
            };
            Ok(rows.iter().map(DealState::from).collect())
        })
    }

    /// Nothing can refuse a change: the change and its records in one
    /// statement, built by Postgres (`queries::deal_bulk`; a test keeps its
    /// entries equal to `deal_entry`'s).
    fn apply_and_record<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        actor: &'a Actor,
        ids: Vec<Uuid>,
    ) -> Option<BoxFuture<'a, Result<(), AppError>>> {
        let set = match &self.target {
            Target::Owner(owner) => BulkSet::Owner(*owner),
            Target::Stage(stage) => BulkSet::Stage {
                stage: stage.id,
                pipeline: stage.pipeline_id,
                label: &stage.label,
            },
        };
        let label = self.change.label();
        Some(Box::pin(async move {
            deal_bulk::write_and_record(conn, actor, label, ids, set).await?;
            Ok(())
        }))
    }
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
    let plan = Plan {
        change,
        target: target(conn, creator, users, change).await?,
    };
    let guarded = creator
        .actor()
        .guards
        .applies_now(conn, change.command_id(), creator.tenant_id)
        .await?;
    let chunk = if guarded {
        GUARDED_CHUNK
    } else {
        ids.len().max(1)
    };
    for ids in ids.chunks(chunk) {
        for (id, message) in write_many_in(conn, creator, &plan, ids).await? {
            report.fail(id.to_string(), message);
        }
    }
    Ok(report)
}
