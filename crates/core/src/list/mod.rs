//! The shape every list endpoint follows: one statement for the page and its
//! total, capped counts, and keyset (cursor) paging.
//!
//! - **Page and total in one statement.** The page query selects, next to its
//!   columns, [`CountUpTo`]: `(SELECT count(*) FROM (<the page's filter> LIMIT
//!   n) AS c)`, an uncorrelated subquery Postgres runs once per statement.
//!   Names and other related values are selected by subqueries in the same
//!   statement, never fetched per list.
//! - **Capped counts.** By default the count stops [`COUNT_AHEAD`] rows past
//!   the window's start: `total` is exact below that and `totalCapped: true`
//!   beyond it. `includeTotal=true` counts exactly; `includeTotal=false` does
//!   not count (`total` is then what the client has seen so far).
//! - **Keyset paging.** Every page of a list with a stable order carries
//!   `nextCursor` when more rows follow; sending it back as `cursor` continues
//!   after the page's last row through the sort index, so deep pages cost the
//!   same as the first. `page`/`pageSize` keep working as before.
//!
//! A cursor is base64url JSON: a version, the list's sort tag, the number of
//! rows before the page it opens and the sort key of the last row seen. It is
//! opaque to clients; any cursor that does not decode, belongs to another list
//! or sort, or carries values of the wrong type answers 400. A forged cursor
//! can only move the position inside what the caller's filters already allow:
//! its key values are bound as parameters and every visibility filter still
//! applies.

mod count;
mod cursor;
mod window;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use validator::Validate;

use crate::error::AppError;
use crate::pagination::{Page, total_pages};

pub use count::CountUpTo;

// The one type every list's `sortDir` uses. It has no default on purpose:
// each list names its own (`q.sort_dir.unwrap_or(SortDir::Desc)`), as the
// reference's defaults differ per route.
/// A list's sort direction, `asc` or `desc`. Without it, each list uses its
/// own default order (see the list's description).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortDir {
    Asc,
    Desc,
}
pub use cursor::{decode_cursor, encode_cursor};
pub use window::{InPage, in_page};

/// How far past the window's start the default count looks (20 pages of 50).
pub const COUNT_AHEAD: i64 = 1_000;

/// The query parameters every large list accepts besides `page`/`pageSize`.
/// Handlers take them as a second `Query<ListParams>` extractor (both read
/// the same query string) and name both in `params(...)`.
#[derive(Debug, Default, Clone, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// `nextCursor` of the previous page: continues right after it (keyset
    /// paging; `page` is then ignored).
    #[validate(length(max = 2048))]
    pub cursor: Option<String>,
    /// Omitted: `total` is exact up to 1,000 rows past the page's start
    /// (`totalCapped: true` beyond); `true`: always exact; `false`: not counted.
    pub include_total: Option<String>,
}

/// What the client asked to know about the total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TotalMode {
    /// Exact up to [`COUNT_AHEAD`] past the window's start.
    Capped,
    /// Exact, however many.
    Exact,
    /// Not counted.
    Skip,
}

impl TotalMode {
    /// `true/1/yes/on` → exact; any other given value → skip; absent → capped.
    pub fn parse(raw: Option<&str>) -> Self {
        match raw.map(str::trim).map(str::to_ascii_lowercase).as_deref() {
            None => Self::Capped,
            Some("true" | "1" | "yes" | "on") => Self::Exact,
            Some(_) => Self::Skip,
        }
    }
}

/// A resolved list request: window, keyset position and total mode.
#[derive(Debug, Clone)]
pub struct ListRequest<K> {
    /// Page size, and the page number reported back.
    pub page: Page,
    /// Rows before this page (from `page`, or carried by the cursor).
    pub before: u64,
    /// Keyset mode: the sort key of the last row of the previous page.
    pub after: Option<K>,
    pub total: TotalMode,
    tag: &'static str,
}

