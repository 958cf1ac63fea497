//! Delegated work: what acts for somebody else acts with no more than both.
//!
//! A business rule's actions, a rule's `CALL_OPEN_MERCATO` through an API
//! key, a queued job: the work was authored by one person and may run
//! through a credential of its own (an API key, a rule's system principal).
//! It acts with the *intersection* of the author's grants as they stand now
//! and the credential's ([`AuthContext::delegated_by`]): a feature both
//! hold, the super-admin flag only when both carry it, organizations both
//! reach, and nothing at all across tenants. Saving such work checks the
//! credential against its author ([`AuthContext::require_within`]): a
//! credential that reaches further than its author is refused with 403, so
//! a rules author cannot borrow an administrator's key.
//!
//! One rule here, used by every module that runs work for someone
//! (docs/security.md, "Delegated work").

use std::sync::Arc;

use actix_web::http::StatusCode;
use stoa_core::AppError;
use uuid::Uuid;

use crate::context::{AuthContext, ResolvedAcl};
use crate::matching::feature_granted;

/// The grants covered by both lists: a grant of one side is kept when the
/// other side covers it, so `["auth.*"]` and `["auth.users.list", "x.y"]` meet
/// in `["auth.users.list"]`. Exact for the `*` / `m.*` / exact-id grammar.
pub fn intersect_features(a: &[String], b: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let from_a = a.iter().filter(|g| feature_granted(b, g, false));
    let from_b = b.iter().filter(|g| feature_granted(a, g, false));
    for grant in from_a.chain(from_b) {
        if !out.contains(grant) {
            out.push(grant.clone());
        }
    }
    out
}

/// 403 `delegation_out_of_reach`.
pub fn out_of_reach(message: impl Into<String>) -> AppError {
    AppError::new(StatusCode::FORBIDDEN, message.into()).with_code("delegation_out_of_reach")
}

/// A super admin's grants as a feature list (`*`): the flag covers everything.
fn features_of(acl: &ResolvedAcl) -> Vec<String> {
    if acl.is_super_admin {
        vec!["*".to_string()]
    } else {
        acl.features.clone()
    }
}

/// The organizations an ACL may act in (`None` = every one; super admins
/// are never restricted).
fn allowed_of(acl: &ResolvedAcl) -> Option<&[Uuid]> {
    if acl.is_super_admin {
        None
    } else {
        acl.allowed_organization_ids.as_deref()
    }
}

fn intersect_organizations(a: Option<&[Uuid]>, b: Option<&[Uuid]>) -> Option<Vec<Uuid>> {
    match (a, b) {
        (None, None) => None,
        (Some(a), None) | (None, Some(a)) => Some(a.to_vec()),
        (Some(a), Some(b)) => Some(a.iter().filter(|o| b.contains(o)).copied().collect()),
    }
}

impl ResolvedAcl {
    /// What both `self` and `ceiling` grant: features covered by both, the
    /// super-admin flag only when both carry it, the organizations both
    /// reach. The selection stays `self`'s, narrowed to what remains (a
    /// selection outside it then holds no feature: [`AuthContext::has`]).
    pub fn bounded_by(&self, ceiling: &ResolvedAcl) -> ResolvedAcl {
        if self.is_super_admin && ceiling.is_super_admin {
            return self.clone();
        }
        let features = intersect_features(&features_of(self), &features_of(ceiling));
        let allowed = intersect_organizations(allowed_of(self), allowed_of(ceiling));
        let visible = match (&allowed, &self.visible_organization_ids) {
            (None, visible) => visible.clone(),
            (Some(allowed), None) => Some(allowed.clone()),
            (Some(allowed), Some(visible)) => Some(
                visible
                    .iter()
                    .filter(|o| allowed.contains(o))
                    .copied()
                    .collect(),
            ),
        };
        ResolvedAcl {
            is_super_admin: false,
            features,
            roles: self.roles.clone(),
            allowed_organization_ids: allowed,
            selected_organization_id: self.selected_organization_id,
            visible_organization_ids: visible,
        }
    }
}

impl AuthContext {
    /// This credential acting for `author` (as `author` stands now): the
    /// same identity (its id is what the action log records), with the
    /// grants both hold ([`ResolvedAcl::bounded_by`]). An author of another
    /// tenant than the one the credential acts in leaves it nothing.
    pub fn delegated_by(&self, author: &AuthContext) -> AuthContext {
        let mut out = self.clone();
        let same_tenant = author.is_super_admin() || author.tenant_id == self.tenant_id;
        out.acl = Arc::new(if same_tenant {
            self.acl.bounded_by(&author.acl)
        } else {
            ResolvedAcl {
                allowed_organization_ids: Some(Vec::new()),
                visible_organization_ids: Some(Vec::new()),
                selected_organization_id: self.acl.selected_organization_id,
                ..Default::default()
            }
        });
        out
    }

