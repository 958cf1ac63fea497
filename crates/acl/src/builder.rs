//! Constructors and chained setters for [`AuthContext`], so code that builds
//! one by hand (test authenticators, unit tests) names only what it cares
//! about: a field added to `AuthContext` then changes this file, not every
//! test. Authenticators that fill in every field may keep a struct literal.

use std::sync::Arc;

use stoa_core::command::WriteGuards;
use uuid::Uuid;

use crate::context::{AuthContext, CredentialKind, ResolvedAcl};

impl AuthContext {
    /// A session caller: `user` of `tenant` (which is also the tenant the
    /// request acts in), at home in `home_organization`, holding nothing
    /// (set grants with [`AuthContext::with_acl`]). Each argument takes a
    /// `Uuid` or an `Option<Uuid>`.
    pub fn for_user(
        tenant: impl Into<Option<Uuid>>,
        home_organization: impl Into<Option<Uuid>>,
        user: impl Into<Option<Uuid>>,
    ) -> Self {
        let tenant = tenant.into();
        Self {
            user_id: user.into(),
            session_id: None,
            api_key_id: None,
            kind: CredentialKind::Session,
            email: None,
            name: None,
            tenant_id: tenant,
            actor_tenant_id: tenant,
            home_organization_id: home_organization.into(),
            acl: Arc::new(ResolvedAcl::default()),
            acl_version: None,
            guards: WriteGuards::default(),
        }
    }

    /// An API-key caller: the key `key` of `tenant`, acting without a user
    /// (give it one with [`AuthContext::with_user`]), holding nothing.
    pub fn for_api_key(tenant: impl Into<Option<Uuid>>, key: Uuid) -> Self {
        Self {
            api_key_id: Some(key),
            kind: CredentialKind::ApiKey,
            ..Self::for_user(tenant, None, None)
        }
    }

    /// The caller's grants in the current scope.
    pub fn with_acl(mut self, acl: ResolvedAcl) -> Self {
        self.acl = Arc::new(acl);
        self
    }

    /// The user behind the credential.
    pub fn with_user(mut self, user: impl Into<Option<Uuid>>) -> Self {
        self.user_id = user.into();
        self
    }

    /// The login session behind a session credential.
    pub fn with_session(mut self, session: impl Into<Option<Uuid>>) -> Self {
        self.session_id = session.into();
        self
    }

    /// The tenant the request acts in (a super admin's selection), leaving
    /// the caller's own tenant as it is.
    pub fn acting_in(mut self, tenant: impl Into<Option<Uuid>>) -> Self {
        self.tenant_id = tenant.into();
        self
    }

    /// The user's e-mail and display name.
    pub fn with_identity(mut self, email: Option<String>, name: Option<String>) -> Self {
        self.email = email;
        self.name = name;
        self
    }

    /// The write guards handed to the command bus with [`AuthContext::actor`].
    pub fn with_guards(mut self, guards: WriteGuards) -> Self {
        self.guards = guards;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_sessions_and_keys() {
        let (tenant, org, user, key) = (
            Uuid::from_u128(1),
            Uuid::from_u128(2),
            Uuid::from_u128(3),
            Uuid::from_u128(4),
        );
        let session = AuthContext::for_user(tenant, org, user).with_acl(ResolvedAcl {
            is_super_admin: true,
            ..Default::default()
        });
        assert_eq!(session.kind, CredentialKind::Session);
        assert_eq!(
            (session.tenant_id, session.actor_tenant_id),
            (Some(tenant), Some(tenant))
        );
        assert_eq!(session.home_organization_id, Some(org));
        assert_eq!(session.actor_id(), Some(user));
        assert!(session.is_super_admin());

        let other = Uuid::from_u128(5);
        let selected = session.acting_in(other);
        assert_eq!(
            (selected.tenant_id, selected.actor_tenant_id),
            (Some(other), Some(tenant))
        );

        let keyed = AuthContext::for_api_key(tenant, key);
        assert_eq!(keyed.kind, CredentialKind::ApiKey);
        assert_eq!((keyed.user_id, keyed.actor_id()), (None, Some(key)));
        assert_eq!(keyed.with_user(user).actor_id(), Some(user));
    }
}
