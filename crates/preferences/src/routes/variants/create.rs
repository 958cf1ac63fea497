//! `POST /auth/sidebar/variants`.

use actix_web::{HttpRequest, post, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::i18n::request_locale;
use stoa_core::{AppResult, Json};

use crate::routes::State;
use crate::service::variants;
use crate::sidebar::MANAGE;
use crate::sidebar::dto::{VariantInput, VariantResponse};

/// Creates a variant. Without a name (or with a blank one) it is called
/// "My preferences", "My preferences 2", …; `isActive:true` deactivates the
/// caller's other variants.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = VariantInput,
    responses(
        (status = 200, body = VariantResponse),
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
    let scope = variants::scope(&ctx, request_locale(&req))?;
    Ok(web::Json(
        variants::create(&state, &ctx, scope, body.into_inner()).await?,
    ))
}
