//! Roles through the resource kit (`stoa_acl::resource`): `auth.roles.create`,
//! `auth.roles.update` and `auth.roles.delete` are the kit's one `Save`
//! command over [`RoleState`] (all undoable). A delete is soft: the state
//! after it is the same role marked deleted, its ACL kept for undo.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_acl::resource::{self, Resource};
use stoa_core::AppError;
use stoa_core::command::{Actor, LogEntry};
use uuid::Uuid;

use super::account::{self, Account, account_resource};
use super::state::{self, RoleState};
use super::{ROLE_KIND, Tracked, authorize};
use crate::error::AuthError;
use crate::schema::roles;

pub const CREATE: &str = "auth.roles.create";
pub const UPDATE: &str = "auth.roles.update";
pub const DELETE: &str = "auth.roles.delete";
/// Domain events (payload `{id}`; the envelope carries the rest).
pub const CREATED_EVENT: &str = "auth.role.created";
pub const UPDATED_EVENT: &str = "auth.role.updated";
pub const DELETED_EVENT: &str = "auth.role.deleted";
/// What every role write needs.
pub const MANAGE: &str = "auth.roles.manage";

impl Tracked for RoleState {
    const KIND: &'static str = ROLE_KIND;

    /// The role row: every writer of a role and its ACL locks it first.
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        RoleState::load(conn, id).await
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        if self.deleted {
            unheld(conn, self.id).await?;
        }
        RoleState::restore(self, conn).await
    }

    /// Undoing a create removes the role, unless users were given it meanwhile.
    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        unheld(conn, id).await?;
        diesel::delete(roles::table.filter(roles::id.eq(id)))
            .execute(conn)
            .await?;
        Ok(())
    }

    fn view(&self) -> Value {
        RoleState::view(self)
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    fn keep_protected(&mut self, current: Option<&Self>) -> Vec<&'static str> {
        authorize::keep_flag_only(self.acl.as_mut(), current.and_then(|c| c.acl.as_ref()))
    }

    /// The kit's checks with the role's rules, also when the undo removes
    /// the role (`authorize::role` with no target).
    async fn authorize(
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        authorize::role(conn, AuthContext::of(actor)?, current, target).await
    }
}

/// 400 while live users hold the role: it is neither deleted nor removed.
async fn unheld(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
    if state::role_user_count(conn, id).await? > 0 {
        return Err(AuthError::RoleHasUsers.into());
    }
    Ok(())
}

/// A role through the kit. Roles are tenant-wide records that a restricted
/// caller may still write when every holder's reach stays inside its
/// organizations, so the role decides its reach itself
/// ([`Resource::writable_by`], and `authorize::role` in [`Resource::check`]).
impl Resource for RoleState {
    const TABLE: &'static str = "roles";
    const FEATURE: &'static str = MANAGE;
    type Services = ();

    fn id(&self) -> Uuid {
        self.id
    }
    fn tenant_id(&self) -> Uuid {
        self.tenant_id
    }
    fn organization(&self) -> Option<Uuid> {
        None
    }
    fn not_found() -> AppError {
        AuthError::RoleNotFound.into()
    }
    account_resource!(authorize::role_writable, authorize::role);
}

/// A role is deleted only while nobody holds it.
impl Account for RoleState {
    const EVENTS: [&'static str; 3] = [CREATED_EVENT, UPDATED_EVENT, DELETED_EVENT];
    fn deleted(&self) -> bool {
        self.deleted
    }
    async fn save_over(
        &self,
        conn: &mut AsyncPgConnection,
        before: Option<&Self>,
    ) -> Result<(), AppError> {
        if self.deleted {
            unheld(conn, self.id).await?;
        }
        RoleState::write_over(self, conn, before).await
    }
}
