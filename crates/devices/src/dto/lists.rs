//! List queries and the response bodies.

use serde::{Deserialize, Serialize};
use stoa_core::list::ListPage;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use crate::model::{DeviceItem, Platform};

/// How lists are sorted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[schema(as = DeviceSortField)]
#[serde(rename_all = "camelCase")]
pub enum SortField {
    #[default]
    LastSeenAt,
    CreatedAt,
    UpdatedAt,
}

/// `asc` or `desc` (the device lists' default: `desc`).
pub use stoa_core::list::SortDir;

/// `GET /devices` and `GET /devices/admin/devices`.
#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct DeviceListQuery {
    /// Page number, from 1 (default 1).
    pub page: Option<u64>,
    /// 1–100 (default 50).
    pub page_size: Option<u64>,
    #[param(inline)]
    pub platform: Option<Platform>,
    /// Admin list: any user of the tenant. Own list: another user only with
    /// `devices.admin` (otherwise nothing matches).
    pub user_id: Option<Uuid>,
    /// `lastSeenAt` (default), `createdAt` or `updatedAt`.
    #[param(inline)]
    pub sort_field: Option<SortField>,
    /// `asc` or `desc` (default).
    #[param(inline)]
    pub sort_dir: Option<SortDir>,
    /// Comma-separated device ids, at most 200.
    pub ids: Option<String>,
}

/// A page of devices.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<DeviceItem>,
}

/// One device (admin detail).
#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceDetail {
    pub item: DeviceItem,
}

/// The answer to a registration.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceRegistered {
    pub id: Uuid,
    pub device_id: String,
    /// Whether a deactivated device came back.
    pub revived: bool,
}

/// The answer to an update.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceUpdated {
    pub ok: bool,
    pub id: Uuid,
}

/// `{ok: true}`: the device is deactivated.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceDeactivated {
    pub ok: bool,
}
