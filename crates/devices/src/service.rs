//! The rules of devices: scope, lists, registration (upsert and revive),
//! updates, deactivation, and putting back a logged state (undo/redo).
//!
//! Every function takes a connection, so callers compose them into one
//! transaction with the command bus; none knows HTTP. Every query filters by
//! the tenant.

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::AppError;
use stoa_core::list::ListRequest;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::dto::{SortDir, SortField, UpdateDevice};
use crate::error::DevicesError;
use crate::model::{DeviceRow, DeviceState, Platform};
use crate::schema::user_devices::{self, dsl as d};
use crate::secrets::StoredToken;

/// Where a caller works (moved to stoa-acl, shared by every module).
pub use stoa_acl::Scope;

/// The organization a caller's own writes go to: the selected one, else the
/// home organization (when the caller acts in its own tenant).
pub fn write_organization(ctx: &AuthContext) -> Option<Uuid> {
    ctx.organization_id().or_else(|| {
        ctx.home_organization_id
            .filter(|_| ctx.tenant_id.is_some() && ctx.tenant_id == ctx.actor_tenant_id)
    })
}

/// What a list shows.
#[derive(Clone, Debug, Default)]
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

/// A live device of the tenant.
pub async fn find_live(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    id: Uuid,
) -> QueryResult<Option<DeviceRow>> {
    d::user_devices
        .filter(d::id.eq(id))
        .filter(d::tenant_id.eq(tenant))
        .filter(d::deleted_at.is_null())
        .select(DeviceRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// A live device of the tenant, locked until the transaction ends.
pub async fn lock_live(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    id: Uuid,
) -> QueryResult<Option<DeviceRow>> {
    d::user_devices
        .filter(d::id.eq(id))
        .filter(d::tenant_id.eq(tenant))
        .filter(d::deleted_at.is_null())
        .select(DeviceRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()
}

/// Column changes; `None` leaves a column alone, `Some(None)` clears it.
#[derive(AsChangeset, Default)]
#[diesel(table_name = user_devices)]
struct DeviceChanges {
    platform: Option<String>,
    client_app_version: Option<Option<String>>,
    os_version: Option<Option<String>>,
    locale: Option<Option<String>>,
    push_token: Option<Option<String>>,
    push_token_hash: Option<Option<String>>,
    push_token_fingerprint: Option<Option<String>>,
    push_provider: Option<Option<String>>,
    push_token_updated_at: Option<Option<OffsetDateTime>>,
    last_seen_at: Option<OffsetDateTime>,
    deleted_at: Option<Option<OffsetDateTime>>,
}

async fn apply(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    changes: &DeviceChanges,
) -> Result<DeviceRow, DevicesError> {
    Ok(diesel::update(d::user_devices.filter(d::id.eq(id)))
        .set(changes)
        .returning(DeviceRow::as_returning())
        .get_result(conn)
        .await?)
}

/// A registration: who, where, and what the client sent.
#[derive(Debug)]
pub struct Registration {
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub user_id: Uuid,
    /// Trimmed.
    pub device_id: String,
    pub platform: Platform,
    /// Tri-state: absent keeps, `null` clears.
    pub client_app_version: Option<Option<String>>,
    pub os_version: Option<Option<String>>,
    pub locale: Option<Option<String>>,
    /// Used when the body has no `locale` and the device has none yet
    /// (the best match of `Accept-Language`).
    pub default_locale: Option<String>,
    /// Already sealed ([`crate::secrets::seal`]): the plaintext never
    /// reaches the service.
    pub push_token: Option<StoredToken>,
    pub push_provider: Option<String>,
}

impl DeviceChanges {
    /// Stores `token` (sealed), or clears it with `None`.
    fn push(mut self, token: Option<&StoredToken>) -> Self {
        self.push_token = Some(token.map(|t| t.ciphertext.clone()));
        self.push_token_hash = Some(token.map(|t| t.hash.clone()));
        self.push_token_fingerprint = Some(token.map(|t| t.fingerprint.clone()));
        self
    }
}

/// What a registration did.
#[derive(Clone, Debug)]
pub struct Registered {
    /// The row before (`None` when the registration created it).
    pub before: Option<DeviceRow>,
    pub after: DeviceRow,
    /// Whether a deactivated device came back.
    pub revived: bool,
}

/// Registers a device: updates the live row with the same key, else revives
/// the most recently deactivated one, else inserts. A concurrent insert of the
/// same key answers [`DevicesError::AlreadyRegistered`].
pub async fn register(
    conn: &mut AsyncPgConnection,
    r: &Registration,
) -> Result<Registered, DevicesError> {
    let existing: Option<DeviceRow> = d::user_devices
        .filter(d::tenant_id.eq(r.tenant_id))
        .filter(d::user_id.eq(r.user_id))
        .filter(d::device_id.eq(&r.device_id))
        .filter(d::organization_id.is_not_distinct_from(r.organization_id))
        .order(d::deleted_at.desc().nulls_first())
        .select(DeviceRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?;
    let now = OffsetDateTime::now_utc();
    let token = r.push_token.as_ref();
    match existing {
        Some(before) => {
            let locale = r.locale.clone().or_else(|| {
                before
                    .locale
                    .is_none()
                    .then(|| r.default_locale.clone())
                    .flatten()
                    .map(Some)
            });
            let changes = DeviceChanges {
                platform: Some(r.platform.as_str().to_string()),
                client_app_version: r.client_app_version.clone(),
                os_version: r.os_version.clone(),
                locale,
                push_provider: token
                    .as_ref()
                    .map(|_| r.push_provider.clone().or(before.push_provider.clone())),
                push_token_updated_at: token.map(|_| Some(now)),
                last_seen_at: Some(now),
                deleted_at: Some(None),
                ..Default::default()
            };
            // A token replaces the stored one only when sent.
            let changes = match token {
                Some(t) => changes.push(Some(t)),
                None => changes,
            };
            let after = apply(conn, before.id, &changes).await?;
            let revived = before.deleted_at.is_some();
            Ok(Registered {
                before: Some(before),
                after,
                revived,
            })
        }
        None => {
            let locale = match &r.locale {
                Some(explicit) => explicit.clone(),
                None => r.default_locale.clone(),
            };
            let after = diesel::insert_into(d::user_devices)
                .values((
                    d::tenant_id.eq(r.tenant_id),
                    d::organization_id.eq(r.organization_id),
                    d::user_id.eq(r.user_id),
                    d::device_id.eq(&r.device_id),
                    d::platform.eq(r.platform.as_str()),
                    d::client_app_version.eq(r.client_app_version.clone().flatten()),
                    d::os_version.eq(r.os_version.clone().flatten()),
                    d::locale.eq(locale),
                    d::push_provider.eq(token.and(r.push_provider.clone())),
                    d::push_token_updated_at.eq(token.map(|_| now)),
                    d::push_token.eq(token.map(|t| &t.ciphertext)),
                    d::push_token_hash.eq(token.map(|t| &t.hash)),
                    d::push_token_fingerprint.eq(token.map(|t| &t.fingerprint)),
                    d::last_seen_at.eq(now),
                ))
                .returning(DeviceRow::as_returning())
                .get_result(conn)
                .await?;
            Ok(Registered {
                before: None,
                after,
                revived: false,
            })
        }
    }
}

/// Applies a tri-state update to `device`. `pushToken` (even `null`) stamps
/// `push_token_updated_at`; `lastSeenAt` defaults to now.
/// `push` is the body's `pushToken`, already sealed: absent keeps the
/// stored token, `Some(None)` clears it.
pub async fn update(
    conn: &mut AsyncPgConnection,
    device: &DeviceRow,
    body: &UpdateDevice,
    push: Option<Option<&StoredToken>>,
) -> Result<DeviceRow, DevicesError> {
    let now = OffsetDateTime::now_utc();
    let changes = DeviceChanges {
        client_app_version: body.client_app_version.clone(),
        os_version: body.os_version.clone(),
        locale: body.locale.clone(),
        push_provider: body.push_provider.clone(),
        push_token_updated_at: push.map(|_| Some(now)),
        last_seen_at: Some(body.last_seen_at().unwrap_or(now)),
        ..Default::default()
    };
    let changes = match push {
        Some(token) => changes.push(token),
        None => changes,
    };
    apply(conn, device.id, &changes).await
}

/// Deactivates (soft-deletes) a device.
pub async fn deactivate(
    conn: &mut AsyncPgConnection,
    device: &DeviceRow,
) -> Result<DeviceRow, DevicesError> {
    let changes = DeviceChanges {
        deleted_at: Some(Some(OffsetDateTime::now_utc())),
        ..Default::default()
    };
    apply(conn, device.id, &changes).await
}

/// The device `id`, live or not, of any tenant, locked until the transaction
/// ends (undo and redo load it this way; the caller checks the tenant).
pub async fn lock_any(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<Option<DeviceRow>> {
    d::user_devices
        .filter(d::id.eq(id))
        .select(DeviceRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()
}

/// Puts a device's metadata and liveness back to `state` (undo and redo);
/// push credentials stay as they are. A device that is deactivated and stays
/// so keeps its own deactivation time. Reviving it fails with
/// [`DevicesError::AlreadyRegistered`] when the same device has been
/// registered again meanwhile.
pub async fn restore(
    conn: &mut AsyncPgConnection,
    state: &DeviceState,
) -> Result<(DeviceRow, DeviceRow), DevicesError> {
    let current = lock_any(conn, state.id)
        .await?
        .filter(|row| row.tenant_id == state.tenant_id)
        .ok_or(DevicesError::NotFound)?;
    if state.deleted_at.is_none() && current.deleted_at.is_some() {
        let twins: i64 = d::user_devices
            .filter(d::tenant_id.eq(current.tenant_id))
            .filter(d::user_id.eq(current.user_id))
            .filter(d::device_id.eq(&current.device_id))
            .filter(d::organization_id.is_not_distinct_from(current.organization_id))
            .filter(d::deleted_at.is_null())
            .filter(d::id.ne(current.id))
            .count()
            .get_result(conn)
            .await?;
        if twins > 0 {
            return Err(DevicesError::AlreadyRegistered);
        }
    }
    let deleted_at = match (state.deleted_at, current.deleted_at) {
        (Some(_), Some(since)) => Some(since),
        (wanted, _) => wanted,
    };
    let changes = DeviceChanges {
        platform: Some(state.platform.clone()),
        client_app_version: Some(state.client_app_version.clone()),
        os_version: Some(state.os_version.clone()),
        locale: Some(state.locale.clone()),
        last_seen_at: Some(state.last_seen_at),
        deleted_at: Some(deleted_at),
        ..Default::default()
    };
    let after = apply(conn, current.id, &changes).await?;
    Ok((current, after))
}

/// The home organization of a live user of `tenant` (looked up through the
/// [`UserDirectory`] the server hands over);
/// [`DevicesError::TargetUserNotFound`] when there is no such user.
pub async fn target_user_organization(
    conn: &mut AsyncPgConnection,
    users: &dyn UserDirectory,
    tenant: Uuid,
    user: Uuid,
) -> Result<Option<Uuid>, AppError> {
    let row = users
        .user(conn, user)
        .await?
        .filter(|u| u.tenant_id == Some(tenant))
        .ok_or(DevicesError::TargetUserNotFound)?;
    Ok(row.organization_id)
}
