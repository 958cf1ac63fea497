//! Deals as records files are attached to (`stoa_acl::RecordTarget`):
//! attachments asks here whether a deal exists in the caller's tenant and
//! in which organization (attachments then decides how far the caller
//! reaches it, with `AuthContext::reach`), without reading `customer_deals`
//! itself.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::{RecordChecker, RecordTarget};
use stoa_core::AppError;
use uuid::Uuid;

use crate::DEALS_VIEW;
use crate::schema::customer_deals as d;

/// The entity id attachments (and the reference) give deals.
pub const DEAL_ENTITY: &str = "customers:customer_deal";

struct Deals;

impl RecordChecker for Deals {
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
            let organization: Option<Uuid> = d::table
                .filter(d::id.eq(id))
                .filter(d::tenant_id.eq(tenant))
                .select(d::organization_id)
                .first(conn)
                .await
                .optional()?;
            Ok(organization.map(Some))
        })
    }
}

/// The slot: attaching to a deal needs to see deals.
pub fn deal_target() -> RecordTarget {
    RecordTarget {
        entity_id: DEAL_ENTITY,
        module: "customers",
        features: &[DEALS_VIEW],
        checker: Arc::new(Deals),
    }
}
