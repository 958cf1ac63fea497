//! The organization-scope boundary, and the caller as the command bus sees it.
//!
//! An administrator whose ACL names some organizations (with their
//! descendants: `ResolvedAcl::allowed_organization_ids`) is *restricted*. Every
//! write keeps each organization it involves inside that set: the records it
//! changes, the organizations it moves or re-parents, the organization scope
//! of a role it assigns and of an ACL it writes. "No organization" — the tenant
//! root, a tenant-wide grant — is reachable only by unrestricted callers. One
//! set of checks here, used by directory, accounts, API keys and every later
//! module (docs/security.md).

use std::sync::Arc;

use actix_web::http::StatusCode;
use stoa_core::AppError;
use stoa_core::command::{Actor, Principal};
use uuid::Uuid;

use crate::context::AuthContext;

/// Where a caller works: the tenant, and the organizations it may see
/// (`None` = the whole tenant, including records without an organization).
/// The read-side counterpart of the write checks below; modules filter their
/// queries by it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    pub tenant_id: Uuid,
    pub visible_organizations: Option<Vec<Uuid>>,
}

impl Scope {
    /// The caller's scope; 403 without a tenant.
    pub fn of(ctx: &AuthContext) -> Result<Self, AppError> {
        Ok(Self {
            tenant_id: ctx.tenant()?,
            visible_organizations: ctx.acl.visible_organization_ids.clone(),
        })
    }

    /// Whether a record of organization `org` is inside the scope. Records
    /// without an organization are visible to unrestricted callers only.
    pub fn can_see(&self, org: Option<Uuid>) -> bool {
        match (&self.visible_organizations, org) {
            (None, _) => true,
            (Some(visible), Some(org)) => visible.contains(&org),
            (Some(_), None) => false,
        }
    }
}

/// 403 `Not authorized to target this tenant.`: a caller naming a tenant it
/// may not act in (only super admins act across tenants). The one answer
/// every module gives ([`AuthContext::target_tenant`]).
pub fn foreign_tenant() -> AppError {
    AppError::new(
        StatusCode::FORBIDDEN,
        "Not authorized to target this tenant.",
    )
}

/// 403 `organization_out_of_scope`.
pub fn out_of_scope(message: impl Into<String>) -> AppError {
    AppError::new(StatusCode::FORBIDDEN, message.into()).with_code("organization_out_of_scope")
}

/// How far a caller reaches one record of a tenant resource
/// ([`AuthContext::reach`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Another tenant's, or an organization outside the caller's: the
    /// record does not exist for the caller (404, never 403, so ids of other
    /// organizations are not confirmed).
    Hidden,
    /// A tenant-wide record (no organization) seen by a restricted caller:
    /// readable and usable, never changed.
    Read,
    /// Inside the caller's tenant and organizations.
    Write,
}

impl AuthContext {
    /// The one tenant-boundary check: `tenant` when the caller may target it
    /// (its scope tenant, or any for a super admin), else 403
    /// [`foreign_tenant`].
    pub fn target_tenant(&self, tenant: Uuid) -> Result<Uuid, AppError> {
        if self.may_target_tenant(tenant) {
            Ok(tenant)
        } else {
            Err(foreign_tenant())
        }
    }

    /// The tenant a request acts in: `requested` when the caller may target
    /// it (403 [`foreign_tenant`] otherwise), else the caller's scope tenant
    /// (`None` when it has none; the caller picks its own answer).
    pub fn requested_tenant(&self, requested: Option<Uuid>) -> Result<Option<Uuid>, AppError> {
        match requested {
            Some(t) => self.target_tenant(t).map(Some),
            None => Ok(self.tenant_id),
        }
    }

    /// The one organization-scope rule for a record of a tenant resource
    /// (a partition, a widget, a deal, a rule ...) of `tenant`, belonging to
    /// `organization` (`None` = tenant-wide): hidden outside the caller's
    /// tenant and organizations, read-only when tenant-wide for a restricted
    /// caller, writable otherwise. The caller's selection does not widen it
    /// (it narrows lists only). Every by-id read, update and delete asks it.
    pub fn reach(&self, tenant: Option<Uuid>, organization: Option<Uuid>) -> Reach {
        match tenant {
            Some(t) if self.may_target_tenant(t) => {}
            // Global records (no tenant) are read by every caller and
            // written by super admins only.
            None if self.is_super_admin() => return Reach::Write,
            None => return Reach::Read,
            Some(_) => return Reach::Hidden,
        }
        match (self.organization_restriction(), organization) {
            (None, _) => Reach::Write,
            (Some(_), None) => Reach::Read,
            (Some(allowed), Some(org)) if allowed.contains(&org) => Reach::Write,
            (Some(_), Some(_)) => Reach::Hidden,
        }
    }

