//! ACL edits as undoable commands: `auth.roles.acl.update` and
//! `auth.users.acl.update`. (The reference writes ACLs outside the command
//! bus; stoa logs them like every other mutation, and undo restores the
//! previous grants.)

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use uuid::Uuid;

use super::state::{self, AclState};
use super::{ROLE_KIND, Tracked, USER_KIND, authorize, lock_row, tracked};
use crate::error::AuthError;
use crate::schema::{role_acls, roles, user_acls, users};

pub const ROLE_ACL_UPDATE: &str = "auth.roles.acl.update";
pub const USER_ACL_UPDATE: &str = "auth.users.acl.update";
/// Domain events (payload `{roleId}` / `{userId}`).
pub const ROLE_ACL_UPDATED_EVENT: &str = "auth.role.acl_updated";
pub const USER_ACL_UPDATED_EVENT: &str = "auth.user.acl_updated";

/// A role's ACL in its tenant (`acl: None` = no row).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RoleAclState {
    pub role_id: Uuid,
    pub tenant_id: Uuid,
    pub acl: Option<AclState>,
}

impl Tracked for RoleAclState {
    const KIND: &'static str = ROLE_KIND;

    /// The role row, as `RoleState` locks it.
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        lock_row(conn, "roles", id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        let tenant: Option<Uuid> = roles::table
            .filter(roles::id.eq(id))
            .filter(roles::deleted_at.is_null())
            .select(roles::tenant_id)
            .first(conn)
            .await
            .optional()?;
        let Some(tenant) = tenant else {
            return Ok(None);
        };
        Ok(Some(Self {
            role_id: id,
            tenant_id: tenant,
            acl: state::role_acl(conn, id, tenant).await?,
        }))
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        match &self.acl {
            Some(acl) => state::write_role_acl(conn, self.role_id, acl).await,
            None => {
                diesel::delete(
                    role_acls::table
                        .filter(role_acls::role_id.eq(self.role_id))
                        .filter(role_acls::tenant_id.eq(self.tenant_id)),
                )
                .execute(conn)
                .await?;
                Ok(())
            }
        }
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        diesel::delete(role_acls::table.filter(role_acls::role_id.eq(id)))
            .execute(conn)
            .await?;
        Ok(())
    }

    fn view(&self) -> Value {
        json!({"roleId": self.role_id, "acl": self.acl.as_ref().map(AclState::view)})
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
        let ctx = AuthContext::of(actor)?;
        let role = current.or(target).map(|s| s.role_id);
        let role = role.ok_or(AuthError::RoleNotFound)?;
        let (current, target) = (
            current.and_then(|c| c.acl.as_ref()),
            target.and_then(|t| t.acl.as_ref()),
        );
        authorize::role_acl(conn, ctx, role, current, target).await
    }
}

/// Replaces a role's ACL with `acl` (validated and sanitised by the caller).
pub struct UpdateRoleAclCommand {
    pub role: Uuid,
    pub acl: AclState,
}

impl Command for UpdateRoleAclCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        ROLE_ACL_UPDATE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let Self { role, acl } = self;
            let entry = tracked::<RoleAclState, _>(conn, "Update role access", role, move |c| {
                Box::pin(async move { state::write_role_acl(c, role, &acl).await })
            })
            .await?
            .with_event(
                ROLE_ACL_UPDATED_EVENT,
                serde_json::json!({ "roleId": role }),
            );
            Ok(((), entry))
        })
    }
}

/// A user's ACL override in their tenant (`acl: None` = the role ACLs apply).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct UserAclState {
    pub user_id: Uuid,
    pub tenant_id: Uuid,
    pub acl: Option<AclState>,
}

impl Tracked for UserAclState {
    const KIND: &'static str = USER_KIND;

    /// The user row, as `UserState` locks it.
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        lock_row(conn, "users", id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        let tenant: Option<Option<Uuid>> = users::table
            .filter(users::id.eq(id))
            .filter(users::deleted_at.is_null())
            .select(users::tenant_id)
            .first(conn)
            .await
            .optional()?;
        let Some(Some(tenant)) = tenant else {
            return Ok(None);
        };
        Ok(Some(Self {
            user_id: id,
            tenant_id: tenant,
            acl: state::user_acl(conn, id, tenant).await?,
        }))
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        match &self.acl {
            Some(acl) => state::write_user_acl(conn, self.user_id, acl).await,
            None => delete_user_acl(conn, self.user_id, self.tenant_id).await,
        }
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        diesel::delete(user_acls::table.filter(user_acls::user_id.eq(id)))
            .execute(conn)
            .await?;
        Ok(())
    }

    fn view(&self) -> Value {
        json!({"userId": self.user_id, "acl": self.acl.as_ref().map(AclState::view)})
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
        let ctx = AuthContext::of(actor)?;
        let user = current.or(target).map(|s| s.user_id);
        let user = user.ok_or(AuthError::UserNotFound)?;
        let (current, target) = (
            current.and_then(|c| c.acl.as_ref()),
            target.and_then(|t| t.acl.as_ref()),
        );
        authorize::user_acl(conn, ctx, user, current, target).await
    }
}

async fn delete_user_acl(
    conn: &mut AsyncPgConnection,
    user: Uuid,
    tenant: Uuid,
) -> Result<(), AppError> {
    diesel::delete(
        user_acls::table
            .filter(user_acls::user_id.eq(user))
            .filter(user_acls::tenant_id.eq(tenant)),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Sets (`Some`) or removes (`None`) a user's ACL override in `tenant`.
pub struct UpdateUserAclCommand {
    pub user: Uuid,
    pub tenant: Uuid,
    pub acl: Option<AclState>,
}

impl Command for UpdateUserAclCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        USER_ACL_UPDATE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let Self { user, tenant, acl } = self;
            let entry = tracked::<UserAclState, _>(conn, "Update user access", user, move |c| {
                Box::pin(async move {
                    match acl {
                        Some(acl) => state::write_user_acl(c, user, &acl).await,
                        None => delete_user_acl(c, user, tenant).await,
                    }
                })
            })
            .await?
            .with_event(
                USER_ACL_UPDATED_EVENT,
                serde_json::json!({ "userId": user }),
            );
            Ok(((), entry))
        })
    }
}
