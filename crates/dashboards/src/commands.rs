//! Every dashboards write, through the resource kit (`stoa_acl::resource`):
//!
//! - `dashboards.layout.save` (PUT and PATCH of a layout);
//! - `dashboards.role_widgets.save` (a role's widgets; an empty list removes
//!   the row);
//! - `dashboards.user_widgets.save` (a user's widgets; `inherit` removes the row).
//!
//! Each state implements `Tracked` and `Resource`: the kit's `Save` writes
//! and records, and undo and redo go through the shared `StateHandler`,
//! whose `authorize` (the kit's) repeats the forward checks for the caller
//! of the undo: the tenant, the feature, the owner (a layout is its user's
//! alone: `Resource::owner`), for assignments the organization reach and
//! the reach of the row's role or user ([`crate::reach`], with the accounts
//! [`handlers_with`] installs). Roles and users never change tenant, and a
//! row of a role or user deleted since shows nobody anything, so the
//! recorded tenant is what is checked.
//!
//! Rows are keyed by owner and scope and may not exist yet, so every writer
//! locks the key (`queries::lock_key`, an advisory lock: `Tracked::lock`,
//! which the kit takes for a resource without a version column).

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_acl::accounts::Accounts;
use stoa_acl::resource::{Resource, handler};
use stoa_core::AppError;
use stoa_core::command::tracked::{StateHandler, Tracked, entry};
use stoa_core::command::{CommandHandler, LogEntry};
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

pub const LAYOUT_LABEL: &str = "Save dashboard layout";
pub const ROLE_WIDGETS_LABEL: &str = "Assign dashboard widgets to a role";
pub const USER_WIDGETS_LABEL: &str = "Assign dashboard widgets to a user";

/// The entry of a row going from `before` to `after`, with its `event`.
fn saved_entry<S: Resource>(
    label: &str,
    event: &str,
    before: Option<&S>,
    after: Option<&S>,
) -> LogEntry {
    match after.or(before) {
        Some(any) => {
            entry(label, any.id(), before, after).with_event(event, json!({"id": any.id()}))
        }
        None => LogEntry::default(),
    }
}

/// The accounts a role's or user's reach is checked with: 403 when none
/// were handed over (an undo in a process without them: fail closed).
fn accounts(services: Option<&dyn Accounts>) -> Result<&dyn Accounts, AppError> {
    services.ok_or_else(AppError::forbidden)
}

/// Inside `impl Tracked for S`: every dashboards row is keyed by owner and
/// scope and may not exist yet, so it is locked by its key; it is loaded and
/// saved by `queries`' functions, erased from `table`, and its tenant is its
/// scope's.
macro_rules! keyed_row {
    ($load:path, $save:path, $table:literal) => {
        async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
            queries::lock_key(conn, id).await
        }
        async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
            $load(conn, id).await
        }
        fn restore<'a>(
            &'a self,
            conn: &'a mut AsyncPgConnection,
        ) -> impl Future<Output = Result<(), AppError>> + Send + 'a {
            $save(conn, self)
        }
        async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
            queries::delete_row(conn, $table, id).await
        }
        fn tenant(&self) -> Option<Uuid> {
            Some(self.scope.tenant_id)
        }
        stoa_acl::kit_authorize!();
    };
}

/// Inside `impl Resource for S`: a widget assignment (a role's or a user's)
/// is written with `dashboards.admin.assign-widgets` within the organization
/// reach of its scope, and both writing and removing it check whom it is
/// about (`check_delete`, the impl's own), so a removal cannot reach further
/// than a write.
macro_rules! widget_assignment {
    ($table:literal, $event:literal) => {
        const TABLE: &'static str = $table;
        const VERSION: Option<&'static str> = None;
        const FEATURE: &'static str = ASSIGN;
        type Services = dyn Accounts;
        stoa_acl::resource_identity!(scope);
        fn not_found() -> AppError {
            DashboardsError::NotFound.into()
        }
        fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
            saved_entry(label, $event, before, after)
        }
        async fn check(
            conn: &mut AsyncPgConnection,
            ctx: &AuthContext,
            services: Option<&dyn Accounts>,
            target: &Self,
            _: Option<&Self>,
        ) -> Result<(), AppError> {
            Self::check_delete(conn, ctx, services, target).await
        }
    };
}

