//! Sidebar writes as commands, so each lands in the action log in the same
//! transaction. None is undoable (the reference does not log them at all).

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use super::queries::{self, StoredPreference};
use super::settings::SidebarSettings;
use super::{UserScope, check_lock};

pub const PREFERENCE_KIND: &str = "auth.sidebar_preference";
pub const ROLE_PREFERENCE_KIND: &str = "auth.role_sidebar_preference";
pub const VARIANT_KIND: &str = "auth.sidebar_variant";
const ROLE_KIND: &str = "auth.role";

mod variant_writes;
pub use variant_writes::{CreateVariant, DeleteVariant, UpdateVariant, variant_not_found};

fn preference_snapshot(locale: &str, settings: &SidebarSettings) -> Value {
    json!({"locale": locale, "settings": settings})
}

/// Saves the caller's preference and copies it to / clears it from roles.
pub struct SaveUserPreference {
    pub scope: UserScope,
    pub settings: SidebarSettings,
    /// The optimistic-lock version the client expects.
    pub expected: Option<OffsetDateTime>,
    /// Roles of the scope's tenant (already checked) that get the same settings.
    pub apply_to_roles: Vec<Uuid>,
    /// Roles of the scope's tenant (already checked) whose preference goes.
    pub clear_roles: Vec<Uuid>,
}

/// What [`SaveUserPreference`] did.
pub struct SavedUserPreference {
    pub preference: StoredPreference,
    pub applied: Vec<Uuid>,
    pub cleared: Vec<Uuid>,
}

impl Command for SaveUserPreference {
    type Output = SavedUserPreference;
    fn id(&self) -> &'static str {
        "auth.sidebar.preferences.update"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(SavedUserPreference, LogEntry), AppError>> {
        Box::pin(async move {
            let scope = self.scope;
            let before = queries::user_preference(conn, &scope, true).await?;
            check_lock(self.expected, before.as_ref().map(|b| b.updated_at))?;
            let preference = queries::save_user_preference(
                conn,
                &scope,
                before.as_ref().map(|b| b.id),
                &self.settings,
            )
            .await?;
            let mut applied = Vec::new();
            let mut cleared = Vec::new();
            if let Some(tenant) = scope.tenant_id {
                for role in &self.apply_to_roles {
                    queries::save_role_preference(
                        conn,
                        *role,
                        tenant,
                        scope.locale,
                        &self.settings,
                    )
                    .await?;
                    applied.push(*role);
                }
                cleared = self
                    .clear_roles
                    .iter()
                    .filter(|r| !applied.contains(r))
                    .copied()
                    .collect();
                queries::delete_role_preferences(conn, &cleared, tenant, scope.locale).await?;
            }
            let entry = LogEntry {
                action_label: Some("Update sidebar preferences".into()),
                resource_kind: Some(PREFERENCE_KIND.into()),
                resource_id: Some(preference.id.to_string()),
                snapshot_before: before
                    .as_ref()
                    .map(|b| preference_snapshot(scope.locale, &b.settings)),
                snapshot_after: Some(preference_snapshot(scope.locale, &preference.settings)),
                context: Some(json!({
                    "scope": "user",
                    "appliedRoles": applied,
                    "clearedRoles": cleared,
                })),
                ..Default::default()
            }
            .with_event(
                "auth.sidebar_preference.updated",
                json!({ "id": preference.id }),
            );
            Ok((
                SavedUserPreference {
                    preference,
                    applied,
                    cleared,
                },
                entry,
            ))
        })
    }
}

/// Saves a role's preference in one tenant and locale.
pub struct SaveRolePreference {
    pub role: Uuid,
    pub tenant: Uuid,
    pub locale: &'static str,
    pub settings: SidebarSettings,
    pub expected: Option<OffsetDateTime>,
}

impl Command for SaveRolePreference {
    type Output = StoredPreference;
    fn id(&self) -> &'static str {
        "auth.sidebar.preferences.update"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(StoredPreference, LogEntry), AppError>> {
        Box::pin(async move {
            let before =
                queries::role_preference(conn, self.role, self.tenant, self.locale, true).await?;
            check_lock(self.expected, before.as_ref().map(|b| b.updated_at))?;
            let saved = queries::save_role_preference(
                conn,
                self.role,
                self.tenant,
                self.locale,
                &self.settings,
            )
            .await?;
            let entry = LogEntry {
                action_label: Some("Update role sidebar preferences".into()),
                resource_kind: Some(ROLE_PREFERENCE_KIND.into()),
                resource_id: Some(saved.id.to_string()),
                parent_resource_kind: Some(ROLE_KIND.into()),
                parent_resource_id: Some(self.role.to_string()),
                snapshot_before: before
                    .as_ref()
                    .map(|b| preference_snapshot(self.locale, &b.settings)),
                snapshot_after: Some(preference_snapshot(self.locale, &saved.settings)),
                context: Some(json!({"scope": "role", "roleId": self.role})),
                tenant_id: Some(self.tenant),
                ..Default::default()
            }
            .with_event(
                "auth.sidebar_preference.updated",
                json!({ "id": saved.id, "roleId": self.role }),
            );
            Ok((saved, entry))
        })
    }
}

/// Removes a role's preference in one tenant and locale (the caller checked
/// that there is one).
pub struct DeleteRolePreference {
    pub role: Uuid,
    pub tenant: Uuid,
    pub locale: &'static str,
    pub before: StoredPreference,
}

impl Command for DeleteRolePreference {
    type Output = ();
    fn id(&self) -> &'static str {
        "auth.sidebar.preferences.delete"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            queries::delete_role_preferences(conn, &[self.role], self.tenant, self.locale).await?;
            let entry = LogEntry {
                action_label: Some("Delete role sidebar preferences".into()),
                resource_kind: Some(ROLE_PREFERENCE_KIND.into()),
                resource_id: Some(self.before.id.to_string()),
                parent_resource_kind: Some(ROLE_KIND.into()),
                parent_resource_id: Some(self.role.to_string()),
                snapshot_before: Some(preference_snapshot(self.locale, &self.before.settings)),
                tenant_id: Some(self.tenant),
                ..Default::default()
            }
            .with_event(
                "auth.sidebar_preference.deleted",
                json!({ "id": self.before.id, "roleId": self.role }),
            );
            Ok(((), entry))
        })
    }
}
