//! `GET /business_rules/platform-call-options`.

use actix_web::{get, web};
use stoa_acl::accounts::CreatorResolver;
use stoa_acl::{AuthContext, KeyDirectory, Registry};
use stoa_core::AppResult;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::system::OpenApiJson;

use crate::dto::CallOptions;
use crate::error::RulesError;
use crate::service::options;
use crate::{API_KEYS_CREATE, MANAGE};

/// The platform operations a rule action could call, with the features each
/// requires (parameterised paths left out) and its `summary` and
/// `operationId` from this server's OpenAPI document, and the API keys a
/// rule of the caller may run as (keys reaching no further than the caller).
#[utoipa::path(
    tag = "Business rules",
    responses(
        (status = 200, body = CallOptions),
        (status = 400, body = ErrorBody, description = "`Tenant context required`"),
    )
)]
#[get("/business_rules/platform-call-options")]
pub async fn call_options(
    ctx: AuthContext,
    registry: web::Data<Registry>,
    db: web::Data<Db>,
    creators: web::Data<dyn CreatorResolver>,
    keys: web::Data<dyn KeyDirectory>,
    doc: web::Data<OpenApiJson>,
) -> AppResult<web::Json<CallOptions>> {
    ctx.require_all(&[MANAGE, API_KEYS_CREATE])?;
    let tenant = ctx.tenant_id.ok_or(RulesError::TenantRequired)?;
    let docs = options::documented(doc.into_inner());
    let mut answer = options::call_options(&registry, Some(&docs));
    answer.api_keys =
        options::api_keys(&db, keys.get_ref(), creators.get_ref(), &ctx, tenant).await?;
    Ok(web::Json(answer))
}
