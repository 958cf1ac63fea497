//! User commands: `auth.users.create|update|delete` (all undoable). The
//! profile change (`PUT /auth/profile`) is an `auth.users.update` too.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use super::state::{self, UserState};
use super::{Tracked, USER_KIND, authorize, entry, lock_row, tracked};
use crate::error::AuthError;
use crate::queries;
use crate::schema::{user_acls, users};

pub const CREATE: &str = "auth.users.create";
pub const UPDATE: &str = "auth.users.update";
pub const DELETE: &str = "auth.users.delete";
/// Domain events (payload `{id}`; the envelope carries the rest).
pub const CREATED_EVENT: &str = "auth.user.created";
pub const UPDATED_EVENT: &str = "auth.user.updated";
pub const DELETED_EVENT: &str = "auth.user.deleted";

impl Tracked for UserState {
    const KIND: &'static str = USER_KIND;

    /// The user row: every writer of a user, its memberships and its ACL
    /// override locks it first (`UserAclState` too).
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        lock_row(conn, "users", id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        UserState::load(conn, id).await
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        UserState::restore(self, conn).await
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        state::erase_user(conn, id).await
    }

    fn view(&self) -> Value {
        UserState::view(self)
    }

    fn tenant(&self) -> Option<Uuid> {
        self.tenant_id
    }

    fn parent(&self) -> Option<(&'static str, String)> {
        self.organization_id
            .map(|o| ("directory.organization", o.to_string()))
    }

    /// E-mail, password hash and the super-admin flag are never written back:
    /// undoing a change must not revive an old password or address, nor hand
    /// back a privilege. A user re-created by redo gets no password.
    fn keep_protected(&mut self, current: Option<&Self>) -> Vec<&'static str> {
        let mut kept = Vec::new();
        match current {
            Some(c) => {
                if self.email != c.email {
                    self.email = c.email.clone();
                    kept.push("email");
                }
                if self.password_hash != c.password_hash {
                    self.password_hash = c.password_hash.clone();
                    kept.push("password");
                }
            }
            None if self.password_hash.is_some() => {
                self.password_hash = None;
                kept.push("password");
            }
            None => {}
        }
        let current_acl = current.and_then(|c| c.acl.as_ref());
        if authorize::keep_super_admin_flag(self.acl.as_mut(), current_acl) {
            kept.push("isSuperAdmin");
        }
        kept
    }

    async fn authorize(
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        authorize::user(conn, AuthContext::of(actor)?, current, target).await
    }
}

/// Creates a confirmed user with the given roles.
pub struct CreateUserCommand {
    pub tenant: Uuid,
    pub organization: Uuid,
    /// Normalised (trimmed, lower-cased).
    pub email: String,
    pub name: Option<String>,
    pub password_hash: Option<String>,
    pub role_ids: Vec<Uuid>,
}

impl Command for CreateUserCommand {
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
            let id: Uuid = diesel::insert_into(users::table)
                .values((
                    users::tenant_id.eq(self.tenant),
                    users::organization_id.eq(self.organization),
                    users::email.eq(&self.email),
                    users::name.eq(&self.name),
                    users::password_hash.eq(&self.password_hash),
                    users::is_confirmed.eq(true),
                ))
                .returning(users::id)
                .get_result(conn)
                .await?;
            state::set_user_roles(conn, id, &self.role_ids).await?;
            let after = UserState::load(conn, id).await?;
            let entry = entry("Create user", id, None, after.as_ref())
                .with_event(CREATED_EVENT, serde_json::json!({ "id": id }));
            Ok((id, entry))
        })
    }
}

/// What an update changes; `None` leaves a field as it is.
#[derive(Clone, Debug, Default)]
pub struct UserChanges {
    pub email: Option<String>,
    /// `Some(None)` clears the name.
    pub name: Option<Option<String>>,
    pub password_hash: Option<String>,
    /// A new home organization and its tenant.
    pub organization: Option<(Uuid, Uuid)>,
    /// Replaces the role memberships.
    pub role_ids: Option<Vec<Uuid>>,
}

