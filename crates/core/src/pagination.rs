//! Page-based pagination shared by every list endpoint.
//!
//! Clients send `page` (from 1) and `pageSize`; each endpoint sets its own
//! default and maximum. Out-of-range values answer 400 naming the parameter rather
//! than being silently clamped, so a client never mistakes a truncated page for
//! the whole list.

use serde::Deserialize;
use utoipa::IntoParams;
use validator::Validate;

use crate::error::AppError;

/// The raw `page` / `pageSize` query parameters.
#[derive(Debug, Default, Clone, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Page number, starting at 1 (default 1).
    pub page: Option<u64>,
    /// Items per page (default and maximum depend on the endpoint).
    pub page_size: Option<u64>,
}

/// Validated paging: which page, how big, and the SQL offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub page: u64,
    pub page_size: u64,
}

impl Page {
    pub fn offset(&self) -> i64 {
        i64::try_from((self.page - 1).saturating_mul(self.page_size)).unwrap_or(i64::MAX)
    }
    pub fn limit(&self) -> i64 {
        i64::try_from(self.page_size).unwrap_or(i64::MAX)
    }
}

/// Largest page number accepted; keeps offsets far from overflow.
pub const MAX_PAGE: u64 = 1_000_000;

impl PageQuery {
    /// Applies the endpoint's default and maximum page size.
    pub fn resolve(&self, default_size: u64, max_size: u64) -> Result<Page, AppError> {
        let page = self.page.unwrap_or(1);
        if !(1..=MAX_PAGE).contains(&page) {
            return Err(AppError::bad_request(format!(
                "Invalid query parameters: page: must be between 1 and {MAX_PAGE}"
            )));
        }
        let page_size = self.page_size.unwrap_or(default_size);
        if !(1..=max_size).contains(&page_size) {
            return Err(AppError::bad_request(format!(
                "Invalid query parameters: pageSize: must be between 1 and {max_size}"
            )));
        }
        Ok(Page { page, page_size })
    }
}

/// Number of pages for `total` items; at least 1, as the reference reports.
pub fn total_pages(total: u64, page_size: u64) -> u64 {
    total.div_ceil(page_size.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(page: Option<u64>, page_size: Option<u64>) -> PageQuery {
        PageQuery { page, page_size }
    }

    #[test]
    fn defaults_and_bounds() {
        assert_eq!(
            q(None, None).resolve(50, 200).ok(),
            Some(Page {
                page: 1,
                page_size: 50
            })
        );
        assert_eq!(
            q(Some(3), Some(200)).resolve(50, 200).ok(),
            Some(Page {
                page: 3,
                page_size: 200
            })
        );
        for bad in [
            q(Some(0), None),
            q(None, Some(0)),
            q(None, Some(201)),
            q(Some(MAX_PAGE + 1), None),
        ] {
            let err = bad.resolve(50, 200).err();
            assert_eq!(err.map(|e| e.status().as_u16()), Some(400), "{bad:?}");
        }
    }

    #[test]
    fn offsets_and_page_counts() {
        let page = Page {
            page: 3,
            page_size: 20,
        };
        assert_eq!((page.offset(), page.limit()), (40, 20));
        assert_eq!(total_pages(0, 50), 1);
        assert_eq!(total_pages(50, 50), 1);
        assert_eq!(total_pages(51, 50), 2);
    }
}
