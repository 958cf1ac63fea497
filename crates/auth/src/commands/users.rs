//! Users through the resource kit (`stoa_acl::resource`): `auth.users.create`,
//! `auth.users.update` and `auth.users.delete` are the kit's one `Save`
//! command over [`UserState`] (all undoable). A delete is soft: the row is
//! kept (so logs still name the actor), marked deleted, without memberships,
//! override, sessions or reset tokens. The profile change
//! (`PUT /auth/profile`) is an `auth.users.update` too, logged but not
//! undoable ([`UpdateProfileCommand`]).

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_acl::resource::{self, Resource};
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use uuid::Uuid;

use super::account::{self, Account, account_resource};
use super::state::{self, UserState};
use super::{Tracked, USER_KIND, authorize, tracked};
use crate::error::AuthError;
use crate::queries;

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
    /// override locks it first (the ACL target too).
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
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

    /// The kit's checks with the user's rules, also when the undo removes
    /// the user (`authorize::user` with no target needs the delete feature).
    async fn authorize(
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        for state in current.into_iter().chain(target) {
            authorize::user_writable(ctx, state)?;
        }
        authorize::user(conn, ctx, current, target).await
    }
}

/// A user through the kit. The feature depends on the verb
/// (`auth.users.create|edit|delete`, told apart by the two states: a
/// delete's target is the user marked deleted) and a super admin reaches
/// every tenant's users, so the user decides steps 2–4 itself
/// ([`Resource::writable_by`]: the tenant) and the rest in
/// [`Resource::check`] (`authorize::user`: the verb's feature, the
/// super-admin account, the home organization, the grant boundary).
impl Resource for UserState {
    const TABLE: &'static str = "users";
    /// Unused: [`Resource::writable_by`] and the check decide the feature.
    const FEATURE: &'static str = "auth.users.edit";
    type Services = ();

    fn id(&self) -> Uuid {
        self.id
    }
    /// A super admin's account may have no tenant (then nil): only the
    /// kit's default rule reads this, which users do not use.
    fn tenant_id(&self) -> Uuid {
        self.tenant_id.unwrap_or_default()
    }
    fn organization(&self) -> Option<Uuid> {
        self.organization_id
    }
    fn not_found() -> AppError {
        AuthError::UserNotFound.into()
    }
    account_resource!(authorize::user_writable, authorize::user);
}

impl Account for UserState {
    const EVENTS: [&'static str; 3] = [CREATED_EVENT, UPDATED_EVENT, DELETED_EVENT];
    fn deleted(&self) -> bool {
        self.deleted
    }
    async fn save_over(
        &self,
        conn: &mut AsyncPgConnection,
        before: Option<&Self>,
    ) -> Result<(), AppError> {
        UserState::write_over(self, conn, before).await
    }
}

/// What a user write does beyond its state, in the same transaction: a new
/// password ends the user's sessions (except `keep_session`), and reset and
/// invitation links went to the old address or open the old password's
/// account, so a new e-mail or password ends them, on every route.
pub async fn after_write(
    conn: &mut AsyncPgConnection,
    before: &UserState,
    after: &UserState,
    keep_session: Option<Uuid>,
) -> Result<(), AppError> {
    let new_password = after.password_hash != before.password_hash;
    if new_password {
        queries::delete_user_sessions(conn, after.id, keep_session).await?;
    }
    if new_password || after.email != before.email {
        crate::invite::invalidate_tokens(conn, after.id).await?;
    }
    Ok(())
}

/// A user changes their own e-mail and/or password (`PUT /auth/profile`).
/// Logged, not undoable: undo never writes credentials back, so there would
/// be nothing left to undo. Not through the kit: it is one's own account,
/// written without any `auth.users.*` feature.
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
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let Self {
                user: id,
                email,
                password_hash,
                keep_session,
            } = self;
            let mut entry = tracked::<UserState, _>(conn, "Update profile", id, move |conn| {
                Box::pin(async move {
                    let before = UserState::load(conn, id)
                        .await?
                        .filter(|u| !u.deleted)
                        .ok_or(AuthError::UserNotFound)?;
                    let mut after = before.clone();
                    after.email = email;
                    if password_hash.is_some() {
                        after.password_hash = password_hash;
                    }
                    after.write_over(conn, Some(&before)).await?;
                    after_write(conn, &before, &after, keep_session).await
                })
            })
            .await?
            .with_event(UPDATED_EVENT, json!({ "id": id }));
            entry.undo = None;
            Ok(((), entry))
        })
    }
}