impl<K: Serialize + DeserializeOwned> ListRequest<K> {
    /// `page` is already validated (`PageQuery::resolve`); a cursor replaces
    /// its page number.
    pub fn new(page: Page, params: &ListParams, tag: &'static str) -> Result<Self, AppError> {
        let total = TotalMode::parse(params.include_total.as_deref());
        match params.cursor.as_deref().filter(|c| !c.trim().is_empty()) {
            Some(raw) => {
                let (before, key) = decode_cursor::<K>(tag, raw)?;
                Ok(Self {
                    page: Page {
                        page: before / page.page_size + 1,
                        page_size: page.page_size,
                    },
                    before,
                    after: Some(key),
                    total,
                    tag,
                })
            }
            None => Ok(Self {
                before: page.page.saturating_sub(1).saturating_mul(page.page_size),
                page,
                after: None,
                total,
                tag,
            }),
        }
    }

    /// The SQL `OFFSET`: 0 in keyset mode (the key condition does the skipping).
    pub fn offset(&self) -> i64 {
        if self.after.is_some() {
            0
        } else {
            i64::try_from(self.before).unwrap_or(i64::MAX)
        }
    }

    pub fn limit(&self) -> i64 {
        self.page.limit()
    }

    /// How many rows the count subquery may look at; `None` = all of them.
    pub fn count_limit(&self) -> Option<i64> {
        match self.total {
            TotalMode::Exact => None,
            TotalMode::Skip => Some(0),
            TotalMode::Capped => Some(self.offset().saturating_add(COUNT_AHEAD + 1)),
        }
    }

    /// The count subquery over `filtered` (the page's filter, keyset
    /// condition included, without order or window).
    pub fn count<Q>(&self, filtered: Q) -> CountUpTo<Q> {
        CountUpTo::new(filtered, self.count_limit())
    }

    /// Whether the total must be counted by a second statement: the count
    /// travels with the rows, so a page past the end (no rows) does not
    /// carry it. Happens only for out-of-range pages.
    pub fn needs_separate_count(&self, rows: usize) -> bool {
        rows == 0 && self.total != TotalMode::Skip && (self.before > 0)
    }

    /// Builds the envelope from the page's items, the count the statement
    /// returned (`None` when there were no rows or no count) and each item's
    /// sort key.
    pub fn finish<T>(
        &self,
        items: Vec<T>,
        counted: Option<i64>,
        key_of: impl Fn(&T) -> K,
    ) -> ListPage<T> {
        let seen = items.len() as u64;
        let sql_offset = u64::try_from(self.offset()).unwrap_or(0);
        // Rows counted by the subquery start at the keyset position (keyset
        // mode) or at the list's start (page mode).
        let counted_from = self.before - sql_offset;
        let (total, total_capped) = match (self.total, counted) {
            (TotalMode::Skip, _) => (self.before + seen, false),
            (_, None) => (self.before + seen, false),
            (TotalMode::Exact, Some(n)) => (counted_from + u64::try_from(n).unwrap_or(0), false),
            (TotalMode::Capped, Some(n)) => {
                let n = u64::try_from(n).unwrap_or(0);
                let cap = sql_offset + COUNT_AHEAD as u64;
                if n > cap {
                    (counted_from + cap, true)
                } else {
                    (counted_from + n, false)
                }
            }
        };
        let full = seen == self.page.page_size;
        // More rows follow when the count says so, or (not counted) when the
        // page is full.
        let more =
            full && (self.total == TotalMode::Skip || total_capped || total > self.before + seen);
        let next_cursor = if more {
            items
                .last()
                .and_then(|last| encode_cursor(self.tag, self.before + seen, &key_of(last)))
        } else {
            None
        };
        ListPage {
            total,
            page: self.page.page,
            page_size: self.page.page_size,
            total_pages: total_pages(total, self.page.page_size),
            total_capped,
            next_cursor,
            items,
        }
    }
}

