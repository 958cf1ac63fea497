//! Thin handlers: extract, authorize, call the service, respond. One handler
//! per file: `tenants/`, `organizations/` and `lookup/` hold one file per
//! verb; `switcher.rs` is the organization switcher.

pub mod lookup;
pub mod organizations;
pub mod switcher;
pub mod tenants;

use actix_web::http::StatusCode;
use stoa_acl::AuthContext;
use stoa_core::collection::CollectionId;
use stoa_core::{AppError, AppResult};
use uuid::Uuid;

/// Tenant management needs the feature and the super-admin flag.
pub(crate) fn require_super_admin(ctx: &AuthContext, feature: &str) -> Result<(), AppError> {
    ctx.require(feature)?;
    if ctx.is_super_admin() {
        Ok(())
    } else {
        Err(AppError::new(StatusCode::FORBIDDEN, "Forbidden")
            .with_field("requiredFeatures", [feature]))
    }
}

/// The preamble the tenant and organization deletes share: `authorize` the
/// caller first (a refused caller learns nothing of the id; its result, e.g.
/// the tenant acted in, is handed back), then read the id from the query or
/// the JSON body.
pub(crate) fn delete_target<T>(
    ctx: &AuthContext,
    id: &CollectionId,
    authorize: impl FnOnce(&AuthContext) -> AppResult<T>,
) -> AppResult<(T, Uuid)> {
    let authorized = authorize(ctx)?;
    Ok((authorized, id.uuid()?))
}

pub(crate) use stoa_core::command::with_operation;