impl Tracked for LayoutState {
    const KIND: &'static str = LAYOUT_KIND;
    keyed_row!(
        queries::load_layout,
        queries::save_layout,
        "dashboard_layouts"
    );
    fn view(&self) -> Value {
        json!({"userId": self.user_id, "tenantId": self.scope.tenant_id,
               "organizationId": self.scope.organization_id, "items": self.items})
    }
}

/// A layout through the kit: its user's alone (`dashboards.configure`, 403
/// `Forbidden` for anyone else, a super admin too), in the scope of the
/// owner's token, wherever that is.
impl Resource for LayoutState {
    const TABLE: &'static str = "dashboard_layouts";
    const VERSION: Option<&'static str> = None;
    const FEATURE: &'static str = CONFIGURE;
    type Services = ();
    stoa_acl::resource_identity!(scope);
    fn owner(&self) -> Option<Uuid> {
        Some(self.user_id)
    }
    fn not_found() -> AppError {
        DashboardsError::NotFound.into()
    }
    fn not_owner() -> AppError {
        DashboardsError::Forbidden.into()
    }
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        saved_entry(label, "dashboards.layout.saved", before, after)
    }
}

impl Tracked for RoleWidgetsState {
    const KIND: &'static str = ROLE_WIDGETS_KIND;
    keyed_row!(
        queries::load_role_widgets,
        queries::save_role_widgets,
        "dashboard_role_widgets"
    );
    fn view(&self) -> Value {
        json!({"roleId": self.role_id, "tenantId": self.scope.tenant_id,
               "organizationId": self.scope.organization_id, "widgetIds": self.widget_ids})
    }
    fn parent(&self) -> Option<(&'static str, String)> {
        Some(("auth.role", self.role_id.to_string()))
    }
}

/// A role's widgets through the kit: `dashboards.admin.assign-widgets`, the
/// organization reach of the row's scope, and a role the caller may write
/// ([`reach::writable_role`]), for a removal too.
impl Resource for RoleWidgetsState {
    widget_assignment!("dashboard_role_widgets", "dashboards.role_widgets.saved");
    async fn check_delete(
        conn: &mut AsyncPgConnection,
        ctx: &AuthContext,
        services: Option<&dyn Accounts>,
        current: &Self,
    ) -> Result<(), AppError> {
        let accounts = accounts(services)?;
        reach::writable_role(
            conn,
            accounts,
            ctx,
            current.role_id,
            current.scope.tenant_id,
        )
        .await?;
        Ok(())
    }
}

impl Tracked for UserWidgetsState {
    const KIND: &'static str = USER_WIDGETS_KIND;
    keyed_row!(
        queries::load_user_widgets,
        queries::save_user_widgets,
        "dashboard_user_widgets"
    );
    fn view(&self) -> Value {
        json!({"userId": self.user_id, "tenantId": self.scope.tenant_id,
               "organizationId": self.scope.organization_id, "mode": self.mode,
               "widgetIds": self.widget_ids})
    }
    fn parent(&self) -> Option<(&'static str, String)> {
        Some((stoa_acl::accounts::USER_KIND, self.user_id.to_string()))
    }
}

/// A user's widgets through the kit: `dashboards.admin.assign-widgets`, the
/// organization reach of the row's scope, and a user the caller reaches
/// ([`reach::reachable_user`]), for a removal too.
impl Resource for UserWidgetsState {
    widget_assignment!("dashboard_user_widgets", "dashboards.user_widgets.saved");
    async fn check_delete(
        conn: &mut AsyncPgConnection,
        ctx: &AuthContext,
        services: Option<&dyn Accounts>,
        current: &Self,
    ) -> Result<(), AppError> {
        let accounts = accounts(services)?;
        let tenant = current.scope.tenant_id;
        reach::reachable_user(conn, accounts, accounts, ctx, current.user_id, tenant).await?;
        Ok(())
    }
}

/// The undo/redo handlers of every dashboards command (the shared state
/// handler); the widget assignments' check their reach with `accounts`.
pub fn handlers_with(accounts: Arc<dyn Accounts>) -> Vec<Arc<dyn CommandHandler>> {
    vec![
        StateHandler::<LayoutState>::boxed(SAVE_LAYOUT),
        handler::<RoleWidgetsState>(SAVE_ROLE_WIDGETS, accounts.clone()),
        handler::<UserWidgetsState>(SAVE_USER_WIDGETS, accounts),
    ]
}