    /// [`AuthContext::reach`] for a read: `not_found` when hidden.
    pub fn require_readable(
        &self,
        tenant: Option<Uuid>,
        organization: Option<Uuid>,
        not_found: impl FnOnce() -> AppError,
    ) -> Result<(), AppError> {
        match self.reach(tenant, organization) {
            Reach::Hidden => Err(not_found()),
            Reach::Read | Reach::Write => Ok(()),
        }
    }

    /// [`AuthContext::reach`] for a write: `not_found` when hidden, 403
    /// `organization_out_of_scope` when only readable.
    pub fn require_writable(
        &self,
        tenant: Option<Uuid>,
        organization: Option<Uuid>,
        not_found: impl FnOnce() -> AppError,
    ) -> Result<(), AppError> {
        match self.reach(tenant, organization) {
            Reach::Hidden => Err(not_found()),
            Reach::Read => Err(out_of_scope(
                "Only administrators of every organization can change tenant-wide records.",
            )),
            Reach::Write => Ok(()),
        }
    }

    /// The organizations a restricted caller may act in; `None` when the
    /// caller is unrestricted (a super admin, or an ACL without organizations).
    pub fn organization_restriction(&self) -> Option<&[Uuid]> {
        if self.is_super_admin() {
            return None;
        }
        self.acl.allowed_organization_ids.as_deref()
    }

    /// Whether the caller may write to `organization` (`None` = no
    /// organization: the tenant root or tenant-wide, unrestricted callers only).
    pub fn may_write_organization(&self, organization: Option<Uuid>) -> bool {
        match (self.organization_restriction(), organization) {
            (None, _) => true,
            (Some(allowed), Some(org)) => allowed.contains(&org),
            (Some(_), None) => false,
        }
    }

    /// 403 unless every organization involved in a write is inside the
    /// caller's scope (`None` items stand for "no organization").
    pub fn require_organizations<I>(&self, involved: I) -> Result<(), AppError>
    where
        I: IntoIterator<Item = Option<Uuid>>,
    {
        for organization in involved {
            if !self.may_write_organization(organization) {
                return Err(out_of_scope(match organization {
                    Some(org) => format!("Organization {org} is outside your organizations."),
                    None => {
                        "Only administrators of every organization can act at the tenant level."
                            .to_string()
                    }
                }));
            }
        }
        Ok(())
    }

    /// The organization scope of an ACL this caller writes. Unrestricted
    /// callers grant what they ask for (`None` = every organization). For a
    /// restricted caller `None` means its own set, and a list must be a subset
    /// of it (403 otherwise).
    pub fn grantable_organizations(
        &self,
        requested: Option<Vec<Uuid>>,
    ) -> Result<Option<Vec<Uuid>>, AppError> {
        let Some(allowed) = self.organization_restriction() else {
            return Ok(requested);
        };
        match requested {
            None => Ok(Some(allowed.to_vec())),
            Some(list) => match list.iter().find(|o| !allowed.contains(o)) {
                Some(outside) => Err(out_of_scope(format!(
                    "Cannot grant access to organization {outside}."
                ))),
                None => Ok(Some(list)),
            },
        }
    }

    /// Whether an ACL scoped to `organizations` (`None` = every organization)
    /// stays inside the caller's scope.
    pub fn covers_organizations(&self, organizations: Option<&[Uuid]>) -> bool {
        match (self.organization_restriction(), organizations) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(allowed), Some(list)) => list.iter().all(|o| allowed.contains(o)),
        }
    }

    /// The caller behind a command-bus actor (undo, redo, jobs acting for a
    /// user); 403 when the actor carries no caller.
    pub fn of(actor: &Actor) -> Result<&AuthContext, AppError> {
        actor
            .principal_as::<AuthContext>()
            .ok_or_else(AppError::forbidden)
    }

    /// The command-bus actor for this caller and scope, carrying the caller
    /// and the write guards every write passes.
    pub fn actor(&self) -> Actor {
        let mut actor = Actor::api(self.actor_id(), self.tenant_id, self.organization_id())
            .with_guards(self.guards.clone())
            .with_principal(Arc::new(self.clone()));
        if self.kind == crate::context::CredentialKind::BusinessRule {
            actor.source = crate::context::BUSINESS_RULE_SOURCE;
        }
        actor
    }
}