    /// 403 `delegation_out_of_reach` unless everything this credential may
    /// do `author` may do too: every feature it holds (a wildcard only
    /// when the author holds it as wide), the super-admin flag, and every
    /// organization it reaches, in the author's tenant.
    pub fn require_within(&self, author: &AuthContext) -> Result<(), AppError> {
        if author.is_super_admin() {
            return Ok(());
        }
        if self.tenant_id != author.tenant_id {
            return Err(out_of_reach("The credential belongs to another tenant."));
        }
        if self.is_super_admin() {
            return Err(out_of_reach(
                "The credential carries super administrator access, which you do not hold.",
            ));
        }
        if let Some(feature) = self
            .acl
            .features
            .iter()
            .find(|f| !feature_granted(&author.acl.features, f, false))
        {
            return Err(out_of_reach(format!(
                "The credential holds feature {feature}, which you do not hold."
            )));
        }
        match (allowed_of(&self.acl), allowed_of(&author.acl)) {
            (_, None) => Ok(()),
            (None, Some(_)) => Err(out_of_reach(
                "The credential reaches every organization; you do not.",
            )),
            (Some(own), Some(limit)) => match own.iter().find(|o| !limit.contains(o)) {
                Some(outside) => Err(out_of_reach(format!(
                    "The credential reaches organization {outside}, which is outside yours."
                ))),
                None => Ok(()),
            },
        }
    }

    /// Whether [`AuthContext::require_within`] holds.
    pub fn is_within(&self, author: &AuthContext) -> bool {
        self.require_within(author).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn ctx(features: &[&str], allowed: Option<Vec<Uuid>>, super_admin: bool) -> AuthContext {
        AuthContext::for_user(Uuid::from_u128(1), None, Uuid::from_u128(2)).with_acl(ResolvedAcl {
            is_super_admin: super_admin,
            features: v(features),
            selected_organization_id: allowed.as_ref().and_then(|a| a.first().copied()),
            allowed_organization_ids: allowed,
            ..Default::default()
        })
    }

    #[test]
    fn intersection_keeps_what_both_sides_cover() {
        assert_eq!(
            intersect_features(&v(&["auth.*"]), &v(&["auth.users.list", "x.y"])),
            v(&["auth.users.list"])
        );
        assert_eq!(
            intersect_features(&v(&["*"]), &v(&["a.b", "c.*"])),
            v(&["a.b", "c.*"])
        );
        assert_eq!(
            intersect_features(&v(&["a.b"]), &v(&["a.b.*"])),
            v(&["a.b"])
        );
        assert!(intersect_features(&v(&["a.b"]), &v(&["c.*"])).is_empty());
        assert!(intersect_features(&v(&["*"]), &[]).is_empty());
    }

    #[test]
    fn a_delegated_key_holds_only_what_its_author_holds() {
        let (a, b) = (Uuid::from_u128(10), Uuid::from_u128(11));
        let key = ctx(&["*"], None, true);
        let author = ctx(
            &["business_rules.*", "customers.deals.view"],
            Some(vec![a]),
            false,
        );
        let acting = key.delegated_by(&author);
        assert!(!acting.is_super_admin());
        assert!(acting.has("customers.deals.view"));
        assert!(!acting.has("auth.users.edit"));
        assert!(!acting.has("customers.deals.manage"));
        assert_eq!(acting.acl.allowed_organization_ids, Some(vec![a]));
        assert!(!acting.may_write_organization(Some(b)));
        assert_eq!(acting.actor_id(), key.actor_id(), "the key still acts");

        // The author's features are wider, the key's organizations fewer.
        let narrow = ctx(&["customers.deals.view"], Some(vec![a]), false);
        let wide = ctx(&["*"], None, false);
        let acting = narrow.delegated_by(&wide);
        assert!(acting.has("customers.deals.view") && !acting.has("customers.deals.manage"));
        assert_eq!(acting.acl.allowed_organization_ids, Some(vec![a]));

        // A demoted author (nothing left) leaves the key nothing.
        let demoted = ctx(&[], None, false);
        assert!(!key.delegated_by(&demoted).has("customers.deals.view"));

        // Another tenant's author leaves it nothing either.
        let foreign = AuthContext::for_user(Uuid::from_u128(99), None, Uuid::from_u128(3))
            .with_acl(ResolvedAcl {
                features: v(&["*"]),
                ..Default::default()
            });
        assert!(!key.delegated_by(&foreign).has("customers.deals.view"));
    }

    #[test]
    fn a_credential_must_stay_within_its_author() {
        let (a, b) = (Uuid::from_u128(10), Uuid::from_u128(11));
        let author = ctx(
            &["customers.*", "business_rules.manage"],
            Some(vec![a]),
            false,
        );
        assert!(ctx(&["customers.deals.view"], Some(vec![a]), false).is_within(&author));
        assert!(ctx(&["customers.*"], Some(vec![a]), false).is_within(&author));
        let err = ctx(&["auth.users.edit"], Some(vec![a]), false)
            .require_within(&author)
            .unwrap_err();
        assert_eq!(err.status(), StatusCode::FORBIDDEN);
        assert!(
            err.message().contains("auth.users.edit"),
            "{}",
            err.message()
        );
        assert!(!ctx(&["*"], Some(vec![a]), false).is_within(&author));
        assert!(!ctx(&[], None, true).is_within(&author));
        assert!(!ctx(&["customers.deals.view"], Some(vec![a, b]), false).is_within(&author));
        assert!(!ctx(&["customers.deals.view"], None, false).is_within(&author));
        let open = ctx(&["*"], None, false);
        assert!(ctx(&["customers.deals.view"], None, false).is_within(&open));
        assert!(ctx(&["*"], None, true).is_within(&ctx(&[], None, true)));
    }
}
