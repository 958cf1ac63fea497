//! Who runs a command: the [`Actor`] and the authenticated [`Principal`]
//! behind it.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use uuid::Uuid;

use super::WriteGuards;

/// The authenticated caller behind an [`Actor`], as the module that
/// authenticated it knows it (stoa-acl's `AuthContext`). Core only needs to
/// know whether it is a super admin; handlers that authorize a change (undo and
/// redo above all) downcast it to the concrete type they understand.
pub trait Principal: Any + Send + Sync + fmt::Debug {
    fn is_super_admin(&self) -> bool;
    /// Whether the caller may act on records of `organization` (`None` = no
    /// organization: tenant-level records) whatever its selection: callers
    /// restricted to some organizations stay inside them.
    fn may_act_in(&self, organization: Option<Uuid>) -> bool {
        let _ = organization;
        true
    }
}

/// Who runs a command, and in which scope.
#[derive(Clone, Debug, Default)]
pub struct Actor {
    pub user_id: Option<Uuid>,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    /// `api`, `ui` or `system`.
    pub source: &'static str,
    /// The caller's identity and grants, for commands and undo handlers that
    /// authorize what they write (`None` for system work).
    pub principal: Option<Arc<dyn Principal>>,
    /// The write guards every command, undo and redo of this actor passes
    /// (registered at startup; empty for system work unless attached with
    /// [`Actor::with_guards`]).
    pub guards: WriteGuards,
}

impl Actor {
    pub fn api(
        user_id: Option<Uuid>,
        tenant_id: Option<Uuid>,
        organization_id: Option<Uuid>,
    ) -> Self {
        Self {
            user_id,
            tenant_id,
            organization_id,
            source: "api",
            principal: None,
            guards: WriteGuards::default(),
        }
    }

    /// The same actor passing `guards` on every write.
    pub fn with_guards(mut self, guards: WriteGuards) -> Self {
        self.guards = guards;
        self
    }

    /// The same actor carrying `principal`.
    pub fn with_principal(mut self, principal: Arc<dyn Principal>) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Whether the caller is a super admin (`false` without a principal).
    pub fn is_super_admin(&self) -> bool {
        self.principal.as_ref().is_some_and(|p| p.is_super_admin())
    }

    /// Whether the caller may act on records of `organization` (see
    /// [`Principal::may_act_in`]; `true` for system work, which carries no principal).
    pub fn may_act_in(&self, organization: Option<Uuid>) -> bool {
        self.principal
            .as_ref()
            .is_none_or(|p| p.may_act_in(organization))
    }

    /// The principal as `T`, when it is one.
    pub fn principal_as<T: Principal>(&self) -> Option<&T> {
        let any: &dyn Any = self.principal.as_deref()?;
        any.downcast_ref::<T>()
    }
}
