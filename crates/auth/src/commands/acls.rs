//! ACL edits through the resource kit: `auth.roles.acl.update` and
//! `auth.users.acl.update` are the kit's one `Save` command over one ACL
//! target, [`Acl<O>`], for either owner ([`RoleOwner`], [`UserOwner`]).
//! (The reference writes ACLs outside the command bus; stoa logs them like
//! every other mutation, and undo restores the previous grants.)

use std::marker::PhantomData;

use diesel_async::AsyncPgConnection;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_acl::resource::{self, Resource};
use stoa_core::AppError;
use stoa_core::command::LogEntry;
use time::OffsetDateTime;
use uuid::Uuid;

use super::state::{AclState, AclTable, ROLE_ACLS, RoleState, USER_ACLS, UserState};
use super::{ROLE_KIND, Tracked, USER_KIND, authorize, entry};
use crate::error::AuthError;

pub const ROLE_ACL_UPDATE: &str = "auth.roles.acl.update";
pub const USER_ACL_UPDATE: &str = "auth.users.acl.update";
/// Domain events (payload `{roleId}` / `{userId}`).
pub const ROLE_ACL_UPDATED_EVENT: &str = "auth.role.acl_updated";
pub const USER_ACL_UPDATED_EVENT: &str = "auth.user.acl_updated";
/// What every ACL edit needs.
pub const MANAGE: &str = "auth.acl.manage";

/// Who an ACL belongs to: a role or a user (its override). Everything the
/// two kinds of ACL differ in; the rest is [`Acl`]'s, once.
pub trait AclOwner: Clone + std::fmt::Debug + PartialEq + Send + Sync + 'static {
    /// The action log's resource kind (the owner's).
    const KIND: &'static str;
    /// The owner's row, which every writer of the owner and its ACL locks.
    const TABLE: &'static str;
    /// The owner's ACL in its tenant, read with the lock: an expression of
    /// the owner's row (constants of the module, never input).
    const VERSION: &'static str;
    const ACLS: AclTable;
    const COMMAND: &'static str;
    const LABEL: &'static str;
    const EVENT: &'static str;
    /// The owner's id in the log view and the event (`roleId`, `userId`).
    const ID_KEY: &'static str;
    fn not_found() -> AppError;
    /// The owner's tenant, when it is live and has one.
    fn tenant(
        conn: &mut AsyncPgConnection,
        id: Uuid,
    ) -> impl Future<Output = Result<Option<Uuid>, AppError>> + Send;
    /// The owner's rules for an ACL going from `current` to `target`
    /// (`authorize::role_acl`, `authorize::user_acl`).
    fn check<'a>(
        conn: &'a mut AsyncPgConnection,
        ctx: &'a AuthContext,
        owner: Uuid,
        current: Option<&'a AclState>,
        target: Option<&'a AclState>,
    ) -> impl Future<Output = Result<(), AppError>> + Send + 'a;
}

/// A role's ACL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleOwner;

/// A user's ACL override (`acl: None`: the role ACLs apply).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserOwner;

impl AclOwner for RoleOwner {
    const KIND: &'static str = ROLE_KIND;
    const TABLE: &'static str = "roles";
    const VERSION: &'static str = "(SELECT a.updated_at FROM role_acls a \
         WHERE a.role_id = roles.id AND a.tenant_id = roles.tenant_id)";
    const ACLS: AclTable = ROLE_ACLS;
    const COMMAND: &'static str = ROLE_ACL_UPDATE;
    const LABEL: &'static str = "Update role access";
    const EVENT: &'static str = ROLE_ACL_UPDATED_EVENT;
    const ID_KEY: &'static str = "roleId";
    fn not_found() -> AppError {
        AuthError::RoleNotFound.into()
    }
    async fn tenant(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Uuid>, AppError> {
        let role = RoleState::load(conn, id).await?;
        Ok(role.filter(|r| !r.deleted).map(|r| r.tenant_id))
    }
    async fn check(
        conn: &mut AsyncPgConnection,
        ctx: &AuthContext,
        owner: Uuid,
        current: Option<&AclState>,
        target: Option<&AclState>,
    ) -> Result<(), AppError> {
        authorize::role_acl(conn, ctx, owner, current, target).await
    }
}

impl AclOwner for UserOwner {
    const KIND: &'static str = USER_KIND;
    const TABLE: &'static str = "users";
    const VERSION: &'static str = "(SELECT a.updated_at FROM user_acls a \
         WHERE a.user_id = users.id AND a.tenant_id = users.tenant_id)";
    const ACLS: AclTable = USER_ACLS;
    const COMMAND: &'static str = USER_ACL_UPDATE;
    const LABEL: &'static str = "Update user access";
    const EVENT: &'static str = USER_ACL_UPDATED_EVENT;
    const ID_KEY: &'static str = "userId";
    fn not_found() -> AppError {
        AuthError::UserNotFound.into()
    }
    async fn tenant(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Uuid>, AppError> {
        let user = UserState::load(conn, id).await?;
        Ok(user.filter(|u| !u.deleted).and_then(|u| u.tenant_id))
    }
    async fn check(
        conn: &mut AsyncPgConnection,
        ctx: &AuthContext,
        owner: Uuid,
        current: Option<&AclState>,
        target: Option<&AclState>,
    ) -> Result<(), AppError> {
        authorize::user_acl(conn, ctx, owner, current, target).await
    }
}

/// An owner's ACL in its tenant (`acl: None` = no row). Undo payloads of
/// entries written before the two kinds were one state name the owner
/// `roleId` / `userId`; they still read.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", bound = "")]
pub struct Acl<O: AclOwner> {
    #[serde(alias = "roleId", alias = "userId")]
    pub owner_id: Uuid,
    pub tenant_id: Uuid,
    pub acl: Option<AclState>,
    #[serde(skip)]
    pub owner: PhantomData<O>,
}

pub type RoleAcl = Acl<RoleOwner>;
pub type UserAcl = Acl<UserOwner>;

impl<O: AclOwner> Acl<O> {
    /// The ACL `acl` of `owner` in `tenant`.
    pub fn new(owner_id: Uuid, tenant_id: Uuid, acl: Option<AclState>) -> Self {
        Self {
            owner_id,
            tenant_id,
            acl,
            owner: PhantomData,
        }
    }

