//! Full states of users, roles and ACLs: what undo and redo write back.
//!
//! A command stores the state before and after it ran as its undo payload
//! (`{before, after}`; `null` = the row did not exist). These carry secrets
//! (password hashes), so they stay in the undo payload; the snapshots shown in
//! the action log are [`UserState::view`] / [`RoleState::view`]. Users are
//! `user.rs`, roles `role.rs`; both carry their ACL as an [`AclState`],
//! stored in one [`AclTable`] each.

mod role;
mod user;

use diesel::QueryableByName;
use diesel::sql_types::{Array, Bool, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_core::AppError;
use time::OffsetDateTime;
use uuid::Uuid;

pub use role::{RoleState, role_user_count};
pub use user::{UserState, end_access, erase_user, set_user_roles};

/// An ACL row (role or user) in one tenant.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AclState {
    pub tenant_id: Uuid,
    pub features: Vec<String>,
    pub is_super_admin: bool,
    /// `None` = every organization of the tenant.
    pub organizations: Option<Vec<Uuid>>,
}

impl AclState {
    pub fn view(&self) -> Value {
        json!({
            "isSuperAdmin": self.is_super_admin,
            "features": self.features,
            "organizations": self.organizations,
        })
    }
}

/// Where the ACLs of one kind of owner live: one row per owner and tenant
/// (`role_acls` keyed by `role_id`, users' overrides `user_acls` by
/// `user_id`). Both names are constants of the module, never input.
#[derive(Clone, Copy, Debug)]
pub struct AclTable {
    pub table: &'static str,
    pub owner: &'static str,
}

pub const ROLE_ACLS: AclTable = AclTable {
    table: "role_acls",
    owner: "role_id",
};
pub const USER_ACLS: AclTable = AclTable {
    table: "user_acls",
    owner: "user_id",
};

#[derive(QueryableByName)]
struct AclRow {
    #[diesel(sql_type = Array<Text>)]
    features: Vec<String>,
    #[diesel(sql_type = Bool)]
    is_super_admin: bool,
    #[diesel(sql_type = Nullable<Array<diesel::sql_types::Uuid>>)]
    organizations: Option<Vec<Uuid>>,
}

#[derive(QueryableByName)]
struct UpdatedAt {
    #[diesel(sql_type = Timestamptz)]
    updated_at: OffsetDateTime,
}

impl AclTable {
    /// The owner's ACL in `tenant`.
    pub async fn read(
        self,
        conn: &mut AsyncPgConnection,
        owner: Uuid,
        tenant: Uuid,
    ) -> Result<Option<AclState>, AppError> {
        let sql = format!(
            "SELECT features, is_super_admin, organizations FROM {} \
             WHERE {} = $1 AND tenant_id = $2",
            self.table, self.owner
        );
        let rows: Vec<AclRow> = diesel::sql_query(sql)
            .bind::<diesel::sql_types::Uuid, _>(owner)
            .bind::<diesel::sql_types::Uuid, _>(tenant)
            .load(conn)
            .await?;
        Ok(rows.into_iter().next().map(|r| AclState {
            tenant_id: tenant,
            features: r.features,
            is_super_admin: r.is_super_admin,
            organizations: r.organizations,
        }))
    }

    /// When the owner's ACL in `tenant` last changed (`None`: no row).
    pub async fn updated_at(
        self,
        conn: &mut AsyncPgConnection,
        owner: Uuid,
        tenant: Uuid,
    ) -> Result<Option<OffsetDateTime>, AppError> {
        let sql = format!(
            "SELECT updated_at FROM {} WHERE {} = $1 AND tenant_id = $2",
            self.table, self.owner
        );
        let rows: Vec<UpdatedAt> = diesel::sql_query(sql)
            .bind::<diesel::sql_types::Uuid, _>(owner)
            .bind::<diesel::sql_types::Uuid, _>(tenant)
            .load(conn)
            .await?;
        Ok(rows.into_iter().next().map(|r| r.updated_at))
    }

    /// Upserts the owner's ACL in `acl.tenant_id`.
    pub async fn write(
        self,
        conn: &mut AsyncPgConnection,
        owner: Uuid,
        acl: &AclState,
    ) -> Result<(), AppError> {
        let sql = format!(
            "INSERT INTO {table} ({owner}, tenant_id, features, is_super_admin, organizations) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT ({owner}, tenant_id) DO UPDATE SET \
             features = EXCLUDED.features, is_super_admin = EXCLUDED.is_super_admin, \
             organizations = EXCLUDED.organizations",
            table = self.table,
            owner = self.owner
        );
        diesel::sql_query(sql)
            .bind::<diesel::sql_types::Uuid, _>(owner)
            .bind::<diesel::sql_types::Uuid, _>(acl.tenant_id)
            .bind::<Array<Text>, _>(&acl.features)
            .bind::<Bool, _>(acl.is_super_admin)
            .bind::<Nullable<Array<diesel::sql_types::Uuid>>, _>(&acl.organizations)
            .execute(conn)
            .await?;
        Ok(())
    }

    /// Removes the owner's ACL in `tenant` (`None`: in every tenant).
    pub async fn remove(
        self,
        conn: &mut AsyncPgConnection,
        owner: Uuid,
        tenant: Option<Uuid>,
    ) -> Result<(), AppError> {
        let sql = format!(
            "DELETE FROM {} WHERE {} = $1 AND ($2::uuid IS NULL OR tenant_id = $2)",
            self.table, self.owner
        );
        diesel::sql_query(sql)
            .bind::<diesel::sql_types::Uuid, _>(owner)
            .bind::<Nullable<diesel::sql_types::Uuid>, _>(tenant)
            .execute(conn)
            .await?;
        Ok(())
    }

    /// Replaces every ACL of the owner with `acl` (none: removed).
    pub async fn replace(
        self,
        conn: &mut AsyncPgConnection,
        owner: Uuid,
        acl: Option<&AclState>,
    ) -> Result<(), AppError> {
        self.remove(conn, owner, None).await?;
        match acl {
            Some(acl) => self.write(conn, owner, acl).await,
            None => Ok(()),
        }
    }
}
