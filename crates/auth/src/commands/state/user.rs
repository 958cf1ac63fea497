//! A user's full state, and the writes undo and redo make with it.

use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_core::AppError;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{AclState, USER_ACLS};
use crate::queries::UserRow;
use crate::schema::{roles, user_roles, users};

/// Everything about a user that undo restores.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct UserState {
    pub id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub email: String,
    pub name: Option<String>,
    pub password_hash: Option<String>,
    pub is_confirmed: bool,
    pub is_active: bool,
    pub role_ids: Vec<Uuid>,
    /// The user's ACL override in its tenant.
    pub acl: Option<AclState>,
    pub deleted: bool,
}

impl UserState {
    /// Loads a user (deleted ones too); `None` when there is no such row.
    pub async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        let row: Option<(UserRow, Option<OffsetDateTime>)> = users::table
            .filter(users::id.eq(id))
            .select((UserRow::as_select(), users::deleted_at))
            .first(conn)
            .await
            .optional()?;
        let Some((user, deleted)) = row else {
            return Ok(None);
        };
        let id = user.id;
        let role_ids: Vec<Uuid> = user_roles::table
            .filter(user_roles::user_id.eq(id))
            .order(user_roles::role_id.asc())
            .select(user_roles::role_id)
            .load(conn)
            .await?;
        let acl = match user.tenant_id {
            Some(tenant) => USER_ACLS.read(conn, id, tenant).await?,
            None => None,
        };
        Ok(Some(Self {
            id,
            tenant_id: user.tenant_id,
            organization_id: user.organization_id,
            email: user.email,
            name: user.name,
            password_hash: user.password_hash,
            is_confirmed: user.is_confirmed,
            is_active: user.is_active,
            role_ids,
            acl,
            deleted: deleted.is_some(),
        }))
    }

    /// The snapshot shown in the action log (no secrets).
    pub fn view(&self) -> Value {
        json!({
            "id": self.id,
            "email": self.email,
            "name": self.name,
            "tenantId": self.tenant_id,
            "organizationId": self.organization_id,
            "roleIds": self.role_ids,
            "isConfirmed": self.is_confirmed,
            "hasPassword": self.password_hash.is_some(),
            // A marker that changes with the hash: the log shows a changed
            // `password` with both values redacted, and the marker itself is
            // dropped from stored snapshots (`diff::SECRET_FIELDS`).
            "password": self.password_hash.as_deref().map(password_marker),
            "acl": self.acl.as_ref().map(AclState::view),
            "deleted": self.deleted,
        })
    }

    /// Writes this state back: the row (re-created with the same id when it is
    /// gone), its role memberships and its ACL override.
    pub async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        self.write_over(conn, None).await
    }

    /// Writes this state over `before` (`None`: unknown, everything is
    /// written): memberships and override only when they changed, so an
    /// edit of the name leaves the override's `updatedAt` (its optimistic
    /// lock) as it was; a deleted user loses sessions and reset tokens.
    pub async fn write_over(
        &self,
        conn: &mut AsyncPgConnection,
        before: Option<&Self>,
    ) -> Result<(), AppError> {
        let deleted_at = self.deleted.then(OffsetDateTime::now_utc);
        diesel::insert_into(users::table)
            .values((
                users::id.eq(self.id),
                users::tenant_id.eq(self.tenant_id),
                users::organization_id.eq(self.organization_id),
                users::email.eq(&self.email),
                users::name.eq(&self.name),
                users::password_hash.eq(&self.password_hash),
                users::is_confirmed.eq(self.is_confirmed),
                users::is_active.eq(self.is_active),
                users::deleted_at.eq(deleted_at),
            ))
            .on_conflict(users::id)
            .do_update()
            .set((
                users::tenant_id.eq(excluded(users::tenant_id)),
                users::organization_id.eq(excluded(users::organization_id)),
                users::email.eq(excluded(users::email)),
                users::name.eq(excluded(users::name)),
                users::password_hash.eq(excluded(users::password_hash)),
                users::is_confirmed.eq(excluded(users::is_confirmed)),
                users::is_active.eq(excluded(users::is_active)),
                users::deleted_at.eq(excluded(users::deleted_at)),
            ))
            .execute(conn)
            .await?;
        if before.is_none_or(|b| b.role_ids != self.role_ids) {
            set_user_roles(conn, self.id, &self.role_ids).await?;
        }
        if before.is_none_or(|b| b.acl != self.acl) {
            USER_ACLS.replace(conn, self.id, self.acl.as_ref()).await?;
        }
        if self.deleted {
            end_access(conn, self.id).await?;
        }
        Ok(())
    }
}

fn password_marker(hash: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(hash.as_bytes())[..8])
}

/// Removes a user row created by a command being undone (memberships, ACLs
/// and sessions go with it through the foreign keys).
pub async fn erase_user(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
    diesel::delete(users::table.filter(users::id.eq(id)))
        .execute(conn)
        .await?;
    Ok(())
}

/// Replaces a user's role memberships (roles that no longer exist are skipped).
pub async fn set_user_roles(
    conn: &mut AsyncPgConnection,
    user: Uuid,
    role_ids: &[Uuid],
) -> Result<(), AppError> {
    diesel::delete(
        user_roles::table
            .filter(user_roles::user_id.eq(user))
            .filter(user_roles::role_id.ne_all(role_ids)),
    )
    .execute(conn)
    .await?;
    if role_ids.is_empty() {
        return Ok(());
    }
    let live: Vec<Uuid> = roles::table
        .filter(roles::id.eq_any(role_ids))
        .filter(roles::deleted_at.is_null())
        .select(roles::id)
        .load(conn)
        .await?;
    let rows: Vec<_> = live
        .iter()
        .map(|r| (user_roles::user_id.eq(user), user_roles::role_id.eq(*r)))
        .collect();
    diesel::insert_into(user_roles::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(())
}

/// Ends everything a deleted user could still use: sessions and unused
/// reset/invite tokens.
pub async fn end_access(conn: &mut AsyncPgConnection, user: Uuid) -> Result<(), AppError> {
    use crate::schema::{password_resets, sessions};
    diesel::delete(sessions::table.filter(sessions::user_id.eq(user)))
        .execute(conn)
        .await?;
    diesel::delete(password_resets::table.filter(password_resets::user_id.eq(user)))
        .execute(conn)
        .await?;
    Ok(())
}
