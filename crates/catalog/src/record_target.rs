//! Products as records files are attached to (`stoa_acl::RecordTarget`):
//! attachments asks here whether a product exists in the caller's tenant and
//! in which organization (attachments then decides how far the caller
//! reaches it, with `AuthContext::reach`), without reading `catalog_products`
//! itself.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::{RecordChecker, RecordTarget};
use stoa_core::AppError;
use uuid::Uuid;

use crate::VIEW;
use crate::schema::catalog_products as p;

/// The entity id attachments (and the reference) give products.
pub const PRODUCT_ENTITY: &str = "catalog:catalog_product";

struct Products;

impl RecordChecker for Products {
    fn organization_of<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        record_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Option<Uuid>>, AppError>> {
        Box::pin(async move {
            let Ok(id) = Uuid::parse_str(record_id.trim()) else {
                return Ok(None);
            };
            let organization: Option<Uuid> = p::table
                .filter(p::id.eq(id))
                .filter(p::tenant_id.eq(tenant))
                .select(p::organization_id)
                .first(conn)
                .await
                .optional()?;
            Ok(organization.map(Some))
        })
    }
}

/// The slot: attaching to a product needs to see products.
pub fn product_target() -> RecordTarget {
    RecordTarget {
        entity_id: PRODUCT_ENTITY,
        module: "catalog",
        features: &[VIEW],
        checker: Arc::new(Products),
    }
}
