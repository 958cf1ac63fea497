//! Many records of one resource changed the same way in one step (a bulk
//! job's unit): one lock statement, the kit's checks on each record, one
//! statement for the change, the write guards on each entry, one statement
//! per table for the records.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use futures_util::future::BoxFuture;
use stoa_core::AppError;
use stoa_core::command::{Actor, GuardInput, GuardLog, LogEntry, Phase, WriteGuards, record_batch};
use uuid::Uuid;

use super::{Resource, may_write_at};
use crate::AuthContext;

/// The records left as they were, with why, in the order asked for.
pub type Refusals = Vec<(Uuid, String)>;

/// One change applied to many records of `R`.
pub trait Many<R: Resource>: Sync {
    /// What the lock reads of one record: enough for the checks (a bulk
    /// unit reads the rest only when it needs it).
    type Row: Send + Sync;
    fn command_id(&self) -> &'static str;
    fn label(&self) -> &'static str;
    /// Locks `ids` (`FOR UPDATE`, in id order, so two units never wait on
    /// each other crosswise) and reads each one's row.
    fn lock<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<Vec<Self::Row>, AppError>>;
    /// The row's id, tenant and organization (what [`may_write_at`] checks).
    fn placement(row: &Self::Row) -> (Uuid, Uuid, Option<Uuid>);
    /// The change's own check of one record (`Some(message)`: left out).
    fn refusal(&self, row: &Self::Row) -> Option<String> {
        let _ = row;
        None
    }
    /// Whether the change would leave the record as it is (skipped, not
    /// recorded).
    fn unchanged(&self, row: &Self::Row) -> bool {
        let _ = row;
        false
    }
    /// The current whole states of `ids` (the entries' "before").
    fn states<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<Vec<R>, AppError>>;
    /// Applies the change to `ids`; the new states.
    fn apply<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<Vec<R>, AppError>>;
    /// An optimization for when no write guard applies: the change and its
    /// entries in fewer statements, with the same content as
    /// [`Resource::entry`] (`None`: the generic path).
    fn apply_and_record<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        actor: &'a Actor,
        ids: Vec<Uuid>,
    ) -> Option<BoxFuture<'a, Result<(), AppError>>> {
        let _ = (conn, actor, ids);
        None
    }
}

/// Why the record of `row` is left out (`None`: it may be changed).
fn refusal_of<R: Resource, M: Many<R>>(
    ctx: &AuthContext,
    plan: &M,
    row: Option<&M::Row>,
) -> Option<String> {
    let Some(row) = row else {
        return Some(R::not_found().message().to_string());
    };
    let (_, tenant, organization) = M::placement(row);
    if let Err(err) = may_write_at::<R>(ctx, tenant, organization) {
        return Some(err.message().to_string());
    }
    plan.refusal(row)
}

/// Changes `ids` as `plan` says, for `ctx`, on the caller's connection:
/// locks them, checks each ([`may_write_at`], then [`Many::refusal`]), changes
/// the rest, lets the write guards see each change (a refused one is rolled
/// back and left out) and records one undoable entry per changed record.
/// Returns the records left out.
pub async fn write_many_in<R: Resource, M: Many<R>>(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    plan: &M,
    ids: &[Uuid],
) -> Result<Refusals, AppError> {
    let rows = plan.lock(conn, ids).await?;
    let by_id: HashMap<Uuid, &M::Row> = rows.iter().map(|r| (M::placement(r).0, r)).collect();
    let mut refusals = Vec::new();
    let mut to_change = Vec::new();
    for id in ids {
        let row = by_id.get(id).copied();
        match (refusal_of::<R, M>(ctx, plan, row), row) {
            (Some(message), _) => refusals.push((*id, message)),
            (None, Some(row)) if !plan.unchanged(row) => to_change.push(*id),
            _ => {}
        }
    }
    if to_change.is_empty() {
        return Ok(refusals);
    }
    let actor = ctx.actor();
    let command_id = plan.command_id();
    let guarded = actor
        .guards
        .applies_now(conn, command_id, actor.tenant_id)
        .await?;
    if !guarded && let Some(fast) = plan.apply_and_record(conn, &actor, to_change.clone()) {
        fast.await?;
        return Ok(refusals);
    }
    let before: HashMap<Uuid, R> = plan
        .states(conn, &to_change)
        .await?
        .into_iter()
        .map(|s| (s.id(), s))
        .collect();
    if !guarded {
        let after = plan.apply(conn, &to_change).await?;
        record_batch(conn, &actor, entries(plan, &before, &after)).await?;
        return Ok(refusals);
    }
    let accepted = match guarded_pass(conn, plan, &actor, &before, &to_change).await? {
        None => return Ok(refusals),
        Some(refused) => {
            let out: Vec<Uuid> = refused.iter().map(|(id, _)| *id).collect();
            refusals.extend(refused);
            to_change.retain(|id| !out.contains(id));
            to_change
        }
    };
    let after = plan.apply(conn, &accepted).await?;
    // The guards decide again on the accepted changes (and log them with the write).
    record_batch(conn, &actor, entries(plan, &before, &after)).await?;
    Ok(refusals)
}

