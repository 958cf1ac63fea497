//! `/auth/sidebar/variants`: the caller's named sidebar setups in the
//! request's locale. Writes need `auth.sidebar.manage`; callers without a
//! user (API keys acting on their own) get 403.

use actix_web::{HttpRequest, delete, get, post, put, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Json, Path};
use uuid::Uuid;

use super::State;
use crate::sidebar::commands::{CreateVariant, DeleteVariant, UpdateVariant, variant_not_found};
use crate::sidebar::dto::*;
use crate::sidebar::settings::MAX_LABEL_CHARS;
use crate::sidebar::variants;
use crate::sidebar::{MANAGE, SidebarSettings, UserScope, no_user};
use stoa_core::i18n::request_locale;

fn scope_of(req: &HttpRequest, ctx: &AuthContext) -> AppResult<UserScope> {
    UserScope::of(ctx, request_locale(req)).ok_or_else(|| no_user("No user context"))
}

/// A trimmed name: `Ok(None)` when blank, 400 when longer than 120 characters.
fn clean_name(name: Option<String>) -> AppResult<Option<String>> {
    let Some(name) = name else { return Ok(None) };
    let name = name.trim();
    if name.chars().count() > MAX_LABEL_CHARS {
        return Err(AppError::bad_request(format!(
            "Invalid payload: name: must be at most {MAX_LABEL_CHARS} characters"
        )));
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

/// The caller's live variants in the request's locale, oldest first.
#[utoipa::path(
    tag = "Authentication & Accounts",
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = VariantList),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "No user behind the credential"),
    )
)]
#[get("/auth/sidebar/variants")]
pub async fn list_variants(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
) -> AppResult<web::Json<VariantList>> {
    let scope = scope_of(&req, &ctx)?;
    let mut conn = state.db.conn().await?;
    let rows = variants::variants(&mut conn, &scope).await?;
    Ok(web::Json(VariantList {
        locale: scope.locale.to_string(),
        variants: rows.into_iter().map(VariantItem::from).collect(),
    }))
}

/// Creates a variant. Without a name (or with a blank one) it is called
/// "My preferences", "My preferences 2", …; `isActive:true` deactivates the
/// caller's other variants.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = VariantInput,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = VariantResponse),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "`duplicate_name`: a live variant has this name"),
    )
)]
#[post("/auth/sidebar/variants")]
pub async fn create_variant(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    body: Json<VariantInput>,
) -> AppResult<web::Json<VariantResponse>> {
    ctx.require(MANAGE)?;
    let scope = scope_of(&req, &ctx)?;
    let mut input = body.into_inner();
    let settings = settings_of(&mut input)?.unwrap_or_default();
    let command = CreateVariant {
        scope,
        name: clean_name(input.name)?,
        settings,
        is_active: input.is_active.unwrap_or(false),
    };
    let actor = ctx.actor();
    let (row, _) = state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move { stoa_core::command::execute(conn, &actor, command).await })
        })
        .await?;
    Ok(web::Json(VariantResponse {
        locale: scope.locale.to_string(),
        variant: row.into(),
    }))
}

/// One of the caller's variants.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(("id" = Uuid, Path, description = "Variant id")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = VariantResponse),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/auth/sidebar/variants/{id}")]
pub async fn get_variant(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    id: Path<Uuid>,
) -> AppResult<web::Json<VariantResponse>> {
    let scope = scope_of(&req, &ctx)?;
    let mut conn = state.db.conn().await?;
    let row = variants::variant(&mut conn, &scope, id.into_inner(), false)
        .await?
        .ok_or_else(variant_not_found)?;
    Ok(web::Json(VariantResponse {
        locale: scope.locale.to_string(),
        variant: row.into(),
    }))
}

/// Changes the sent fields of one of the caller's variants.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(("id" = Uuid, Path, description = "Variant id")),
    request_body = VariantInput,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = VariantResponse),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "`duplicate_name`"),
    )
)]
#[put("/auth/sidebar/variants/{id}")]
pub async fn update_variant(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    id: Path<Uuid>,
    body: Json<VariantInput>,
) -> AppResult<web::Json<VariantResponse>> {
    apply_update(&req, &ctx, &state, id.into_inner(), body.into_inner()).await
}

/// Both forms of the variant update (path id, or the collection form in
/// [`super::variants_collection`]).
pub(crate) async fn apply_update(
    req: &HttpRequest,
    ctx: &AuthContext,
    state: &State,
    id: Uuid,
    input: VariantInput,
) -> AppResult<web::Json<VariantResponse>> {
    ctx.require(MANAGE)?;
    let scope = scope_of(req, ctx)?;
    let mut input = input;
    let settings = settings_of(&mut input)?;
    let name = match input.name {
        None => None,
        Some(raw) => Some(
            clean_name(Some(raw))?
                .ok_or_else(|| AppError::bad_request("Invalid payload: name: must not be blank"))?,
        ),
    };
    let command = UpdateVariant {
        scope,
        id,
        name,
        settings,
        is_active: input.is_active,
    };
    let actor = ctx.actor();
    let (row, _) = state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move { stoa_core::command::execute(conn, &actor, command).await })
        })
        .await?;
    Ok(web::Json(VariantResponse {
        locale: scope.locale.to_string(),
        variant: row.into(),
    }))
}

/// Deletes one of the caller's variants (soft).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(("id" = Uuid, Path, description = "Variant id")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = VariantDeleted),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/auth/sidebar/variants/{id}")]
pub async fn delete_variant(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    id: Path<Uuid>,
) -> AppResult<web::Json<VariantDeleted>> {
    apply_delete(&req, &ctx, &state, id.into_inner()).await
}

/// Both forms of the variant deletion (path id, or the collection form in
/// [`super::variants_collection`]).
pub(crate) async fn apply_delete(
    req: &HttpRequest,
    ctx: &AuthContext,
    state: &State,
    id: Uuid,
) -> AppResult<web::Json<VariantDeleted>> {
    ctx.require(MANAGE)?;
    let scope = scope_of(req, ctx)?;
    let command = DeleteVariant { scope, id };
    let actor = ctx.actor();
    state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move { stoa_core::command::execute(conn, &actor, command).await })
        })
        .await?;
    Ok(web::Json(VariantDeleted { ok: true }))
}
