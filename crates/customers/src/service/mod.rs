//! The module's rules. Reads take a connection; writes open the transaction,
//! lock what they check and run the command through the bus.

pub mod deal_bulk;
pub mod deals;
pub mod pipelines;
pub mod stages;

use stoa_acl::AuthContext;
use stoa_core::AppError;
use uuid::Uuid;

use crate::error::CustomersError;

/// The organization a new record goes to: the selected one, else the
/// caller's home organization (a caller acting across every organization).
pub fn target_organization(ctx: &AuthContext) -> Result<Uuid, AppError> {
    let org = ctx
        .organization_id()
        .or(ctx.home_organization_id)
        .ok_or(CustomersError::OrganizationRequired)?;
    ctx.require_organizations([Some(org)])?;
    Ok(org)
}

/// The organizations the caller reads (`None`: every one of the tenant).
pub fn visible(ctx: &AuthContext) -> Option<&[Uuid]> {
    ctx.acl.visible_organization_ids.as_deref()
}
