//! The resource kit: the one write path of every tenant resource.
//!
//! A module's resource (a deal, a pipeline, a product ...) implements
//! [`Resource`] on top of its `stoa_core::command::Tracked` state: the table
//! of its root row, the feature a write needs, its tenant and organization,
//! its optimistic-lock column and its own reference checks (with the module
//! services those need). The service steps here then write it, on the
//! caller's connection, always in the same order:
//!
//! 1. lock the root row (`SELECT ... FOR UPDATE`), so nothing can commit
//!    between the checks and the write, and read its version (a resource
//!    without a version column locks with its own `Tracked::lock`: a key
//!    for rows that may not exist yet, a tenant's tree);
//! 2. the tenant (another tenant's record does not exist: 404);
//! 3. the organization reach ([`AuthContext::reach`], the one
//!    organization-scope rule: hidden is 404, tenant-wide for a restricted
//!    caller is 403 `organization_out_of_scope`); a record owned by one
//!    user ([`Resource::owner`]: a layout, a device) is written by its
//!    owner wherever it is, by others only with [`Resource::OTHERS_FEATURE`]
//!    inside their reach;
//! 4. the write feature (403);
//! 5. the optimistic lock (409 `record_modified`);
//! 6. the resource's own checks ([`Resource::check`]) on the new state;
//! 7. the write and its undoable before/after entry, through the command
//!    bus ([`Save`], in the caller's transaction).
//!
//! [`create_in`], [`update_in`], [`delete_in`] and [`write_many_in`] take
//! the caller's connection, so a route, a job, an AI confirm or a rule can
//! compose them in one transaction. Undo and redo are the same path:
//! `Tracked::authorize` of a resource is [`authorize`], which repeats steps
//! 2–4 on both states and 6 on the one undo writes, for the caller of the
//! undo, now.
//!
//! The kit lives in stoa-acl, not stoa-core: its checks need the caller
//! ([`AuthContext`]: features, tenant, organization reach), which stoa-acl
//! defines on top of stoa-core; stoa-core cannot name it without a cycle.

mod command;
mod macros;
mod many;
mod steps;
#[cfg(test)]
mod tests;

use diesel_async::AsyncPgConnection;
use std::future::Future;
use stoa_core::AppError;
use stoa_core::command::LogEntry;
use stoa_core::command::tracked::{Tracked, entry};
use uuid::Uuid;

use crate::AuthContext;

pub use command::Save;
pub use many::{Many, Refusals, write_many_in};
pub use steps::{
    Write, authorize, authorize_with, create_in, current_in, delete_in, handler, lock, locked_in,
    may_write, may_write_at, save_in, update_in,
};

/// A tenant resource written through the kit.
pub trait Resource: Tracked {
    /// The table of the root row every writer locks first (a constant of
    /// the module, never input).
    const TABLE: &'static str;
    /// The root row's optimistic-lock column (`None`: the resource has none,
    /// and the steps lock with the resource's own `Tracked::lock`: a key
    /// lock for rows that may not exist yet, a tenant's tree).
    const VERSION: Option<&'static str> = Some("updated_at");
    /// The feature every write of the resource needs.
    const FEATURE: &'static str;
    /// Whether the caller's organization selection also hides records by id
    /// (customers' contract: a deal outside the selected organization is
    /// 404). Otherwise only the organization reach decides.
    const SELECTION_HIDES: bool = false;
    /// What the resource's own checks need (a user directory ...); `()`
    /// when they need nothing.
    type Services: ?Sized + Send + Sync + 'static;

    fn id(&self) -> Uuid;
    fn tenant_id(&self) -> Uuid;
    /// The organization the record belongs to (`None`: tenant-wide).
    fn organization(&self) -> Option<Uuid>;
    /// The answer for a record the caller does not reach (404).
    fn not_found() -> AppError;
    /// The answer for a record of the caller's tenant outside its
    /// organization reach: [`Resource::not_found`] by default, so ids of
    /// other organizations are not confirmed; a module whose contract
    /// answers 403 there (devices' `Access denied`) says so.
    fn hidden() -> AppError {
        Self::not_found()
    }