impl Principal for AuthContext {
    fn is_super_admin(&self) -> bool {
        self.acl.is_super_admin
    }

    fn may_act_in(&self, organization: Option<Uuid>) -> bool {
        self.may_write_organization(organization)
    }
}

#[cfg(test)]
mod tests {
    use crate::context::ResolvedAcl;

    use super::*;

    fn caller(orgs: Option<Vec<Uuid>>, super_admin: bool) -> AuthContext {
        AuthContext::for_user(Uuid::nil(), None, Uuid::nil()).with_acl(ResolvedAcl {
            is_super_admin: super_admin,
            allowed_organization_ids: orgs,
            ..Default::default()
        })
    }

    #[test]
    fn restricted_callers_stay_inside_their_organizations() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let restricted = caller(Some(vec![a]), false);
        assert!(restricted.require_organizations([Some(a)]).is_ok());
        assert!(
            restricted
                .require_organizations([Some(a), Some(b)])
                .is_err()
        );
        assert!(restricted.require_organizations([None]).is_err());
        assert_eq!(
            restricted.grantable_organizations(None).ok(),
            Some(Some(vec![a]))
        );
        assert!(restricted.grantable_organizations(Some(vec![b])).is_err());
        assert!(restricted.covers_organizations(Some(&[a])));
        assert!(!restricted.covers_organizations(None));
        let open = caller(None, false);
        assert!(open.require_organizations([None, Some(b)]).is_ok());
        assert_eq!(open.grantable_organizations(None).ok(), Some(None));
        let sa = caller(Some(vec![a]), true);
        assert!(sa.require_organizations([None]).is_ok());
    }

    #[test]
    fn records_are_reached_through_tenant_and_organization() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let tenant = Some(Uuid::nil());
        let other = Some(Uuid::from_u128(9));
        let restricted = caller(Some(vec![a]), false);
        assert_eq!(restricted.reach(tenant, Some(a)), Reach::Write);
        assert_eq!(restricted.reach(tenant, Some(b)), Reach::Hidden);
        assert_eq!(restricted.reach(tenant, None), Reach::Read);
        assert_eq!(restricted.reach(other, Some(a)), Reach::Hidden);
        assert_eq!(restricted.reach(None, None), Reach::Read);
        let gone = || AppError::not_found("Partition not found");
        assert_eq!(
            restricted
                .require_writable(tenant, Some(b), gone)
                .unwrap_err()
                .status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            restricted
                .require_writable(tenant, None, gone)
                .unwrap_err()
                .status(),
            StatusCode::FORBIDDEN
        );
        assert!(restricted.require_readable(tenant, None, gone).is_ok());
        let open = caller(None, false);
        assert_eq!(open.reach(tenant, Some(b)), Reach::Write);
        assert_eq!(open.reach(tenant, None), Reach::Write);
        assert_eq!(open.reach(other, None), Reach::Hidden);
        assert_eq!(open.reach(None, None), Reach::Read);
        let sa = caller(Some(vec![a]), true);
        assert_eq!(sa.reach(other, Some(b)), Reach::Write);
        assert_eq!(sa.reach(None, None), Reach::Write);
    }

    #[test]
    fn the_actor_carries_the_caller() {
        let c = caller(None, true);
        let actor = c.actor();
        assert!(actor.is_super_admin());
        assert!(AuthContext::of(&actor).is_ok());
        assert!(AuthContext::of(&Actor::default()).is_err());
    }
}

#[cfg(test)]
mod scope_tests {
    use super::*;

    #[test]
    fn null_organizations_are_visible_to_unrestricted_callers_only() {
        let org = Uuid::from_u128(7);
        let open = Scope {
            tenant_id: Uuid::nil(),
            visible_organizations: None,
        };
        assert!(open.can_see(None) && open.can_see(Some(org)));
        let restricted = Scope {
            tenant_id: Uuid::nil(),
            visible_organizations: Some(vec![org]),
        };
        assert!(restricted.can_see(Some(org)));
        assert!(!restricted.can_see(Some(Uuid::from_u128(8))));
        assert!(!restricted.can_see(None));
    }
}
