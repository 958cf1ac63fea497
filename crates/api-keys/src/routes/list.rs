//! `GET /api_keys/keys`: the caller's live keys.

use actix_web::{HttpRequest, HttpResponse, get, web};
use stoa_acl::{AuthContext, OrganizationDirectory, RoleDirectory};
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::read_cache::answer_json;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, PageQuery, Query};

use crate::error::ApiKeysError;
use crate::model::*;
use crate::service::{self, ListScope};

use super::*;

/// Lists the live keys of the caller's tenant and organization scope, newest
/// first. Never returns a secret or hash.
// A session's answer is kept (`stoa_core::http::read_cache`): the same page
// again is one statement while no key of the tenant, role or organization
// changed.
#[utoipa::path(
    tag = "API Keys",
    params(ApiKeyListQuery, ListParams),
    responses(
        (status = 200, body = ApiKeyList),
        (status = 400, body = ErrorBody, description = "Bad paging or cursor, or no tenant context"),
    )
)]
#[get("/api_keys/keys")]
pub async fn list_keys(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    roles: web::Data<dyn RoleDirectory>,
    organizations: web::Data<dyn OrganizationDirectory>,
    q: Query<ApiKeyListQuery>,
    params: Query<ListParams>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let tenant_id = ctx.tenant_id.ok_or(ApiKeysError::TenantRequired)?;
    let page = PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(20, 200)?;
    let req = service::list_request(page, &params)?;
    let scope = ListScope {
        tenant_id,
        organizations: ctx.acl.visible_organization_ids.as_deref(),
    };
    let mut conn = db.conn().await?;
    let listed = service::list(
        &mut conn,
        roles.get_ref(),
        organizations.get_ref(),
        &scope,
        q.search.as_deref(),
        &req,
    )
    .await?;
    answer_json(
        &http,
        ctx.read_owner(),
        &listed.list,
        listed.deps,
        listed.versions,
        None,
    )
}