    /// Steps 2–4 of a resource with rules of its own (`None`, the default:
    /// the kit's, [`may_write`]). Auth's accounts answer them: a super
    /// admin reaches every tenant's users and roles, a user's feature
    /// depends on the verb and a role (tenant-wide) is written by whoever
    /// its holders' reach allows; what needs the database stays in
    /// [`Resource::check`].
    fn writable_by(&self, ctx: &AuthContext) -> Option<Result<(), AppError>> {
        let _ = ctx;
        None
    }

    /// The user the record belongs to (a dashboard layout, a device): its
    /// owner writes it with [`Resource::FEATURE`] wherever it is (its
    /// organization is the owner's, not a place others reach); anyone else
    /// needs [`Resource::OTHERS_FEATURE`] and the organization reach.
    /// `None` (the default): nobody owns it, the reach decides.
    fn owner(&self) -> Option<Uuid> {
        None
    }
    /// The feature with which a caller writes owned records of others,
    /// inside its organization reach (`devices.admin`); `None`: an owned
    /// record is its owner's alone ([`Resource::not_owner`]).
    const OTHERS_FEATURE: Option<&'static str> = None;
    /// The answer for a caller writing an owned record of someone else
    /// without [`Resource::OTHERS_FEATURE`] (403).
    fn not_owner() -> AppError {
        AppError::forbidden()
    }

    /// The action-log entry of a change from `before` to `after` (either
    /// may be absent), with the resource's events.
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        match after.or(before) {
            Some(any) => entry(label, any.id(), before, after),
            None => LogEntry::default(),
        }
    }

    /// The resource's own checks of `target`, the state about to be written
    /// (`previous` is the state it replaces: what did not change need not be
    /// checked again). `services` is `None` when no one handed them over
    /// (an undo in a process without them): fail closed where they matter.
    fn check<'a>(
        conn: &'a mut AsyncPgConnection,
        ctx: &'a AuthContext,
        services: Option<&'a Self::Services>,
        target: &'a Self,
        previous: Option<&'a Self>,
    ) -> impl Future<Output = Result<(), AppError>> + Send + 'a {
        let _ = (conn, ctx, services, target, previous);
        async { Ok(()) }
    }

    /// The resource's own checks of a write that removes `current` (a
    /// delete, the undo of a create): leaving a record needs only the reach
    /// and the feature by default. A resource whose writes depend on whom
    /// the record is about (dashboards' role widgets) checks it here too.
    fn check_delete<'a>(
        conn: &'a mut AsyncPgConnection,
        ctx: &'a AuthContext,
        services: Option<&'a Self::Services>,
        current: &'a Self,
    ) -> impl Future<Output = Result<(), AppError>> + Send + 'a {
        let _ = (conn, ctx, services, current);
        async { Ok(()) }
    }

    /// Writes this state and returns it as stored. The default restores
    /// it and loads it back; a resource whose upsert returns the row
    /// overrides it with that one statement.
    fn save<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
    ) -> impl Future<Output = Result<Self, AppError>> + Send + 'a {
        async move {
            self.restore(conn).await?;
            Self::load(conn, self.id())
                .await?
                .ok_or_else(Self::not_found)
        }
    }

    /// Writes `after` over `before` (`None`: deletes, `Tracked::erase`) and
    /// returns the state as stored.
    fn write<'a>(
        conn: &'a mut AsyncPgConnection,
        before: Option<&'a Self>,
        after: Option<&'a Self>,
    ) -> impl Future<Output = Result<Option<Self>, AppError>> + Send + 'a {
        async move {
            match (after, before) {
                (Some(after), _) => after.save(conn).await.map(Some),
                (None, Some(before)) => {
                    Self::erase(conn, before.id()).await?;
                    Ok(None)
                }
                (None, None) => Ok(None),
            }
        }
    }
}
