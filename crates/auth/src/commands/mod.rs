//! Auth mutations as commands. Users, roles and their ACLs are undoable: each
//! command records the full state of the resource before and after it ran,
//! undo writes the "before" state back (or removes what the command created)
//! and redo writes the "after" state again, keeping ids.

pub mod acls;
pub mod roles;
pub mod state;
pub mod users;

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_core::AppError;
use stoa_core::command::{ActionLog, Actor, CommandHandler, LogEntry};
use uuid::Uuid;

pub use acls::{RoleAclState, UpdateRoleAclCommand, UpdateUserAclCommand, UserAclState};
pub use roles::{CreateRoleCommand, DeleteRoleCommand, UpdateRoleCommand};
pub use state::{AclState, RoleState, UserState};
pub use users::{CreateUserCommand, DeleteUserCommand, UpdateProfileCommand, UpdateUserCommand};

pub const USER_KIND: &str = "auth.user";
pub const ROLE_KIND: &str = "auth.role";

/// A resource whose whole state a command can record and write back.
pub trait Tracked: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {
    /// The action log's `resourceKind`.
    const KIND: &'static str;
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
    /// The snapshot shown in the action log (no secrets).
    fn view(&self) -> Value;
    fn tenant(&self) -> Option<Uuid>;
    /// The resource's parent in the action log, if any.
    fn parent(&self) -> Option<(&'static str, String)> {
        None
    }
}

/// The undo payload of a tracked command.
#[derive(Serialize, Deserialize)]
#[serde(bound = "S: Tracked")]
struct Payload<S> {
    id: Uuid,
    before: Option<S>,
    after: Option<S>,
}

/// The action-log entry of a change of `id` from `before` to `after`.
pub fn entry<S: Tracked>(label: &str, id: Uuid, before: Option<&S>, after: Option<&S>) -> LogEntry {
    let any = after.or(before);
    let parent = any.and_then(Tracked::parent);
    let payload = Payload {
        id,
        before: before.cloned(),
        after: after.cloned(),
    };
    LogEntry {
        action_label: Some(label.into()),
        resource_kind: Some(S::KIND.into()),
        resource_id: Some(id.to_string()),
        parent_resource_kind: parent.as_ref().map(|p| p.0.to_string()),
        parent_resource_id: parent.map(|p| p.1),
        snapshot_before: before.map(Tracked::view),
        snapshot_after: after.map(Tracked::view),
        undo: serde_json::to_value(payload).ok(),
        tenant_id: any.and_then(Tracked::tenant),
        ..Default::default()
    }
}

/// Loads the state of `id` before and after `change` runs and builds the entry.
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
    let before = S::load(conn, id).await?;
    change(conn).await?;
    let after = S::load(conn, id).await?;
    Ok(entry(label, id, before.as_ref(), after.as_ref()))
}

fn payload<S: Tracked>(log: &ActionLog) -> Result<Payload<S>, AppError> {
    log.undo_payload()
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| AppError::bad_request("Undo data unavailable for this action"))
}

/// Undo/redo of a tracked command: write back the recorded state.
pub struct StateHandler<S> {
    command_id: &'static str,
    _state: PhantomData<fn() -> S>,
}

impl<S: Tracked> StateHandler<S> {
    pub fn boxed(command_id: &'static str) -> Arc<dyn CommandHandler> {
        Arc::new(Self {
            command_id,
            _state: PhantomData,
        })
    }
}

async fn write<S: Tracked>(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    state: Option<&S>,
) -> Result<(), AppError> {
    match state {
        Some(state) => state.restore(conn).await,
        None => S::erase(conn, id).await,
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
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(), AppError>> {
        Box::pin(async move {
            let p = payload::<S>(log)?;
            write(conn, p.id, p.before.as_ref()).await
        })
    }

    fn redo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<LogEntry, AppError>> {
        Box::pin(async move {
            let p = payload::<S>(log)?;
            let current = S::load(conn, p.id).await?;
            write(conn, p.id, p.after.as_ref()).await?;
            let label = log.action_label.clone().unwrap_or_default();
            Ok(entry(&label, p.id, current.as_ref(), p.after.as_ref()))
        })
    }
}

/// The undo/redo handlers of the auth module.
pub fn handlers() -> Vec<Arc<dyn CommandHandler>> {
    vec![
        StateHandler::<UserState>::boxed(users::CREATE),
        StateHandler::<UserState>::boxed(users::UPDATE),
        StateHandler::<UserState>::boxed(users::DELETE),
        StateHandler::<RoleState>::boxed(roles::CREATE),
        StateHandler::<RoleState>::boxed(roles::UPDATE),
        StateHandler::<RoleState>::boxed(roles::DELETE),
        StateHandler::<RoleAclState>::boxed(acls::ROLE_ACL_UPDATE),
        StateHandler::<UserAclState>::boxed(acls::USER_ACL_UPDATE),
    ]
}
