//! Deals as records files are attached to (`stoa_acl::RecordTarget`):
//! attachments asks here whether a deal exists in the caller's tenant and
//! how far the caller reaches it, without reading `customer_deals` itself.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::{AuthContext, RecordChecker, RecordTarget, TargetRecord};
use stoa_core::AppError;
use uuid::Uuid;

use crate::DEALS_VIEW;
use crate::schema::customer_deals as d;

/// The entity id attachments (and the reference) give deals.
pub const DEAL_ENTITY: &str = "customers:customer_deal";

struct Deals;

impl RecordChecker for Deals {
    fn find<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        auth: &'a AuthContext,
        record_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TargetRecord>, AppError>> {
        Box::pin(async move {
            let (Ok(id), Some(tenant)) = (Uuid::parse_str(record_id.trim()), auth.tenant_id) else {
                return Ok(None);
            };
            let organization: Option<Uuid> = d::table
                .filter(d::id.eq(id))
                .filter(d::tenant_id.eq(tenant))
                .select(d::organization_id)
                .first(conn)
                .await
                .optional()?;
            Ok(organization.map(|org| TargetRecord {
                organization_id: Some(org),
                reach: auth.reach(Some(tenant), Some(org)),
            }))
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
