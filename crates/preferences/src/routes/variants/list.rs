//! `GET /auth/sidebar/variants`.

use actix_web::{HttpRequest, get, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;
use stoa_core::i18n::request_locale;

use crate::routes::State;
use crate::service::variants;
use crate::sidebar::dto::VariantList;

/// The caller's live variants in the request's locale, oldest first.
#[utoipa::path(
    tag = "Authentication & Accounts",
    responses(
        (status = 200, body = VariantList),
        (status = 403, body = ErrorBody, description = "No user behind the credential"),
    )
)]
#[get("/auth/sidebar/variants")]
pub async fn list_variants(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
) -> AppResult<web::Json<VariantList>> {
    let scope = variants::scope(&ctx, request_locale(&req))?;
    Ok(web::Json(variants::list(&state, scope).await?))
}