    /// When the ACL last changed (`None`: no row): its optimistic lock.
    pub async fn updated_at(
        &self,
        conn: &mut AsyncPgConnection,
    ) -> Result<Option<OffsetDateTime>, AppError> {
        O::ACLS
            .updated_at(conn, self.owner_id, self.tenant_id)
            .await
    }
}

impl<O: AclOwner> Tracked for Acl<O> {
    const KIND: &'static str = O::KIND;

    /// The owner's row, as the owner's own state locks it.
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        let Some(tenant) = O::tenant(conn, id).await? else {
            return Ok(None);
        };
        let acl = O::ACLS.read(conn, id, tenant).await?;
        Ok(Some(Self::new(id, tenant, acl)))
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        match &self.acl {
            Some(acl) => O::ACLS.write(conn, self.owner_id, acl).await,
            None => {
                O::ACLS
                    .remove(conn, self.owner_id, Some(self.tenant_id))
                    .await
            }
        }
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        O::ACLS.remove(conn, id, None).await
    }

    fn view(&self) -> Value {
        let mut view = json!({"acl": self.acl.as_ref().map(AclState::view)});
        view[O::ID_KEY] = json!(self.owner_id);
        view
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    fn keep_protected(&mut self, current: Option<&Self>) -> Vec<&'static str> {
        authorize::keep_flag_only(self.acl.as_mut(), current.and_then(|c| c.acl.as_ref()))
    }

    stoa_acl::kit_authorize!();
}

/// The ACL target through the kit: locked with its owner's row, versioned
/// by the ACL row's `updatedAt`, `auth.acl.manage` in the owner's tenant
/// ([`Resource::writable_by`]: a super admin reaches every tenant); the
/// owner's reach and the grant boundary are the owner's check.
impl<O: AclOwner> Resource for Acl<O> {
    const TABLE: &'static str = O::TABLE;
    const VERSION: Option<&'static str> = Some(O::VERSION);
    const FEATURE: &'static str = MANAGE;
    type Services = ();

    fn id(&self) -> Uuid {
        self.owner_id
    }
    fn tenant_id(&self) -> Uuid {
        self.tenant_id
    }
    fn organization(&self) -> Option<Uuid> {
        None
    }
    fn not_found() -> AppError {
        O::not_found()
    }
    fn writable_by(&self, ctx: &AuthContext) -> Option<Result<(), AppError>> {
        if !ctx.may_target_tenant(self.tenant_id) {
            return Some(Err(O::not_found()));
        }
        Some(ctx.require(MANAGE))
    }
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        let Some(any) = after.or(before) else {
            return LogEntry::default();
        };
        let mut payload = json!({});
        payload[O::ID_KEY] = json!(any.owner_id);
        entry(label, any.owner_id, before, after).with_event(O::EVENT, payload)
    }
    async fn check(
        conn: &mut AsyncPgConnection,
        ctx: &AuthContext,
        _: Option<&()>,
        target: &Self,
        previous: Option<&Self>,
    ) -> Result<(), AppError> {
        let current = previous.and_then(|p| p.acl.as_ref());
        O::check(conn, ctx, target.owner_id, current, target.acl.as_ref()).await
    }
}