/// The list envelope: `{items, total, page, pageSize, totalPages,
/// totalCapped, nextCursor}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListPage<T> {
    pub items: Vec<T>,
    pub total: u64,
    pub page: u64,
    pub page_size: u64,
    pub total_pages: u64,
    /// True when more rows match than the default count looked at (1,000
    /// past the page's start); `total` is then that bound. Ask with
    /// `includeTotal=true` for the exact number.
    pub total_capped: bool,
    /// Send as `cursor` to read the next page by key (absent on the last page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl<T> ListPage<T> {
    /// The page with each item turned into what the list shows.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> ListPage<U> {
        ListPage {
            items: self.items.into_iter().map(f).collect(),
            total: self.total,
            page: self.page,
            page_size: self.page_size,
            total_pages: self.total_pages,
            total_capped: self.total_capped,
            next_cursor: self.next_cursor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(page: u64, size: u64, params: &ListParams) -> ListRequest<(String, u32)> {
        ListRequest::new(
            Page {
                page,
                page_size: size,
            },
            params,
            "test:name",
        )
        .unwrap_or_else(|e| panic!("{}", e.status()))
    }

    #[test]
    fn totals_are_capped_by_default() {
        let req = request(1, 2, &ListParams::default());
        let items = vec![("a".to_string(), 1), ("b".to_string(), 2)];
        let page = req.finish(items.clone(), Some(1001), |i| i.clone());
        assert_eq!((page.total, page.total_capped), (1000, true));
        assert!(page.next_cursor.is_some());
        let page = req.finish(items.clone(), Some(2), |i| i.clone());
        assert_eq!((page.total, page.total_capped), (2, false));
        assert_eq!(page.next_cursor, None, "nothing follows");
        let page = req.finish(items, Some(7), |i| i.clone());
        assert_eq!((page.total, page.total_pages), (7, 4));
    }

    #[test]
    fn cursors_round_trip_and_carry_the_position() {
        let req = request(3, 2, &ListParams::default());
        assert_eq!((req.offset(), req.count_limit()), (4, Some(1005)));
        let page = req.finish(
            vec![("a".into(), 1), ("b".into(), 2)],
            Some(9),
            |i: &(String, u32)| i.clone(),
        );
        let cursor = page.next_cursor.unwrap_or_default();
        let next = request(
            1,
            2,
            &ListParams {
                cursor: Some(cursor),
                include_total: None,
            },
        );
        assert_eq!(next.after, Some(("b".to_string(), 2)));
        assert_eq!((next.before, next.page.page, next.offset()), (6, 4, 0));
        // Counted from the key on: 3 remain after the 6 before.
        let last = next.finish(vec![("c".into(), 3)], Some(3), |i| i.clone());
        assert_eq!((last.total, last.total_capped), (9, false));
    }

    #[test]
    fn bad_cursors_are_400() {
        let good = encode_cursor("other:list", 2, &("x", 1)).unwrap_or_default();
        let wrong_type = encode_cursor("test:name", 2, &(1, "x")).unwrap_or_default();
        for raw in ["%%%", "bm90IGpzb24", good.as_str(), wrong_type.as_str()] {
            let err = ListRequest::<(String, u32)>::new(
                Page {
                    page: 1,
                    page_size: 2,
                },
                &ListParams {
                    cursor: Some(raw.to_string()),
                    include_total: None,
                },
                "test:name",
            )
            .err();
            assert_eq!(err.map(|e| e.status().as_u16()), Some(400), "{raw}");
        }
    }

    #[test]
    fn total_modes() {
        assert_eq!(TotalMode::parse(None), TotalMode::Capped);
        assert_eq!(TotalMode::parse(Some("true")), TotalMode::Exact);
        assert_eq!(TotalMode::parse(Some("false")), TotalMode::Skip);
        let req = request(
            2,
            2,
            &ListParams {
                cursor: None,
                include_total: Some("false".into()),
            },
        );
        assert_eq!(req.count_limit(), Some(0));
        let page = req.finish(vec![("a".into(), 1)], Some(0), |i| i.clone());
        assert_eq!((page.total, page.next_cursor), (3, None));
    }
}