/// How the guarded pass ended.
enum Pass {
    /// Some records were refused: the savepoint rolled back.
    Refused(Refusals),
    Failed(AppError),
}

impl From<diesel::result::Error> for Pass {
    fn from(err: diesel::result::Error) -> Self {
        Self::Failed(err.into())
    }
}

impl From<AppError> for Pass {
    fn from(err: AppError) -> Self {
        Self::Failed(err)
    }
}

/// Changes `ids` in a savepoint and asks the guards about each entry (they
/// see the change in the database). `None`: none refused, the change and
/// its entries are kept; otherwise the savepoint rolled back and the
/// refused records are returned.
async fn guarded_pass<R: Resource, M: Many<R>>(
    conn: &mut AsyncPgConnection,
    plan: &M,
    actor: &Actor,
    before: &HashMap<Uuid, R>,
    ids: &[Uuid],
) -> Result<Option<Refusals>, AppError> {
    let guards = actor.guards.clone();
    let pass = conn
        .transaction::<_, Pass, _>(async |conn| {
            let after = plan.apply(conn, ids).await?;
            let list = entries(plan, before, &after);
            let no = refused(conn, &guards, actor, &list).await?;
            if no.is_empty() {
                Ok(list)
            } else {
                Err(Pass::Refused(no))
            }
        })
        .await;
    match pass {
        Ok(list) => {
            // Already guarded: recorded without asking again.
            let mut unguarded = actor.clone();
            unguarded.guards = WriteGuards::default();
            record_batch(conn, &unguarded, list).await?;
            Ok(None)
        }
        Err(Pass::Failed(err)) => Err(err),
        Err(Pass::Refused(no)) => Ok(Some(no)),
    }
}

fn entries<R: Resource, M: Many<R>>(
    plan: &M,
    before: &HashMap<Uuid, R>,
    after: &[R],
) -> Vec<(&'static str, LogEntry)> {
    after
        .iter()
        .map(|state| {
            let entry = R::entry(plan.label(), before.get(&state.id()), Some(state));
            (plan.command_id(), entry)
        })
        .collect()
}

/// Asks the actor's guards about each entry; the refused ones by id.
async fn refused(
    conn: &mut AsyncPgConnection,
    guards: &WriteGuards,
    actor: &Actor,
    entries: &[(&'static str, LogEntry)],
) -> Result<Refusals, AppError> {
    let mut refused = Vec::new();
    for (command_id, entry) in entries {
        let log = GuardLog::default();
        let input = GuardInput::new(command_id, Phase::Execute, actor, entry, &log);
        if let Err(err) = guards.check(conn, &input).await {
            if err.status() != StatusCode::UNPROCESSABLE_ENTITY {
                return Err(err);
            }
            let id = entry
                .resource_id
                .as_deref()
                .and_then(|id| id.parse().ok())
                .unwrap_or_default();
            refused.push((id, err.message().to_string()));
        }
    }
    Ok(refused)
}
