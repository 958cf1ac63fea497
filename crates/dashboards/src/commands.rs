//! Every dashboards write as a command with `Tracked` undo:
//!
//! - `dashboards.layout.save` (PUT and PATCH of a layout, and the default
//!   layout the first GET stores);
//! - `dashboards.role_widgets.save` (a role's widgets; an empty list removes
//!   the row);
//! - `dashboards.user_widgets.save` (a user's widgets; `inherit` removes the row).
//!
//! Undo and redo write the recorded row back through the shared
//! `StateHandler`, after [`Tracked::authorize`] repeats the forward checks
//! for the caller of the undo: the tenant, the feature, the owner (a layout
//! is its user's alone) and, for assignments, the organization scope. Roles
//! and users never change tenant, and a row of a role or user deleted since
//! shows nobody anything, so the recorded tenant is what is checked.

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_acl::accounts::Accounts;
use stoa_core::AppError;
use stoa_core::command::tracked::{StateHandler, Tracked, tracked};
use stoa_core::command::{ActionLog, Actor, Command, CommandHandler, Event, LogEntry, UndoReport};
use uuid::Uuid;

use crate::error::DashboardsError;
use crate::model::{
    LAYOUT_KIND, LayoutState, ROLE_WIDGETS_KIND, RoleWidgetsState, USER_WIDGETS_KIND,
    UserWidgetsState,
};
use crate::{ASSIGN, CONFIGURE};
use crate::{queries, reach};

pub const SAVE_LAYOUT: &str = "dashboards.layout.save";
pub const SAVE_ROLE_WIDGETS: &str = "dashboards.role_widgets.save";
pub const SAVE_USER_WIDGETS: &str = "dashboards.user_widgets.save";

/// A state the generic [`Save`] command writes.
pub trait Saved: Tracked {
    const COMMAND: &'static str;
    const LABEL: &'static str;
    const EVENT: &'static str;
    fn id(&self) -> Uuid;
}

/// Writes `target` over row `id` (`None` removes it). The service has
/// locked the key and checked the caller and the input already.
pub struct Save<S> {
    pub id: Uuid,
    pub target: Option<S>,
}

impl<S: Saved> Command for Save<S> {
    type Output = ();
    fn id(&self) -> &'static str {
        S::COMMAND
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let id = self.id;
            let target = self.target;
            let mut log = tracked::<S, _>(conn, S::LABEL, id, move |conn| {
                Box::pin(async move {
                    match &target {
                        Some(state) => state.restore(conn).await,
                        None => S::erase(conn, id).await,
                    }
                })
            })
            .await?;
            log.events.push(Event {
                name: S::EVENT.into(),
                payload: json!({"id": id}),
            });
            Ok(((), log))
        })
    }
}

fn same_tenant(ctx: &AuthContext, tenant: Uuid) -> Result<(), AppError> {
    if ctx.tenant_id == Some(tenant) {
        Ok(())
    } else {
        Err(DashboardsError::NotFound.into())
    }
}

/// The states an undo moves between, both checked.
fn states<'a, S>(current: Option<&'a S>, target: Option<&'a S>) -> impl Iterator<Item = &'a S> {
    current.into_iter().chain(target)
}

impl Tracked for LayoutState {
    const KIND: &'static str = LAYOUT_KIND;
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        queries::lock_key(conn, id).await
    }
    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        queries::load_layout(conn, id).await
    }
    fn restore<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
    ) -> impl Future<Output = Result<(), AppError>> + Send + 'a {
        queries::save_layout(conn, self)
    }
    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        queries::delete_row(conn, "dashboard_layouts", id).await
    }
    fn view(&self) -> Value {
        json!({"userId": self.user_id, "tenantId": self.scope.tenant_id,
               "organizationId": self.scope.organization_id, "items": self.items})
    }
    fn tenant(&self) -> Option<Uuid> {
        Some(self.scope.tenant_id)
    }
    async fn authorize(
        _: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        ctx.require(CONFIGURE)?;
        for state in states(current, target) {
            same_tenant(ctx, state.scope.tenant_id)?;
            // A layout is its user's alone.
            if ctx.user_id != Some(state.user_id) {
                return Err(DashboardsError::Forbidden.into());
            }
        }
        Ok(())
    }
}

impl Saved for LayoutState {
    const COMMAND: &'static str = SAVE_LAYOUT;
    const LABEL: &'static str = "Save dashboard layout";
    const EVENT: &'static str = "dashboards.layout.saved";
    fn id(&self) -> Uuid {
        self.id
    }
}

impl Tracked for RoleWidgetsState {
    const KIND: &'static str = ROLE_WIDGETS_KIND;
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        queries::lock_key(conn, id).await
    }
    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        queries::load_role_widgets(conn, id).await
    }
    fn restore<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
    ) -> impl Future<Output = Result<(), AppError>> + Send + 'a {
        queries::save_role_widgets(conn, self)
    }
    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        queries::delete_row(conn, "dashboard_role_widgets", id).await
    }
    fn view(&self) -> Value {
        json!({"roleId": self.role_id, "tenantId": self.scope.tenant_id,
               "organizationId": self.scope.organization_id, "widgetIds": self.widget_ids})
    }
    fn tenant(&self) -> Option<Uuid> {
        Some(self.scope.tenant_id)
    }
    fn parent(&self) -> Option<(&'static str, String)> {
        Some(("auth.role", self.role_id.to_string()))
    }
    async fn authorize(
        _: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        ctx.require(ASSIGN)?;
        for state in states(current, target) {
            same_tenant(ctx, state.scope.tenant_id)?;
            ctx.require_organizations([state.scope.organization_id])?;
        }
        Ok(())
    }
}

