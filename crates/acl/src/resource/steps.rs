//! The service steps of the kit: each takes the caller's connection (inside
//! its transaction) and the caller, locks first, checks, then writes and
//! records through [`Save`].

use std::sync::Arc;

use diesel::sql_types::{Nullable, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::Value;
use stoa_core::AppError;
use stoa_core::command::tracked::lock_row;
use stoa_core::command::{Actor, Authorize, CommandHandler, Operation, StateHandler, execute};
use stoa_core::http::lock::check_lock;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{Resource, Save};
use crate::AuthContext;

/// How a write is recorded: its command id and label, who it is recorded
/// as (`None`: the caller, `ctx.actor()`; a rule's write is `system` work)
/// and the context added to its entry.
#[derive(Clone, Debug)]
pub struct Write {
    pub command_id: &'static str,
    pub label: &'static str,
    pub by: Option<Actor>,
    pub context: Option<Value>,
}

impl Write {
    pub fn new(command_id: &'static str, label: &'static str) -> Self {
        Self {
            command_id,
            label,
            by: None,
            context: None,
        }
    }

    /// The same write recorded as `actor`, with `context` in its entry.
    pub fn by(mut self, actor: Actor, context: Option<Value>) -> Self {
        self.by = Some(actor);
        self.context = context;
        self
    }
}

/// Whether `ctx` may leave or write `state`: the tenant (404), the
/// organization reach (`AuthContext::require_writable`: hidden 404,
/// tenant-wide for a restricted caller 403) and the write feature (403).
/// An owned record ([`Resource::owner`]) is written by its owner with the
/// feature; anyone else needs [`Resource::OTHERS_FEATURE`] and the reach
/// (without it: [`Resource::not_owner`]).
pub fn may_write<R: Resource>(ctx: &AuthContext, state: &R) -> Result<(), AppError> {
    if let Some(own) = state.writable_by(ctx) {
        return own;
    }
    let Some(owner) = state.owner() else {
        return may_write_at::<R>(ctx, state.tenant_id(), state.organization());
    };
    if ctx.tenant_id != Some(state.tenant_id()) {
        return Err(R::not_found());
    }
    // Outside the caller's selection: not there for its owner (404), out
    // of reach for anyone else (`Resource::hidden`).
    let selected = !R::SELECTION_HIDES
        || state
            .organization()
            .is_none_or(|o| ctx.can_see_organization(o));
    if ctx.user_id == Some(owner) && ctx.has(R::FEATURE) {
        return if selected {
            Ok(())
        } else {
            Err(R::not_found())
        };
    }
    match R::OTHERS_FEATURE {
        Some(feature) if ctx.has(feature) && !selected => Err(R::hidden()),
        Some(feature) if ctx.has(feature) => {
            ctx.require_writable(Some(state.tenant_id()), state.organization(), R::hidden)
        }
        _ if ctx.user_id == Some(owner) => ctx.require(R::FEATURE),
        _ => Err(R::not_owner()),
    }
}

/// [`may_write`] of a record of `R` known by its tenant and organization
/// (a bulk unit's locked row).
pub fn may_write_at<R: Resource>(
    ctx: &AuthContext,
    tenant: Uuid,
    organization: Option<Uuid>,
) -> Result<(), AppError> {
    if ctx.tenant_id != Some(tenant) {
        return Err(R::not_found());
    }
    if R::SELECTION_HIDES && organization.is_some_and(|o| !ctx.can_see_organization(o)) {
        return Err(R::not_found());
    }
    ctx.require_writable(Some(tenant), organization, R::hidden)?;
    ctx.require(R::FEATURE)
}

/// Locks the root row of `id` (`Tracked::lock` of a resource).
pub async fn lock<R: Resource>(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
    lock_row(conn, R::TABLE, id).await
}

#[derive(diesel::QueryableByName)]
struct Version {
    #[diesel(sql_type = Nullable<Timestamptz>)]
    version: Option<OffsetDateTime>,
}

/// Locks the root row of `id` and reads its version (`None`: no version
/// to compare, or no row).
async fn lock_version<R: Resource>(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<OffsetDateTime>, AppError> {
    let Some(column) = R::VERSION else {
        // No version to read: the resource's own lock (a key, a tree).
        <R as stoa_core::command::tracked::Tracked>::lock(conn, id).await?;
        return Ok(None);
    };
    // Both names are constants of the module, never input.
    let sql = format!(
        "SELECT {column} AS version FROM {} WHERE id = $1 FOR UPDATE",
        R::TABLE
    );
    let rows: Vec<Version> = diesel::sql_query(sql)
        .bind::<diesel::sql_types::Uuid, _>(id)
        .load(conn)
        .await?;
    Ok(rows.into_iter().next().and_then(|r| r.version))
}

/// The record `id` locked for a write by `ctx`: 404 when absent or not
/// reached, 403 without the feature or the reach to write it, 409 when
/// `expected` (the optimistic-lock header's `updatedAt`) is not its version.
pub async fn locked_in<R: Resource>(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
    expected: Option<OffsetDateTime>,
) -> Result<R, AppError> {
    current_in::<R>(conn, ctx, id, expected)
        .await?
        .ok_or_else(R::not_found)
}

/// [`locked_in`] of a record that may not exist yet (a row keyed by its
/// owner and scope, written by an upsert): `None` when absent, after the
/// lock, so a concurrent first write waits for this one.
pub async fn current_in<R: Resource>(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
    expected: Option<OffsetDateTime>,
) -> Result<Option<R>, AppError> {
    let version = lock_version::<R>(conn, id).await?;
    let Some(state) = R::load(conn, id).await? else {
        return Ok(None);
    };
    may_write(ctx, &state)?;
    check_lock(expected, version)?;
    Ok(Some(state))
}

/// Checks the state `after` (when any) for `ctx` — its reach, the feature
/// and the resource's own checks — then writes it over `before` and records
/// the entry. `before` must come from [`locked_in`] in this transaction.
pub async fn save_in<R: Resource>(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    services: Option<&R::Services>,
    how: Write,
    before: Option<R>,
    after: Option<R>,
) -> Result<(Option<R>, Operation), AppError> {
    match (&after, &before) {
        (Some(after), before) => {
            may_write(ctx, after)?;
            R::check(conn, ctx, services, after, before.as_ref()).await?;
        }
        (None, Some(before)) => R::check_delete(conn, ctx, services, before).await?,
        (None, None) => {}
    }
    let actor = how.by.unwrap_or_else(|| ctx.actor());
    let command = Save {
        command_id: how.command_id,
        label: how.label,
        before,
        after,
        context: how.context,
    };
    execute(conn, &actor, command).await
}

/// Creates `state` (built by the module: the id, the tenant, the
/// organization it goes to), checked for `ctx` as any write.
pub async fn create_in<R: Resource>(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    services: Option<&R::Services>,
    how: Write,
    state: R,
) -> Result<(Option<R>, Operation), AppError> {
    save_in(conn, ctx, services, how, None, Some(state)).await
}

/// Changes record `id`: locks and checks it ([`locked_in`]), lets `change`
/// build the new state from a copy of the current one (on the same
/// connection: it may read what it needs), checks and writes the result.
pub async fn update_in<R, F>(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    services: Option<&R::Services>,
    how: Write,
    id: Uuid,
    expected: Option<OffsetDateTime>,
    change: F,
) -> Result<(Option<R>, Operation), AppError>
where
    R: Resource,
    F: for<'c> FnOnce(&'c mut AsyncPgConnection, &'c mut R) -> BoxFuture<'c, Result<(), AppError>>,
{
    let before = locked_in::<R>(conn, ctx, id, expected).await?;
    let mut after = before.clone();
    change(conn, &mut after).await?;
    save_in(conn, ctx, services, how, Some(before), Some(after)).await
}

/// Deletes record `id` (undo puts it back with its id), checked as
/// [`locked_in`].
pub async fn delete_in<R: Resource>(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    how: Write,
    id: Uuid,
    expected: Option<OffsetDateTime>,
) -> Result<Operation, AppError> {
    let before = locked_in::<R>(conn, ctx, id, expected).await?;
    let (_, op) = save_in::<R>(conn, ctx, None, how, Some(before), None).await?;
    Ok(op)
}

/// `Tracked::authorize` of a resource: undo and redo are writes like any
/// other. The caller of the undo (403 without one) must be able to leave
/// `current` and write `target` now ([`may_write`]), and `target` must pass
/// the resource's own checks. Without services (an undo through a handler
/// built without them, `StateHandler::boxed`) the checks that need them
/// fail closed; the module's handlers hold them ([`handler`]).
pub async fn authorize<R: Resource>(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    current: Option<&R>,
    target: Option<&R>,
) -> Result<(), AppError> {
    authorize_with(conn, actor, None, current, target).await
}

/// [`authorize`] with the resource's services.
pub async fn authorize_with<R: Resource>(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    services: Option<&R::Services>,
    current: Option<&R>,
    target: Option<&R>,
) -> Result<(), AppError> {
    let ctx = AuthContext::of(actor)?;
    for state in current.into_iter().chain(target) {
        may_write(ctx, state)?;
    }
    match (target, current) {
        (Some(target), current) => {
            R::check(conn, ctx, services, target, current).await?;
        }
        (None, Some(current)) => {
            R::check_delete(conn, ctx, services, current).await?;
        }
        (None, None) => {}
    }
    Ok(())
}

/// The undo/redo handler of `command_id` for a resource whose checks need
/// `services`: they are the module's, handed over when the module is built,
/// so an undo checks with the same directory as the forward write.
pub fn handler<R: Resource>(
    command_id: &'static str,
    services: Arc<R::Services>,
) -> Arc<dyn CommandHandler> {
    StateHandler::<R>::authorized_by(command_id, Arc::new(WithServices::<R> { services }))
}

/// [`Authorize`] by [`authorize_with`] with the services it holds.
struct WithServices<R: Resource> {
    services: Arc<R::Services>,
}

impl<R: Resource> Authorize<R> for WithServices<R> {
    fn authorize<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        actor: &'a Actor,
        current: Option<&'a R>,
        target: Option<&'a R>,
    ) -> BoxFuture<'a, Result<(), AppError>> {
        Box::pin(authorize_with(
            conn,
            actor,
            Some(&*self.services),
            current,
            target,
        ))
    }
}
