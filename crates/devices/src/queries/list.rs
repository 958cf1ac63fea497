//! Device lists: the filter, the keyset cursor of each order and the page
//! query with its capped count in one statement.

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use stoa_core::list::ListRequest;
use time::OffsetDateTime;
use uuid::Uuid;

use super::Scope;
use crate::dto::{SortDir, SortField};
use crate::model::{DeviceRow, Platform};
use crate::schema::user_devices::{self, dsl as d};

/// What a list shows.
#[derive(Clone, Debug)]
pub struct ListFilter {
    pub user_id: Option<Uuid>,
    pub platform: Option<Platform>,
    pub ids: Option<Vec<Uuid>>,
    pub sort: SortField,
    pub dir: SortDir,
}

type Boxed = user_devices::BoxedQuery<'static, Pg>;

fn filtered(scope: &Scope, filter: &ListFilter) -> Boxed {
    let mut q = d::user_devices
        .filter(d::tenant_id.eq(scope.tenant_id))
        .filter(d::deleted_at.is_null())
        .into_boxed();
    if let Some(orgs) = &scope.visible_organizations {
        q = q.filter(d::organization_id.eq_any(orgs.clone()));
    }
    if let Some(user) = filter.user_id {
        q = q.filter(d::user_id.eq(user));
    }
    if let Some(platform) = filter.platform {
        q = q.filter(d::platform.eq(platform.as_str()));
    }
    if let Some(ids) = &filter.ids {
        q = q.filter(d::id.eq_any(ids.clone()));
    }
    q
}

/// The sort key of a device-list cursor: the sorted timestamp in unix
/// microseconds (Postgres' precision) and the id.
pub type DeviceKey = (i64, Uuid);

/// The cursor tag of a device list in `sort`/`dir` order (a cursor of one
/// order is 400 in another).
pub fn cursor_tag(sort: SortField, dir: SortDir) -> &'static str {
    match (sort, dir) {
        (SortField::LastSeenAt, SortDir::Asc) => "devices:lastSeenAt:asc",
        (SortField::LastSeenAt, SortDir::Desc) => "devices:lastSeenAt:desc",
        (SortField::CreatedAt, SortDir::Asc) => "devices:createdAt:asc",
        (SortField::CreatedAt, SortDir::Desc) => "devices:createdAt:desc",
        (SortField::UpdatedAt, SortDir::Asc) => "devices:updatedAt:asc",
        (SortField::UpdatedAt, SortDir::Desc) => "devices:updatedAt:desc",
    }
}

/// The sort key of `row` in `sort` order.
pub fn key_of(row: &DeviceRow, sort: SortField) -> DeviceKey {
    let at = match sort {
        SortField::LastSeenAt => row.last_seen_at,
        SortField::CreatedAt => row.created_at,
        SortField::UpdatedAt => row.updated_at,
    };
    let micros = at.unix_timestamp_nanos() / 1_000;
    (i64::try_from(micros).unwrap_or(i64::MAX), row.id)
}

/// The list's filter plus, in keyset mode, "after the cursor's row" in the
/// list's order (`(col, id) < (..)` descending, `>` ascending).
fn windowed(
    scope: &Scope,
    filter: &ListFilter,
    after: Option<&DeviceKey>,
) -> Result<Boxed, AppError> {
    let mut q = filtered(scope, filter);
    if let Some((micros, id)) = after {
        let at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(*micros) * 1_000).map_err(
            |_| {
                AppError::bad_request("Invalid query parameters: cursor: not a cursor of this list")
            },
        )?;
        let column = match filter.sort {
            SortField::LastSeenAt => "(user_devices.last_seen_at, user_devices.id) ",
            SortField::CreatedAt => "(user_devices.created_at, user_devices.id) ",
            SortField::UpdatedAt => "(user_devices.updated_at, user_devices.id) ",
        };
        let op = match filter.dir {
            SortDir::Asc => "> (",
            SortDir::Desc => "< (",
        };
        q = q.filter(
            diesel::dsl::sql::<Bool>(column)
                .sql(op)
                .bind::<Timestamptz, _>(at)
                .sql(", ")
                .bind::<diesel::sql_types::Uuid, _>(*id)
                .sql(")"),
        );
    }
    Ok(q)
}

/// One page of live devices in `scope` matching `filter`, with the (capped)
/// count of `req` in the same statement: `(rows, counted)`. `counted` is
/// `None` when the page is empty and there was nothing to count it with
/// (a second statement counts then, for pages past the end only).
pub async fn list(
    conn: &mut AsyncPgConnection,
    scope: &Scope,
    filter: &ListFilter,
    req: &ListRequest<DeviceKey>,
) -> Result<(Vec<DeviceRow>, Option<i64>), AppError> {
    let after = req.after.as_ref();
    let q = windowed(scope, filter, after)?;
    // Ties go to the id, in the same direction, so pages never overlap.
    let q = match (filter.sort, filter.dir) {
        (SortField::LastSeenAt, SortDir::Asc) => q.order((d::last_seen_at.asc(), d::id.asc())),
        (SortField::LastSeenAt, SortDir::Desc) => q.order((d::last_seen_at.desc(), d::id.desc())),
        (SortField::CreatedAt, SortDir::Asc) => q.order((d::created_at.asc(), d::id.asc())),
        (SortField::CreatedAt, SortDir::Desc) => q.order((d::created_at.desc(), d::id.desc())),
        (SortField::UpdatedAt, SortDir::Asc) => q.order((d::updated_at.asc(), d::id.asc())),
        (SortField::UpdatedAt, SortDir::Desc) => q.order((d::updated_at.desc(), d::id.desc())),
    };
    let counted_query = windowed(scope, filter, after)?.select(d::id);
    let rows: Vec<(DeviceRow, i64)> = q
        .select((DeviceRow::as_select(), req.count(counted_query)))
        .offset(req.offset())
        .limit(req.limit())
        .load(conn)
        .await?;
    let mut counted = <[(DeviceRow, i64)]>::first(&rows).map(|(_, n)| *n);
    if req.needs_separate_count(rows.len()) {
        let again = windowed(scope, filter, after)?.select(d::id);
        counted = Some(diesel::select(req.count(again)).get_result(conn).await?);
    }
    Ok((rows.into_iter().map(|(row, _)| row).collect(), counted))
}