impl Saved for RoleWidgetsState {
    const COMMAND: &'static str = SAVE_ROLE_WIDGETS;
    const LABEL: &'static str = "Assign dashboard widgets to a role";
    const EVENT: &'static str = "dashboards.role_widgets.saved";
    fn id(&self) -> Uuid {
        self.id
    }
}

impl Tracked for UserWidgetsState {
    const KIND: &'static str = USER_WIDGETS_KIND;
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        queries::lock_key(conn, id).await
    }
    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        queries::load_user_widgets(conn, id).await
    }
    fn restore<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
    ) -> impl Future<Output = Result<(), AppError>> + Send + 'a {
        queries::save_user_widgets(conn, self)
    }
    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        queries::delete_row(conn, "dashboard_user_widgets", id).await
    }
    fn view(&self) -> Value {
        json!({"userId": self.user_id, "tenantId": self.scope.tenant_id,
               "organizationId": self.scope.organization_id, "mode": self.mode,
               "widgetIds": self.widget_ids})
    }
    fn tenant(&self) -> Option<Uuid> {
        Some(self.scope.tenant_id)
    }
    fn parent(&self) -> Option<(&'static str, String)> {
        Some((stoa_acl::accounts::USER_KIND, self.user_id.to_string()))
    }
    async fn authorize(
        _: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        ctx.require(ASSIGN)?;
        for state in states(current, target) {
            same_tenant(ctx, state.scope.tenant_id)?;
            ctx.require_organizations([state.scope.organization_id])?;
        }
        Ok(())
    }
}

impl Saved for UserWidgetsState {
    const COMMAND: &'static str = SAVE_USER_WIDGETS;
    const LABEL: &'static str = "Assign dashboard widgets to a user";
    const EVENT: &'static str = "dashboards.user_widgets.saved";
    fn id(&self) -> Uuid {
        self.id
    }
}

/// The undo/redo handlers of every dashboards command; an undo or redo of a
/// role's or user's widgets first passes the forward route's reach checks
/// ([`crate::reach`]) for its caller, now, for the role or user of both
/// recorded states.
pub fn handlers_with(accounts: Arc<dyn Accounts>) -> Vec<Arc<dyn CommandHandler>> {
    vec![
        StateHandler::<LayoutState>::boxed(SAVE_LAYOUT),
        Arc::new(Reaching {
            inner: StateHandler::<RoleWidgetsState>::boxed(SAVE_ROLE_WIDGETS),
            accounts: accounts.clone(),
            owner: Owner::Role,
        }),
        Arc::new(Reaching {
            inner: StateHandler::<UserWidgetsState>::boxed(SAVE_USER_WIDGETS),
            accounts,
            owner: Owner::User,
        }),
    ]
}

#[derive(Clone, Copy)]
enum Owner {
    Role,
    User,
}

/// A state handler behind the reach of the row's role or user.
struct Reaching {
    inner: Arc<dyn CommandHandler>,
    accounts: Arc<dyn Accounts>,
    owner: Owner,
}

impl Reaching {
    /// The (owner, tenant) pairs the entry's states name.
    fn owners(&self, log: &ActionLog) -> Vec<(Uuid, Uuid)> {
        let key = match self.owner {
            Owner::Role => "roleId",
            Owner::User => "userId",
        };
        let id = |v: &Value, k: &str| v.get(k)?.as_str()?.parse::<Uuid>().ok();
        [&log.snapshot_before, &log.snapshot_after]
            .into_iter()
            .flatten()
            .filter_map(|v| Some((id(v, key)?, id(v, "tenantId")?)))
            .collect()
    }

    async fn check(
        &self,
        conn: &mut AsyncPgConnection,
        log: &ActionLog,
        actor: &Actor,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        let accounts = &*self.accounts;
        for (owner, tenant) in self.owners(log) {
            match self.owner {
                Owner::Role => {
                    reach::writable_role(conn, accounts, ctx, owner, tenant).await?;
                }
                Owner::User => {
                    reach::reachable_user(conn, accounts, accounts, ctx, owner, tenant).await?;
                }
            }
        }
        Ok(())
    }
}

impl CommandHandler for Reaching {
    fn command_id(&self) -> &'static str {
        self.inner.command_id()
    }

    fn undo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<UndoReport, AppError>> {
        Box::pin(async move {
            self.check(conn, log, actor).await?;
            self.inner.undo(conn, log, actor).await
        })
    }

    fn redo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<LogEntry, AppError>> {
        Box::pin(async move {
            self.check(conn, log, actor).await?;
            self.inner.redo(conn, log, actor).await
        })
    }
}
