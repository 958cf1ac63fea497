//! Sidebar writes as commands, so each lands in the action log in the same
//! transaction. None is undoable (the reference does not log them at all).

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use super::queries::{self, StoredPreference};
use super::settings::SidebarSettings;
use super::variants::{self, VariantChanges, VariantRow};
use super::{UserScope, auto_variant_name, check_lock, duplicate_name};

pub const PREFERENCE_KIND: &str = "auth.sidebar_preference";
pub const ROLE_PREFERENCE_KIND: &str = "auth.role_sidebar_preference";
pub const VARIANT_KIND: &str = "auth.sidebar_variant";
const ROLE_KIND: &str = "auth.role";

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

/// The action-log entry of a variant write, its `auth.sidebar_variant.<verb>`
/// event included; [`VariantEntry::before`] and [`VariantEntry::after`] add
/// the snapshots.
fn variant_entry(label: &str, verb: &str, id: Uuid, locale: &str) -> VariantEntry {
    let entry = LogEntry {
        action_label: Some(label.into()),
        resource_kind: Some(VARIANT_KIND.into()),
        resource_id: Some(id.to_string()),
        ..Default::default()
    }
    .with_event(format!("auth.sidebar_variant.{verb}"), json!({ "id": id }));
    VariantEntry {
        entry,
        locale: locale.to_owned(),
    }
}

/// A variant's entry being built (see [`variant_entry`]).
struct VariantEntry {
    entry: LogEntry,
    locale: String,
}

impl VariantEntry {
    fn before(mut self, row: &VariantRow) -> Self {
        self.entry.snapshot_before = Some(variant_snapshot(row, &self.locale));
        self
    }

    fn after(mut self, row: &VariantRow) -> LogEntry {
        self.entry.snapshot_after = Some(variant_snapshot(row, &self.locale));
        self.entry
    }
}

impl From<VariantEntry> for LogEntry {
    fn from(built: VariantEntry) -> Self {
        built.entry
    }
}

fn variant_snapshot(row: &VariantRow, locale: &str) -> Value {
    json!({
        "id": row.id,
        "name": row.name,
        "isActive": row.is_active,
        "locale": locale,
        "settings": SidebarSettings::from_stored(row.settings.clone()),
    })
}

/// A unique violation on the variant name index is a duplicate name.
fn name_conflict(err: DieselError) -> AppError {
    match err {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => duplicate_name(),
        other => other.into(),
    }
}

fn name_taken(names: &[String], name: &str) -> bool {
    let wanted = name.to_lowercase();
    names.iter().any(|n| n.to_lowercase() == wanted)
}

/// Creates a variant for the caller.
pub struct CreateVariant {
    pub scope: UserScope,
    /// Trimmed; `None` picks an automatic name.
    pub name: Option<String>,
    pub settings: SidebarSettings,
    pub is_active: bool,
}

impl Command for CreateVariant {
    type Output = VariantRow;
    fn id(&self) -> &'static str {
        "auth.sidebar.variants.create"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(VariantRow, LogEntry), AppError>> {
        Box::pin(async move {
            let scope = self.scope;
            let names = variants::variant_names(conn, &scope, None).await?;
            let name = match self.name {
                Some(name) if name_taken(&names, &name) => return Err(duplicate_name()),
                Some(name) => name,
                None => auto_variant_name(&names),
            };
            let row = variants::insert_variant(conn, &scope, &name, &self.settings, self.is_active)
                .await
                .map_err(name_conflict)?;
            if row.is_active {
                variants::deactivate_other_variants(conn, &scope, row.id).await?;
            }
            let entry = variant_entry("Create sidebar variant", "created", row.id, scope.locale)
                .after(&row);
            Ok((row, entry))
        })
    }
}

/// Changes the sent fields of one of the caller's variants.
pub struct UpdateVariant {
    pub scope: UserScope,
    pub id: Uuid,
    /// Trimmed, not blank.
    pub name: Option<String>,
    pub settings: Option<SidebarSettings>,
    pub is_active: Option<bool>,
}

impl Command for UpdateVariant {
    type Output = VariantRow;
    fn id(&self) -> &'static str {
        "auth.sidebar.variants.update"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(VariantRow, LogEntry), AppError>> {
        Box::pin(async move {
            let scope = self.scope;
            let before = variants::variant(conn, &scope, self.id, true)
                .await?
                .ok_or_else(variant_not_found)?;
            if let Some(name) = &self.name {
                let others = variants::variant_names(conn, &scope, Some(self.id)).await?;
                if name_taken(&others, name) {
                    return Err(duplicate_name());
                }
            }
            let row = variants::update_variant(
                conn,
                self.id,
                VariantChanges {
                    name: self.name,
                    settings: self.settings.as_ref().map(SidebarSettings::to_stored),
                    is_active: self.is_active,
                },
            )
            .await
            .map_err(name_conflict)?;
            if self.is_active == Some(true) {
                variants::deactivate_other_variants(conn, &scope, row.id).await?;
            }
            let entry = variant_entry("Update sidebar variant", "updated", row.id, scope.locale)
                .before(&before)
                .after(&row);
            Ok((row, entry))
        })
    }
}

/// Soft-deletes one of the caller's variants.
pub struct DeleteVariant {
    pub scope: UserScope,
    pub id: Uuid,
}

impl Command for DeleteVariant {
    type Output = ();
    fn id(&self) -> &'static str {
        "auth.sidebar.variants.delete"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let before = variants::variant(conn, &self.scope, self.id, true)
                .await?
                .ok_or_else(variant_not_found)?;
            variants::delete_variant(conn, self.id).await?;
            let locale = self.scope.locale;
            let entry =
                variant_entry("Delete sidebar variant", "deleted", self.id, locale).before(&before);
            Ok(((), entry.into()))
        })
    }
}

/// 404 `{error:"Variant not found"}` (also for other users' variants).
pub fn variant_not_found() -> AppError {
    crate::error::PreferencesError::VariantNotFound.into()
}
