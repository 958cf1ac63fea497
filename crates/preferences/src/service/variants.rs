//! Sidebar variants: the caller's named setups in one locale, listed, read,
//! created, changed and (softly) deleted.

use stoa_acl::AuthContext;
use stoa_core::AppResult;
use uuid::Uuid;

use crate::error::PreferencesError;
use crate::sidebar::commands::{CreateVariant, DeleteVariant, UpdateVariant, variant_not_found};
use crate::sidebar::dto::{
    VariantDeleted, VariantInput, VariantItem, VariantList, VariantResponse,
};
use crate::sidebar::settings::MAX_LABEL_CHARS;
use crate::sidebar::variants;
use crate::sidebar::{SidebarSettings, UserScope, no_user};
use crate::state::PreferencesState;

/// The caller's variant scope in `locale`; 403 for a caller without a user.
pub fn scope(ctx: &AuthContext, locale: &'static str) -> AppResult<UserScope> {
    UserScope::of(ctx, locale).ok_or_else(|| no_user("No user context"))
}

/// A trimmed name: `Ok(None)` when blank, 400 when longer than 120 characters.
fn clean_name(name: Option<String>) -> AppResult<Option<String>> {
    let Some(name) = name else { return Ok(None) };
    let name = name.trim();
    if name.chars().count() > MAX_LABEL_CHARS {
        return Err(PreferencesError::NameTooLong(MAX_LABEL_CHARS).into());
    }
    Ok((!name.is_empty()).then(|| name.to_string()))
}

fn settings_of(input: &mut VariantInput) -> AppResult<Option<SidebarSettings>> {
    input
        .settings
        .take()
        .map(|s| s.normalize(&["settings"]))
        .transpose()
}

/// The live variants of `scope`, oldest first.
pub async fn list(state: &PreferencesState, scope: UserScope) -> AppResult<VariantList> {
    let mut conn = state.db.conn().await?;
    let rows = variants::variants(&mut conn, &scope).await?;
    Ok(VariantList {
        locale: scope.locale.to_string(),
        variants: rows.into_iter().map(VariantItem::from).collect(),
    })
}

/// One variant of `scope`, or 404.
pub async fn get(
    state: &PreferencesState,
    scope: UserScope,
    id: Uuid,
) -> AppResult<VariantResponse> {
    let mut conn = state.db.conn().await?;
    let row = variants::variant(&mut conn, &scope, id, false)
        .await?
        .ok_or_else(variant_not_found)?;
    Ok(VariantResponse {
        locale: scope.locale.to_string(),
        variant: row.into(),
    })
}

/// Creates a variant in `scope` (an automatic name when none is given).
pub async fn create(
    state: &PreferencesState,
    ctx: &AuthContext,
    scope: UserScope,
    mut input: VariantInput,
) -> AppResult<VariantResponse> {
    let settings = settings_of(&mut input)?.unwrap_or_default();
    let command = CreateVariant {
        scope,
        name: clean_name(input.name)?,
        settings,
        is_active: input.is_active.unwrap_or(false),
    };
    let actor = ctx.actor();
    let (row, _) = stoa_core::command::run(&state.db, &actor, command).await?;
    Ok(VariantResponse {
        locale: scope.locale.to_string(),
        variant: row.into(),
    })
}

/// Changes the sent fields of the variant `id` of `scope`.
pub async fn update(
    state: &PreferencesState,
    ctx: &AuthContext,
    scope: UserScope,
    id: Uuid,
    mut input: VariantInput,
) -> AppResult<VariantResponse> {
    let settings = settings_of(&mut input)?;
    let name = match input.name {
        None => None,
        Some(raw) => Some(clean_name(Some(raw))?.ok_or(PreferencesError::BlankName)?),
    };
    let command = UpdateVariant {
        scope,
        id,
        name,
        settings,
        is_active: input.is_active,
    };
    let actor = ctx.actor();
    let (row, _) = stoa_core::command::run(&state.db, &actor, command).await?;
    Ok(VariantResponse {
        locale: scope.locale.to_string(),
        variant: row.into(),
    })
}

/// Deletes (soft) the variant `id` of `scope`.
pub async fn delete(
    state: &PreferencesState,
    ctx: &AuthContext,
    scope: UserScope,
    id: Uuid,
) -> AppResult<VariantDeleted> {
    let command = DeleteVariant { scope, id };
    let actor = ctx.actor();
    stoa_core::command::run(&state.db, &actor, command).await?;
    Ok(VariantDeleted { ok: true })
}
