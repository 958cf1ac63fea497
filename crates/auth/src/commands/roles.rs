//! Role commands: `auth.roles.create|update|delete` (all undoable).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use super::state::{self, AclState, RoleState};
use super::{ROLE_KIND, Tracked, authorize, entry, lock_row, tracked};
use crate::error::AuthError;
use crate::schema::{role_acls, roles};

pub const CREATE: &str = "auth.roles.create";
pub const UPDATE: &str = "auth.roles.update";
pub const DELETE: &str = "auth.roles.delete";
/// Domain events (payload `{id}`; the envelope carries the rest).
pub const CREATED_EVENT: &str = "auth.role.created";
pub const UPDATED_EVENT: &str = "auth.role.updated";
pub const DELETED_EVENT: &str = "auth.role.deleted";

impl Tracked for RoleState {
    const KIND: &'static str = ROLE_KIND;

    /// The role row: every writer of a role and its ACL locks it first.
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        lock_row(conn, "roles", id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        RoleState::load(conn, id).await
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        if self.deleted && state::role_user_count(conn, self.id).await? > 0 {
            return Err(AuthError::RoleHasUsers.into());
        }
        RoleState::restore(self, conn).await
    }

    /// Undoing a create removes the role, unless users were given it meanwhile.
    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        if state::role_user_count(conn, id).await? > 0 {
            return Err(AuthError::RoleHasUsers.into());
        }
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

    async fn authorize(
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        authorize::role(conn, AuthContext::of(actor)?, current, target).await
    }
}

/// Creates a role (with an empty ACL row, so the ACL editor has one to show).
pub struct CreateRoleCommand {
    pub tenant: Uuid,
    pub name: String,
    /// The organizations its ACL reaches (`None` = every one).
    pub organizations: Option<Vec<Uuid>>,
}

impl Command for CreateRoleCommand {
    type Output = Uuid;
    fn id(&self) -> &'static str {
        CREATE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(Uuid, LogEntry), AppError>> {
        Box::pin(async move {
            let id: Uuid = diesel::insert_into(roles::table)
                .values((roles::tenant_id.eq(self.tenant), roles::name.eq(&self.name)))
                .returning(roles::id)
                .get_result(conn)
                .await?;
            let acl = AclState {
                tenant_id: self.tenant,
                organizations: self.organizations,
                ..Default::default()
            };
            state::write_role_acl(conn, id, &acl).await?;
            let after = RoleState::load(conn, id).await?;
            let entry = entry("Create role", id, None, after.as_ref())
                .with_event(CREATED_EVENT, serde_json::json!({ "id": id }));
            Ok((id, entry))
        })
    }
}

/// Renames a role and/or moves it to another tenant (its ACL does not move).
pub struct UpdateRoleCommand {
    pub id: Uuid,
    pub name: Option<String>,
    pub tenant: Option<Uuid>,
}

impl Command for UpdateRoleCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        UPDATE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let Self { id, name, tenant } = self;
            let entry = tracked::<RoleState, _>(conn, "Update role", id, move |conn| {
                Box::pin(async move {
                    let current = RoleState::load(conn, id)
                        .await?
                        .filter(|r| !r.deleted)
                        .ok_or(AuthError::RoleNotFound)?;
                    let tenant = tenant.unwrap_or(current.tenant_id);
                    diesel::update(roles::table.filter(roles::id.eq(id)))
                        .set((
                            roles::name.eq(name.unwrap_or(current.name)),
                            roles::tenant_id.eq(tenant),
                        ))
                        .execute(conn)
                        .await?;
                    if tenant != current.tenant_id {
                        diesel::delete(role_acls::table.filter(role_acls::role_id.eq(id)))
                            .execute(conn)
                            .await?;
                        let acl = AclState {
                            tenant_id: tenant,
                            ..Default::default()
                        };
                        state::write_role_acl(conn, id, &acl).await?;
                    }
                    Ok(())
                })
            })
            .await?
            .with_event(UPDATED_EVENT, serde_json::json!({ "id": id }));
            Ok(((), entry))
        })
    }
}

/// Deletes a role nobody holds: marked deleted, its ACL kept for undo.
pub struct DeleteRoleCommand {
    pub id: Uuid,
}

impl Command for DeleteRoleCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        DELETE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let id = self.id;
            let entry = tracked::<RoleState, _>(conn, "Delete role", id, move |conn| {
                Box::pin(async move {
                    if state::role_user_count(conn, id).await? > 0 {
                        return Err(AuthError::RoleHasUsers.into());
                    }
                    let updated = diesel::update(
                        roles::table
                            .filter(roles::id.eq(id))
                            .filter(roles::deleted_at.is_null()),
                    )
                    .set(roles::deleted_at.eq(OffsetDateTime::now_utc()))
                    .execute(conn)
                    .await?;
                    if updated == 0 {
                        return Err(AuthError::RoleNotFound.into());
                    }
                    Ok(())
                })
            })
            .await?
            .with_event(DELETED_EVENT, serde_json::json!({ "id": id }));
            Ok(((), entry))
        })
    }
}
