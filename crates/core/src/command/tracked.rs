//! Undo and redo by whole states: the one pattern every module's undoable
//! commands use.
//!
//! A [`Tracked`] resource can load its whole state and write it back. A
//! command records the state before and after it ran ([`tracked`], [`entry`]);
//! [`StateHandler`] undoes by writing "before" back (or erasing what a create
//! made) and redoes by writing "after" again, keeping ids.
//!
//! Undo and redo are writes like any other (docs/security.md), so before it
//! writes anything the handler
//! 0. locks the resource's rows ([`Tracked::lock`]) before it reads them, so
//!    no write can commit between its checks and its own write; the forward
//!    command ([`tracked`]) takes the same lock first, so the two serialize;
//! 1. refuses with 409 when the resource changed since the entry (by anyone):
//!    the current state must still be the one the entry left behind;
//! 2. keeps the fields it never restores — credentials and security flags —
//!    as they are now ([`Tracked::keep_protected`]) and reports them;
//! 3. asks the resource to authorize the change from the current state to the
//!    one it is about to write, for the current caller, now
//!    ([`Tracked::authorize`]), with the same checks as the forward command.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use actix_web::http::StatusCode;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::{ActionLog, Actor, CommandHandler, LogEntry, UndoReport};
use crate::error::AppError;

/// A resource whose whole state a command can record and write back.
pub trait Tracked:
    Serialize + DeserializeOwned + Clone + PartialEq + Send + Sync + 'static
{
    /// The action log's `resourceKind`.
    const KIND: &'static str;
    /// Locks the rows `load` reads (`SELECT ... FOR UPDATE` of the resource's
    /// root row: the one row every writer of the resource locks first) until
    /// the transaction ends. [`tracked`] and [`StateHandler`] call it before
    /// they load, so a check made on the loaded state still holds when the
    /// state is written: at READ COMMITTED a write committed in between would
    /// otherwise be silently overwritten. Does nothing when the row is absent.
    /// Required (no default), so no resource can forget it.
    fn lock(
        conn: &mut AsyncPgConnection,
        id: Uuid,
    ) -> impl Future<Output = Result<(), AppError>> + Send;
    /// The current state (`None` when the resource does not exist).
    fn load(
        conn: &mut AsyncPgConnection,
        id: Uuid,
    ) -> impl Future<Output = Result<Option<Self>, AppError>> + Send;
    /// Writes this state back.
    fn restore<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
    ) -> impl Future<Output = Result<(), AppError>> + Send + 'a;
    /// Removes a resource that a command created (undo of a create).
    fn erase(
        conn: &mut AsyncPgConnection,
        id: Uuid,
    ) -> impl Future<Output = Result<(), AppError>> + Send;
    /// The snapshot shown in the action log (no secrets; a `password` field
    /// is shown as a redacted change, see `diff::SECRET_FIELDS`).
    fn view(&self) -> Value;
    /// Whether [`view`](Tracked::view) is the whole state as serde writes it
    /// (`serde_json::to_value(self)`, no secret field). The entry then holds
    /// the state once, in its snapshots, and its undo payload only names the
    /// snapshots: a deal's entry is about 1 KB smaller, under the size at
    /// which Postgres compresses a row (2 KB), which a bulk job writing
    /// 100,000 entries pays for on every one. Only for resources whose
    /// snapshots nothing rewrites after [`entry`] builds them.
    const VIEW_IS_STATE: bool = false;
    /// The tenant the resource belongs to.
    fn tenant(&self) -> Option<Uuid>;
    /// The resource's parent in the action log, if any.
    fn parent(&self) -> Option<(&'static str, String)> {
        None
    }
    /// Puts back into `self` (a state undo or redo is about to write) the
    /// fields that are never restored — credentials and security flags — from
    /// `current`, or clears them when the resource is gone. Returns the names
    /// of the fields whose recorded value was therefore not written.
    fn keep_protected(&mut self, current: Option<&Self>) -> Vec<&'static str> {
        let _ = current;
        Vec::new()
    }
    /// `Ok` when `actor` may change the resource from `current` to `target`
    /// (`None` = absent) now: the forward command's checks — features, grant
    /// boundary, super-admin rules, organization scope, tenant.
    fn authorize(
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> impl Future<Output = Result<(), AppError>> + Send;
}

