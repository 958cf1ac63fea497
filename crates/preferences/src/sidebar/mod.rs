//! Sidebar customisation: per-locale preferences of users and roles, and the
//! named variants a user can switch between.
//!
//! A user's preference is keyed by (user, tenant, organization, locale); the
//! organization is the selected one for super admins (who hop between
//! tenants) and the home organization for everyone else, so the sidebar does
//! not change when another user switches the organization they work in. A
//! role's preference is keyed by (role, tenant, locale). The navigation
//! (`GET /auth/admin/nav`) applies the first role preference of the caller's
//! roles (by role name), then the caller's own.
//!
//! Writes go through the command bus ([`commands`]), so they appear in the
//! action log; they are not undoable.

pub mod commands;
pub mod dto;
pub mod queries;
pub mod schema;
pub mod settings;
pub mod variants;

use std::collections::HashSet;

use stoa_acl::AuthContext;
use stoa_core::AppError;
use uuid::Uuid;

use crate::error::PreferencesError;

pub use dto::RoleEntry;
pub use settings::{SettingsInput, SidebarSettings};

/// The feature that lets a caller write preferences and manage role variants.
pub const MANAGE: &str = "auth.sidebar.manage";

/// Whose preferences and variants a request reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserScope {
    pub user_id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub locale: &'static str,
}

impl UserScope {
    /// The caller's scope in `locale`; `None` for a caller without a user (an
    /// API key acting on its own).
    pub fn of(ctx: &AuthContext, locale: &'static str) -> Option<Self> {
        Some(Self {
            user_id: ctx.user_id?,
            tenant_id: ctx.tenant_id,
            organization_id: preference_organization(ctx),
            locale,
        })
    }
}

/// The organization a user preference belongs to: the selected one for a
/// super admin, the home organization for everyone else.
pub fn preference_organization(ctx: &AuthContext) -> Option<Uuid> {
    if ctx.is_super_admin() {
        ctx.organization_id()
    } else {
        ctx.home_organization_id
    }
}

/// 403 for a caller without a user.
pub fn no_user(message: &'static str) -> AppError {
    PreferencesError::NoUser(message).into()
}

/// The name a variant gets when none is given: "My preferences", then
/// "My preferences 2", 3, … (the lowest not taken, compared case-insensitively).
pub fn auto_variant_name(taken: &[String]) -> String {
    const BASE: &str = "My preferences";
    let taken: HashSet<String> = taken.iter().map(|n| n.trim().to_lowercase()).collect();
    if !taken.contains(&BASE.to_lowercase()) {
        return BASE.to_string();
    }
    let mut n: u64 = 2;
    loop {
        let candidate = format!("{BASE} {n}");
        if !taken.contains(&candidate.to_lowercase()) {
            return candidate;
        }
        n += 1;
    }
}

/// 409 for a variant name already used by another live variant.
pub fn duplicate_name() -> AppError {
    PreferencesError::DuplicateName.into()
}

pub use stoa_core::http::lock::{OPTIMISTIC_LOCK_HEADER, check_lock, expected_updated_at};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn automatic_names_take_the_lowest_free_number() {
        assert_eq!(auto_variant_name(&[]), "My preferences");
        let taken = vec!["my preferences".to_string(), "My preferences 3".to_string()];
        assert_eq!(auto_variant_name(&taken), "My preferences 2");
        let taken = vec!["My preferences".to_string(), "My preferences 2".to_string()];
        assert_eq!(auto_variant_name(&taken), "My preferences 3");
    }
}
