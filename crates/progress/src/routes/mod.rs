//! Thin handlers of `/progress/...`, what clients poll while long operations
//! run. One handler per file; `update.rs` and `cancel.rs` also hold the code
//! their collection forms (`update_by_body.rs`, `cancel_by_query.rs`, as Open
//! Mercato clients send them) share.

pub mod active;
pub mod cancel;
pub mod cancel_by_query;
pub mod create;
pub mod detail;
pub mod list;
pub mod update;
pub mod update_by_body;

use diesel_async::AsyncPgConnection;
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::collection::CollectionId;
use uuid::Uuid;

use crate::error::ProgressError;
use crate::queries::{self, OrgScope};
use crate::service::ProgressJob;

/// The caller's scope: tenant (required), the selected organization, and a
/// restricted caller's organizations (docs/security.md: a selection only
/// narrows).
pub(crate) fn scope(ctx: &AuthContext) -> AppResult<(Uuid, OrgScope)> {
    let tenant = ctx.tenant_id.ok_or(ProgressError::NoTenant)?;
    Ok((
        tenant,
        OrgScope {
            selected: ctx.organization_id(),
            allowed: ctx.organization_restriction().map(<[Uuid]>::to_vec),
            me: ctx.user_id,
        },
    ))
}

/// The job `raw` names in the caller's scope; a malformed id is "not found".
pub(crate) async fn find(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    raw: &str,
) -> AppResult<ProgressJob> {
    let (tenant, org) = scope(ctx)?;
    let id: Uuid = raw.parse().map_err(|_| ProgressError::JobNotFound)?;
    Ok(queries::job(conn, tenant, &org, id)
        .await?
        .ok_or(ProgressError::JobNotFound)?)
}

/// No id at all is a 400; a malformed one is "not found", as on the path form.
pub(crate) fn require_id(id: &CollectionId) -> AppResult<()> {
    match id.0 {
        Some(_) => Ok(()),
        None => Err(ProgressError::InvalidQuery("id: a uuid is required".into()).into()),
    }
}

#[cfg(test)]
mod tests {
    use actix_web::http::StatusCode;

    use super::*;

    #[test]
    fn a_caller_without_a_tenant_is_forbidden_as_everywhere() {
        let ctx = AuthContext::for_user(None, None, Uuid::nil());
        let status = scope(&ctx).err().map(|e| e.status());
        assert_eq!(status, Some(StatusCode::FORBIDDEN));
    }
}
