//! Deals as records files are attached to (`stoa_acl::RecordTarget`):
//! attachments asks here whether a deal exists in the caller's tenant and
//! in which organization (attachments then decides how far the caller
//! reaches it, with `AuthContext::reach`), without reading `customer_deals`
//! itself.

use std::sync::Arc;

use stoa_acl::{OrganizationColumn, RecordTarget};

use crate::DEALS_VIEW;

/// The entity id attachments (and the reference) give deals.
pub const DEAL_ENTITY: &str = "customers:customer_deal";

/// The slot: attaching to a deal needs to see deals; where one lives
/// is its `customer_deals` row's organization.
pub fn deal_target() -> RecordTarget {
    RecordTarget {
        entity_id: DEAL_ENTITY,
        module: "customers",
        features: &[DEALS_VIEW],
        checker: Arc::new(OrganizationColumn("customer_deals")),
    }
}
