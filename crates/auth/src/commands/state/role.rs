//! A role's full state, and the writes undo and redo make with it.

use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_core::AppError;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{AclState, ROLE_ACLS};
use crate::schema::{roles, user_roles, users};

/// Everything about a role that undo restores.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RoleState {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    /// The role's ACL in its tenant.
    pub acl: Option<AclState>,
    pub deleted: bool,
}

impl RoleState {
    pub async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        let row: Option<(Uuid, Uuid, String, Option<OffsetDateTime>)> = roles::table
            .filter(roles::id.eq(id))
            .select((roles::id, roles::tenant_id, roles::name, roles::deleted_at))
            .first(conn)
            .await
            .optional()?;
        let Some((id, tenant_id, name, deleted_at)) = row else {
            return Ok(None);
        };
        let acl = ROLE_ACLS.read(conn, id, tenant_id).await?;
        Ok(Some(Self {
            id,
            tenant_id,
            name,
            acl,
            deleted: deleted_at.is_some(),
        }))
    }

    pub fn view(&self) -> Value {
        json!({
            "id": self.id,
            "name": self.name,
            "tenantId": self.tenant_id,
            "acl": self.acl.as_ref().map(AclState::view),
            "deleted": self.deleted,
        })
    }

    /// Writes this state back (re-creating the row with the same id when it is gone).
    pub async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        self.write_over(conn, None).await
    }

    /// Writes this state over `before` (`None`: unknown, everything is
    /// written): the ACL only when it changed, so a rename leaves the ACL's
    /// `updatedAt` (its optimistic lock) as it was.
    pub async fn write_over(
        &self,
        conn: &mut AsyncPgConnection,
        before: Option<&Self>,
    ) -> Result<(), AppError> {
        let deleted_at = self.deleted.then(OffsetDateTime::now_utc);
        diesel::insert_into(roles::table)
            .values((
                roles::id.eq(self.id),
                roles::tenant_id.eq(self.tenant_id),
                roles::name.eq(&self.name),
                roles::deleted_at.eq(deleted_at),
            ))
            .on_conflict(roles::id)
            .do_update()
            .set((
                roles::tenant_id.eq(excluded(roles::tenant_id)),
                roles::name.eq(excluded(roles::name)),
                roles::deleted_at.eq(excluded(roles::deleted_at)),
            ))
            .execute(conn)
            .await?;
        if before.is_some_and(|b| b.acl == self.acl) {
            return Ok(());
        }
        ROLE_ACLS.replace(conn, self.id, self.acl.as_ref()).await
    }
}

/// Live users holding `role`.
pub async fn role_user_count(conn: &mut AsyncPgConnection, role: Uuid) -> Result<i64, AppError> {
    Ok(user_roles::table
        .inner_join(users::table)
        .filter(user_roles::role_id.eq(role))
        .filter(users::deleted_at.is_null())
        .count()
        .get_result(conn)
        .await?)
}
