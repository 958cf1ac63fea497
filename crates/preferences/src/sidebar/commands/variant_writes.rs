//! The sidebar variants' commands: create, update and soft-delete one of
//! the caller's variants, each with its action-log entry.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use uuid::Uuid;

use super::VARIANT_KIND;
use crate::sidebar::settings::SidebarSettings;
use crate::sidebar::variants::{self, VariantChanges, VariantRow};
use crate::sidebar::{UserScope, auto_variant_name, duplicate_name};

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
