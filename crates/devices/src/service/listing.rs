//! Device lists as the handlers ask for them: paging, filters, cursor and
//! the page with its (capped) total.

use stoa_core::db::Db;
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::{AppError, AppResult, Page, PageQuery};
use uuid::Uuid;

use crate::dto::{DeviceList, DeviceListQuery, SortDir, SortField};
use crate::error::{DevicesError, MAX_IDS};
use crate::model::DeviceRow;
use crate::queries::{self, DeviceKey, ListFilter, Scope};

/// Paging of device lists: `pageSize` 1–100, default 50.
fn page_of(q: &DeviceListQuery) -> AppResult<Page> {
    PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(50, 100)
}

/// The filters of a list query (`userId` is decided by each handler).
pub fn list_filter(q: &DeviceListQuery) -> Result<ListFilter, AppError> {
    let ids = match q.ids.as_deref() {
        None => None,
        Some(raw) => {
            let parts: Vec<&str> = raw
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            if parts.len() > MAX_IDS {
                return Err(DevicesError::TooManyIds { max: MAX_IDS }.into());
            }
            let ids = parts
                .iter()
                .map(|p| {
                    p.parse::<Uuid>()
                        .map_err(|_| DevicesError::MalformedListId(p.chars().take(64).collect()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            (!ids.is_empty()).then_some(ids)
        }
    };
    Ok(ListFilter {
        user_id: None,
        platform: q.platform,
        ids,
        sort: q.sort_field.unwrap_or_default(),
        dir: q.sort_dir.unwrap_or(SortDir::Desc),
    })
}

/// The list request of a device list: paging, cursor (tagged with the
/// list's sort) and total mode.
pub fn list_request(q: &DeviceListQuery, params: &ListParams) -> AppResult<ListRequest<DeviceKey>> {
    let page = page_of(q)?;
    let tag = queries::cursor_tag(
        q.sort_field.unwrap_or_default(),
        q.sort_dir.unwrap_or(SortDir::Desc),
    );
    ListRequest::new(page, params, tag)
}

/// Runs a list query and shapes the page: one statement for the rows and
/// their (capped) total.
pub async fn run_list(
    db: &Db,
    scope: &Scope,
    filter: &ListFilter,
    req: &ListRequest<DeviceKey>,
) -> AppResult<DeviceList> {
    let mut conn = db.conn().await?;
    let (rows, counted) = queries::list(&mut conn, scope, filter, req).await?;
    Ok(list_page(req, rows, counted, filter.sort))
}

/// The page of `rows` (an empty one when the list matches nothing).
pub fn list_page(
    req: &ListRequest<DeviceKey>,
    rows: Vec<DeviceRow>,
    counted: Option<i64>,
    sort: SortField,
) -> DeviceList {
    let page = req.finish(rows, counted, |row| queries::key_of(row, sort));
    DeviceList {
        page: page.map(Into::into),
    }
}
