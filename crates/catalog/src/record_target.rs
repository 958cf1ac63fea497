//! Products as records files are attached to (`stoa_acl::RecordTarget`):
//! attachments asks here whether a product exists in the caller's tenant and
//! in which organization (attachments then decides how far the caller
//! reaches it, with `AuthContext::reach`), without reading `catalog_products`
//! itself.

use std::sync::Arc;

use stoa_acl::{OrganizationColumn, RecordTarget};

use crate::VIEW;

/// The entity id attachments (and the reference) give products.
pub const PRODUCT_ENTITY: &str = "catalog:catalog_product";

/// The slot: attaching to a product needs to see products; where one lives
/// is its `catalog_products` row's organization.
pub fn product_target() -> RecordTarget {
    RecordTarget {
        entity_id: PRODUCT_ENTITY,
        module: "catalog",
        features: &[VIEW],
        checker: Arc::new(OrganizationColumn("catalog_products")),
    }
}