/// Updates a user. A password change ends the user's sessions (except
/// `keep_session`); a move to another tenant drops the memberships and the ACL
/// override of the old tenant unless new roles are given.
pub struct UpdateUserCommand {
    pub id: Uuid,
    pub changes: UserChanges,
    pub keep_session: Option<Uuid>,
    pub label: &'static str,
}

impl Command for UpdateUserCommand {
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
            let id = self.id;
            let keep = self.keep_session;
            let c = self.changes;
            let entry = tracked::<UserState, _>(conn, self.label, id, move |conn| {
                Box::pin(async move { apply(conn, id, c, keep).await })
            })
            .await?
            .with_event(UPDATED_EVENT, serde_json::json!({ "id": id }));
            Ok(((), entry))
        })
    }
}

async fn apply(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    c: UserChanges,
    keep_session: Option<Uuid>,
) -> Result<(), AppError> {
    let current = UserState::load(conn, id)
        .await?
        .filter(|u| !u.deleted)
        .ok_or(AuthError::UserNotFound)?;
    let email = c.email.unwrap_or(current.email.clone());
    let name = c.name.unwrap_or(current.name.clone());
    let hash = c.password_hash.clone().or(current.password_hash.clone());
    let (organization, tenant) = match c.organization {
        Some((org, tenant)) => (Some(org), Some(tenant)),
        None => (current.organization_id, current.tenant_id),
    };
    diesel::update(users::table.filter(users::id.eq(id)))
        .set((
            users::email.eq(&email),
            users::name.eq(&name),
            users::password_hash.eq(&hash),
            users::organization_id.eq(organization),
            users::tenant_id.eq(tenant),
        ))
        .execute(conn)
        .await?;
    let moved = tenant != current.tenant_id;
    match c.role_ids {
        Some(roles) => state::set_user_roles(conn, id, &roles).await?,
        None if moved => state::set_user_roles(conn, id, &[]).await?,
        None => {}
    }
    if moved {
        diesel::delete(user_acls::table.filter(user_acls::user_id.eq(id)))
            .execute(conn)
            .await?;
    }
    if c.password_hash.is_some() {
        queries::delete_user_sessions(conn, id, keep_session).await?;
    }
    // Reset and invitation links went to the old address or open the old
    // password's account: a new e-mail or password ends them, on every route.
    if c.password_hash.is_some() || email != current.email {
        crate::invite::invalidate_tokens(conn, id).await?;
    }
    Ok(())
}

/// Deletes a user: the row is kept (so logs still name the actor) but marked
/// deleted; memberships, the ACL override, sessions and reset tokens go.
pub struct DeleteUserCommand {
    pub id: Uuid,
}

impl Command for DeleteUserCommand {
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
            let entry = tracked::<UserState, _>(conn, "Delete user", id, move |conn| {
                Box::pin(async move {
                    let updated = diesel::update(
                        users::table
                            .filter(users::id.eq(id))
                            .filter(users::deleted_at.is_null()),
                    )
                    .set(users::deleted_at.eq(OffsetDateTime::now_utc()))
                    .execute(conn)
                    .await?;
                    if updated == 0 {
                        return Err(AuthError::UserNotFound.into());
                    }
                    state::set_user_roles(conn, id, &[]).await?;
                    diesel::delete(user_acls::table.filter(user_acls::user_id.eq(id)))
                        .execute(conn)
                        .await?;
                    state::end_access(conn, id).await
                })
            })
            .await?
            .with_event(DELETED_EVENT, serde_json::json!({ "id": id }));
            Ok(((), entry))
        })
    }
}

/// A user changes their own e-mail and/or password (`PUT /auth/profile`).
/// Logged, not undoable: undo never writes credentials back, so there would
/// be nothing left to undo.
pub struct UpdateProfileCommand {
    pub user: Uuid,
    pub email: String,
    pub password_hash: Option<String>,
    pub keep_session: Option<Uuid>,
}

impl Command for UpdateProfileCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        UPDATE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        let command = UpdateUserCommand {
            id: self.user,
            changes: UserChanges {
                email: Some(self.email),
                password_hash: self.password_hash,
                ..Default::default()
            },
            keep_session: self.keep_session,
            label: "Update profile",
        };
        Box::pin(async move {
            let ((), mut entry) = Command::execute(command, conn, actor).await?;
            entry.undo = None;
            Ok(((), entry))
        })
    }
}