/// Locks the row `id` of `table` (`SELECT 1 ... FOR UPDATE`) until the
/// transaction ends: the usual body of [`Tracked::lock`]. `table` is a
/// constant of the module (never input); nothing happens when the row is
/// absent.
pub async fn lock_row(
    conn: &mut AsyncPgConnection,
    table: &'static str,
    id: Uuid,
) -> Result<(), AppError> {
    diesel::sql_query(format!("SELECT 1 FROM {table} WHERE id = $1 FOR UPDATE"))
        .bind::<diesel::sql_types::Uuid, _>(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The undo payload of a tracked command.
#[derive(Serialize, Deserialize)]
#[serde(bound = "S: Tracked")]
struct Payload<S> {
    id: Uuid,
    before: Option<S>,
    after: Option<S>,
}

/// The undo payload's marker of states kept in the snapshots
/// ([`Tracked::VIEW_IS_STATE`]).
const IN_SNAPSHOTS: &str = "snapshots";

/// The action-log entry of a change of `id` from `before` to `after`.
pub fn entry<S: Tracked>(label: &str, id: Uuid, before: Option<&S>, after: Option<&S>) -> LogEntry {
    let any = after.or(before);
    let parent = any.and_then(Tracked::parent);
    let undo = if S::VIEW_IS_STATE {
        Some(serde_json::json!({"id": id, "states": IN_SNAPSHOTS}))
    } else {
        serde_json::to_value(Payload {
            id,
            before: before.cloned(),
            after: after.cloned(),
        })
        .ok()
    };
    LogEntry {
        action_label: Some(label.into()),
        resource_kind: Some(S::KIND.into()),
        resource_id: Some(id.to_string()),
        parent_resource_kind: parent.as_ref().map(|p| p.0.to_string()),
        parent_resource_id: parent.map(|p| p.1),
        snapshot_before: before.map(Tracked::view),
        snapshot_after: after.map(Tracked::view),
        undo,
        tenant_id: any.and_then(Tracked::tenant),
        other_tenants: [before, after]
            .into_iter()
            .flatten()
            .filter_map(Tracked::tenant)
            .collect(),
        ..Default::default()
    }
}

/// Locks `id` ([`Tracked::lock`]), loads its state before and after `change`
/// runs and builds the entry. A forward command's own checks belong after the
/// lock too (inside `change`, or after calling [`Tracked::lock`] itself).
pub async fn tracked<S, F>(
    conn: &mut AsyncPgConnection,
    label: &str,
    id: Uuid,
    change: F,
) -> Result<LogEntry, AppError>
where
    S: Tracked,
    F: for<'c> FnOnce(&'c mut AsyncPgConnection) -> BoxFuture<'c, Result<(), AppError>>,
{
    S::lock(conn, id).await?;
    let before = S::load(conn, id).await?;
    change(conn).await?;
    let after = S::load(conn, id).await?;
    Ok(entry(label, id, before.as_ref(), after.as_ref()))
}

fn payload<S: Tracked>(log: &ActionLog) -> Result<Payload<S>, AppError> {
    let unavailable = || AppError::bad_request("Undo data unavailable for this action");
    let undo = log.undo_payload().ok_or_else(unavailable)?;
    if undo.get("states").and_then(Value::as_str) != Some(IN_SNAPSHOTS) {
        return serde_json::from_value(undo.clone()).map_err(|_| unavailable());
    }
    let id = undo
        .get("id")
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(unavailable)?;
    let state = |snapshot: &Option<Value>| match snapshot {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|_| unavailable()),
    };
    Ok(Payload {
        id,
        before: state(&log.snapshot_before)?,
        after: state(&log.snapshot_after)?,
    })
}

/// 409: the resource is no longer in the state the entry left it in.
pub fn changed_since() -> AppError {
    AppError::new(
        StatusCode::CONFLICT,
        "The record has changed since this action; it can no longer be undone or redone",
    )
    .with_code("changed_since")
}

/// Whether `current` is still `expected`, ignoring the protected fields (they
/// are never written back, so they may legitimately differ). States are
/// compared as recorded (their serde form): timestamps at the millisecond
/// the entry keeps (`serde_util::timestamp`), the stored row having
/// microseconds.
fn still<S: Tracked>(expected: Option<&S>, current: Option<&S>) -> bool {
    match (expected, current) {
        (None, None) => true,
        (Some(expected), Some(current)) => {
            let mut expected = expected.clone();
            expected.keep_protected(Some(current));
            expected == *current
                || matches!(
                    (serde_json::to_value(&expected), serde_json::to_value(current)),
                    (Ok(a), Ok(b)) if a == b
                )
        }
        _ => false,
    }
}

