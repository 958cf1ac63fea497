//! Auth mutations as commands. `auth.users.update` (the profile change) is
//! undoable: undo restores the previous e-mail and password hash.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::json;
use stoa_core::AppError;
use stoa_core::command::{ActionLog, Actor, Command, CommandHandler, LogEntry};
use uuid::Uuid;

use crate::schema::users;
use crate::service;

pub const USER_KIND: &str = "auth.user";

/// What undo needs to put a user's credentials back (kept out of the
/// displayed snapshots).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Credentials {
    email: String,
    password_hash: Option<String>,
}

async fn credentials(conn: &mut AsyncPgConnection, user: Uuid) -> Result<Credentials, AppError> {
    let (email, password_hash): (String, Option<String>) = users::table
        .filter(users::id.eq(user))
        .filter(users::deleted_at.is_null())
        .select((users::email, users::password_hash))
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| AppError::not_found("User not found"))?;
    Ok(Credentials {
        email,
        password_hash,
    })
}

async fn apply(conn: &mut AsyncPgConnection, user: Uuid, c: &Credentials) -> Result<(), AppError> {
    diesel::update(users::table.filter(users::id.eq(user)))
        .set((
            users::email.eq(&c.email),
            users::password_hash.eq(&c.password_hash),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

fn entry(user: Uuid, before: &Credentials, after: &Credentials) -> LogEntry {
    let view = |c: &Credentials| json!({"id": user, "email": c.email, "passwordChanged": c.password_hash != before.password_hash});
    LogEntry {
        action_label: Some("Update user".into()),
        resource_kind: Some(USER_KIND.into()),
        resource_id: Some(user.to_string()),
        snapshot_before: Some(json!({"id": user, "email": before.email})),
        snapshot_after: Some(view(after)),
        undo: Some(json!({"before": before, "after": after})),
        ..Default::default()
    }
}

/// A user changes their own e-mail and/or password. A password change ends the
/// user's other sessions (`keep_session` survives).
pub struct UpdateProfileCommand {
    pub user: Uuid,
    pub email: String,
    pub password_hash: Option<String>,
    pub keep_session: Option<Uuid>,
}

impl Command for UpdateProfileCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        "auth.users.update"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let before = credentials(conn, self.user).await?;
            let after = Credentials {
                email: self.email,
                password_hash: self.password_hash.clone().or(before.password_hash.clone()),
            };
            apply(conn, self.user, &after).await?;
            if self.password_hash.is_some() {
                service::delete_user_sessions(conn, self.user, self.keep_session).await?;
            }
            Ok(((), entry(self.user, &before, &after)))
        })
    }
}

#[derive(Deserialize)]
struct Payload {
    before: Credentials,
    after: Credentials,
}

fn payload(log: &ActionLog) -> Result<(Uuid, Payload), AppError> {
    let user = log.resource_id.as_deref().and_then(|id| id.parse().ok());
    let payload = log
        .undo_payload()
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok());
    match (user, payload) {
        (Some(user), Some(payload)) => Ok((user, payload)),
        _ => Err(AppError::bad_request("Undo failed")),
    }
}

/// Undo/redo of `auth.users.update`.
pub struct UserUpdateHandler;

impl CommandHandler for UserUpdateHandler {
    fn command_id(&self) -> &'static str {
        "auth.users.update"
    }
    fn undo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(), AppError>> {
        Box::pin(async move {
            let (user, p) = payload(log)?;
            if service::email_taken(conn, log.tenant_id, &p.before.email, user).await? {
                return Err(AppError::bad_request("Email already in use"));
            }
            apply(conn, user, &p.before).await
        })
    }
    fn redo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<LogEntry, AppError>> {
        Box::pin(async move {
            let (user, p) = payload(log)?;
            let current = credentials(conn, user).await?;
            apply(conn, user, &p.after).await?;
            Ok(entry(user, &current, &p.after))
        })
    }
}

/// The undo/redo handlers of the auth module.
pub fn handlers() -> Vec<Arc<dyn CommandHandler>> {
    vec![Arc::new(UserUpdateHandler)]
}