/// How a [`StateHandler`] authorizes the state it is about to write: by
/// default [`Tracked::authorize`]; a resource whose checks need module
/// services (a user directory ...) hands the handler an authorizer that
/// holds them (`stoa_acl::resource::handler`), so undo and redo check with
/// the same services as the forward write instead of a process-wide slot.
pub trait Authorize<S>: Send + Sync {
    fn authorize<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        actor: &'a Actor,
        current: Option<&'a S>,
        target: Option<&'a S>,
    ) -> BoxFuture<'a, Result<(), AppError>>;
}

/// [`Authorize`] by [`Tracked::authorize`].
struct ByTracked;

impl<S: Tracked> Authorize<S> for ByTracked {
    fn authorize<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        actor: &'a Actor,
        current: Option<&'a S>,
        target: Option<&'a S>,
    ) -> BoxFuture<'a, Result<(), AppError>> {
        Box::pin(S::authorize(conn, actor, current, target))
    }
}

/// Authorizes and writes `target` over `current`; returns the fields kept.
async fn apply<S: Tracked>(
    conn: &mut AsyncPgConnection,
    authorizer: &dyn Authorize<S>,
    actor: &Actor,
    id: Uuid,
    current: Option<&S>,
    target: Option<&S>,
) -> Result<Vec<&'static str>, AppError> {
    let mut target = target.cloned();
    let kept = match target.as_mut() {
        Some(t) => t.keep_protected(current),
        None => Vec::new(),
    };
    authorizer
        .authorize(conn, actor, current, target.as_ref())
        .await?;
    match &target {
        Some(state) => state.restore(conn).await?,
        None => S::erase(conn, id).await?,
    }
    Ok(kept)
}

/// Undo/redo of a tracked command: authorize, then write back the recorded state.
pub struct StateHandler<S> {
    command_id: &'static str,
    authorizer: Arc<dyn Authorize<S>>,
    _state: PhantomData<fn() -> S>,
}

impl<S: Tracked> StateHandler<S> {
    /// The handler of `command_id`, authorizing by [`Tracked::authorize`].
    pub fn boxed(command_id: &'static str) -> Arc<dyn CommandHandler> {
        Self::authorized_by(command_id, Arc::new(ByTracked))
    }

    /// The handler of `command_id`, authorizing with `authorizer`.
    pub fn authorized_by(
        command_id: &'static str,
        authorizer: Arc<dyn Authorize<S>>,
    ) -> Arc<dyn CommandHandler> {
        Arc::new(Self {
            command_id,
            authorizer,
            _state: PhantomData,
        })
    }
}

/// Which way a [`StateHandler`] replays an entry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Undo,
    Redo,
}

impl<S: Tracked> StateHandler<S> {
    /// Locks and loads the entry's resource, refuses (409) unless it is
    /// still in the state the entry left it in (undo: "after"; redo:
    /// "before"), then authorizes and writes the other one. Returns the id,
    /// the state it replaced and the fields kept.
    async fn replay(
        &self,
        conn: &mut AsyncPgConnection,
        log: &ActionLog,
        actor: &Actor,
        direction: Direction,
    ) -> Result<(Uuid, Option<S>, Vec<&'static str>), AppError> {
        let p = payload::<S>(log)?;
        let (expected, target) = match direction {
            Direction::Undo => (&p.after, &p.before),
            Direction::Redo => (&p.before, &p.after),
        };
        S::lock(conn, p.id).await?;
        let current = S::load(conn, p.id).await?;
        if !still(expected.as_ref(), current.as_ref()) {
            return Err(changed_since());
        }
        let authorizer = self.authorizer.as_ref();
        let kept = apply(
            conn,
            authorizer,
            actor,
            p.id,
            current.as_ref(),
            target.as_ref(),
        )
        .await?;
        Ok((p.id, current, kept))
    }
}

impl<S: Tracked> CommandHandler for StateHandler<S> {
    fn command_id(&self) -> &'static str {
        self.command_id
    }

    fn undo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<UndoReport, AppError>> {
        Box::pin(async move {
            let (_, _, kept) = self.replay(conn, log, actor, Direction::Undo).await?;
            Ok(UndoReport {
                not_restored: kept.into_iter().map(String::from).collect(),
            })
        })
    }

    fn redo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<LogEntry, AppError>> {
        Box::pin(async move {
            let (id, current, _) = self.replay(conn, log, actor, Direction::Redo).await?;
            let now = S::load(conn, id).await?;
            let label = log.action_label.clone().unwrap_or_default();
            Ok(entry(&label, id, current.as_ref(), now.as_ref()))
        })
    }
}
