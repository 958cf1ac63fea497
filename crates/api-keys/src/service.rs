//! The rules of API keys: who may create which key, what a caller may list and
//! delete. Every function takes the caller's connection (its transaction).

use std::borrow::Cow;

use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::grants::{self, RoleGrant, RoleLookupError};
use stoa_acl::{AuthContext, RoleDirectory};
use stoa_core::error::Issue;
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::search::escape_like;
use stoa_core::{AppError, Page};
use stoa_directory::names::organization_name;
use stoa_directory::{DirectoryService, PgDirectory};
use time::{Date, OffsetDateTime, PrimitiveDateTime, Time, format_description};
use uuid::Uuid;

use crate::error::ApiKeysError;
use crate::model::{ApiKeyItem, ApiKeyList, ApiKeyRole, CreateApiKey};
use crate::schema::api_keys;

/// How many API keys may stand between a key and the user who started the chain
/// (a key created by a key created by a key ...).
pub const MAX_CHAIN: usize = 5;

/// The caller's read scope for keys: its tenant and, when restricted, the
/// organizations it sees (keys without an organization are then hidden, as
/// in the reference).
pub struct ListScope<'a> {
    pub tenant_id: Uuid,
    pub organizations: Option<&'a [Uuid]>,
}

type ListRow = (
    Uuid,
    String,
    Option<String>,
    String,
    Option<Uuid>,
    OffsetDateTime,
    Option<OffsetDateTime>,
    Option<OffsetDateTime>,
    Vec<Uuid>,
    Vec<Option<String>>,
    Option<String>,
    i64,
);

/// The sort tag of key-list cursors: newest first, then id.
const CURSOR_TAG: &str = "api_keys.keys:createdAt:desc";

/// The sort key of a key-list cursor: `createdAt` in unix microseconds
/// (Postgres' precision) and the id.
pub type KeyListKey = (i64, Uuid);

fn key_of(item: &ApiKeyItem) -> KeyListKey {
    let micros = item.created_at.unix_timestamp_nanos() / 1_000;
    (i64::try_from(micros).unwrap_or(i64::MAX), item.id)
}

/// The list request of `GET /api_keys/keys` (paging, cursor, total mode).
pub fn list_request(page: Page, params: &ListParams) -> Result<ListRequest<KeyListKey>, AppError> {
    ListRequest::new(page, params, CURSOR_TAG)
}

/// One page of live keys in scope, newest first: the rows, their (capped)
/// total, role names and organization names in one statement.
pub async fn list(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    scope: &ListScope<'_>,
    search: Option<&str>,
    req: &ListRequest<KeyListKey>,
) -> Result<ApiKeyList, AppError> {
    let pattern = search
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| format!("%{}%", escape_like(s)));
    let after = match &req.after {
        Some((micros, id)) => Some((
            OffsetDateTime::from_unix_timestamp_nanos(i128::from(*micros) * 1_000).map_err(
                |_| {
                    AppError::bad_request(
                        "Invalid query parameters: cursor: not a cursor of this list",
                    )
                },
            )?,
            *id,
        )),
        None => None,
    };
    let filtered = || {
        let mut query = api_keys::table
            .filter(api_keys::tenant_id.eq(scope.tenant_id))
            .filter(api_keys::deleted_at.is_null())
            .into_boxed();
        if let Some(ids) = scope.organizations {
            query = query.filter(api_keys::organization_id.eq_any(ids.to_vec()));
        }
        if let Some(pattern) = &pattern {
            query = query.filter(
                api_keys::name
                    .ilike(pattern.clone())
                    .or(api_keys::key_prefix.ilike(pattern.clone())),
            );
        }
        if let Some((at, id)) = after {
            query = query.filter(
                diesel::dsl::sql::<Bool>("(api_keys.created_at, api_keys.id) < (")
                    .bind::<Timestamptz, _>(at)
                    .sql(", ")
                    .bind::<diesel::sql_types::Uuid, _>(id)
                    .sql(")"),
            );
        }
        query
    };
    let rows: Vec<ListRow> = filtered()
        .order((api_keys::created_at.desc(), api_keys::id.desc()))
        .limit(req.limit())
        .offset(req.offset())
        .select((
            api_keys::id,
            api_keys::name,
            api_keys::description,
            api_keys::key_prefix,
            api_keys::organization_id,
            api_keys::created_at,
            api_keys::last_used_at,
            api_keys::expires_at,
            api_keys::role_ids,
            diesel::dsl::sql::<Array<Nullable<Text>>>(&roles.role_names_sql("api_keys.role_ids")),
            organization_name("api_keys.organization_id"),
            req.count(filtered().select(api_keys::id)),
        ))
        .load(conn)
        .await?;
    let mut counted = <[ListRow]>::first(&rows).map(|r| r.11);
    if req.needs_separate_count(rows.len()) {
        counted = Some(
            diesel::select(req.count(filtered().select(api_keys::id)))
                .get_result(conn)
                .await?,
        );
    }
    let items = rows
        .into_iter()
        .map(|r| ApiKeyItem {
            id: r.0,
            name: r.1,
            description: r.2,
            key_prefix: r.3,
            organization_id: r.4,
            organization_name: r.10,
            created_at: r.5,
            last_used_at: r.6,
            expires_at: r.7,
            roles: r
                .8
                .iter()
                .enumerate()
                .map(|(i, id)| ApiKeyRole {
                    id: *id,
                    name: r.9.get(i).cloned().flatten(),
                })
                .collect(),
        })
        .collect();
    let page = req.finish(items, counted, key_of);
    Ok(ApiKeyList {
        items: page.items,
        total: page.total,
        page: page.page,
        page_size: page.page_size,
        // The reference reports 0 pages for an empty list.
        total_pages: page.total.div_ceil(page.page_size.max(1)),
        total_capped: page.total_capped,
        next_cursor: page.next_cursor,
    })
}

/// A validated key, ready to be inserted.
#[derive(Clone, Debug)]
pub struct NewKey {
    pub name: String,
    pub description: Option<String>,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub roles: Vec<RoleGrant>,
    pub expires_at: Option<OffsetDateTime>,
    /// The creating user, or the creating key.
    pub created_by: Uuid,
    /// The user at the root of the chain of creators.
    pub creator_user_id: Uuid,
    /// The keys between that user and this key (the creating key last).
    pub creator_key_ids: Vec<Uuid>,
}

fn expiry_issue(message: &str) -> AppError {
    AppError::bad_request(format!("Invalid payload: expiresAt: {message}")).with_issues(vec![
        Issue {
            path: vec![Value::from("expiresAt")],
            message: message.to_string(),
            code: Cow::Borrowed("invalid_date"),
        },
    ])
}

/// Parses `expiresAt`: an RFC 3339 date-time, an ISO date-time without offset
/// (UTC) or a date (midnight UTC); empty = no expiry.
pub fn parse_expiry(raw: Option<&str>) -> Result<Option<OffsetDateTime>, AppError> {
    let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    if let Ok(at) = OffsetDateTime::parse(raw, &format_description::well_known::Rfc3339) {
        return Ok(Some(at));
    }
    let naive = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute][optional [:[second][optional [.[subsecond]]]]]"
    );
    if let Ok(at) = PrimitiveDateTime::parse(raw, &naive) {
        return Ok(Some(at.assume_utc()));
    }
    if let Ok(day) = Date::parse(
        raw,
        time::macros::format_description!("[year]-[month]-[day]"),
    ) {
        return Ok(Some(
            PrimitiveDateTime::new(day, Time::MIDNIGHT).assume_utc(),
        ));
    }
    Err(expiry_issue("must be an ISO 8601 date-time"))
}

/// What a key-authenticated caller's own key says about the keys it creates.
#[derive(Queryable)]
struct ParentKey {
    creator_user_id: Uuid,
    creator_key_ids: Vec<Uuid>,
    expires_at: Option<OffsetDateTime>,
}

/// Checks a creation request against the caller's grants and scope and
/// resolves its tenant, organization, roles and expiry.
pub async fn prepare(
    conn: &mut AsyncPgConnection,
    directory: &dyn RoleDirectory,
    ctx: &AuthContext,
    input: CreateApiKey,
    now: OffsetDateTime,
) -> Result<NewKey, AppError> {
    let tenant = match input.tenant_id {
        None => ctx.tenant_id.ok_or(ApiKeysError::TenantRequired)?,
        Some(None) if ctx.is_super_admin() => return Err(ApiKeysError::TenantRequired.into()),
        Some(None) => return Err(stoa_acl::foreign_tenant()),
        Some(Some(tenant)) => {
            ctx.target_tenant(tenant)?;
            if PgDirectory.tenant(conn, tenant).await?.is_none() {
                return Err(ApiKeysError::TenantNotFound.into());
            }
            tenant
        }
    };

    // The organization: as given, else the selected one, else the caller's
    // home organization (each only when it belongs to the target tenant).
    let organization = input
        .organization_id
        .or_else(|| {
            (ctx.tenant_id == Some(tenant))
                .then(|| ctx.organization_id())
                .flatten()
        })
        .or_else(|| {
            (ctx.actor_tenant_id == Some(tenant))
                .then_some(ctx.home_organization_id)
                .flatten()
        });
    if !ctx.may_write_organization(organization) {
        return Err(ApiKeysError::OrganizationOutOfScope.into());
    }
    if let Some(org) = organization
        && PgDirectory.organization(conn, tenant, org).await?.is_none()
    {
        return Err(ApiKeysError::OrganizationNotFound.into());
    }

    // Roles by id or name, never more than the caller holds, and (for a
    // restricted caller) reaching only its organizations.
    let tokens = input.roles.unwrap_or_default();
    let roles = match directory.resolve_roles(conn, tenant, &tokens).await? {
        Ok(roles) => roles,
        Err(RoleLookupError::NotFound(missing)) => {
            let first = missing.into_iter().next().unwrap_or_default();
            return Err(ApiKeysError::RoleNotFound(first).into());
        }
        Err(RoleLookupError::ForeignTenant(name)) => {
            return Err(ApiKeysError::RoleOfAnotherTenant(name).into());
        }
    };
    grants::check_roles(ctx, &roles)?;

    let mut expires_at = parse_expiry(input.expires_at.as_deref())?;
    if expires_at.is_some_and(|at| at <= now) {
        return Err(ApiKeysError::ExpiryInPast.into());
    }

    // Who is behind the key: the user, or the key's own chain of creators.
    let (created_by, creator_user_id, creator_key_ids) = match (ctx.user_id, ctx.api_key_id) {
        (Some(user), _) => (user, user, Vec::new()),
        (None, Some(key)) => {
            let parent: ParentKey = api_keys::table
                .filter(api_keys::id.eq(key))
                .filter(api_keys::deleted_at.is_null())
                .select((
                    api_keys::creator_user_id,
                    api_keys::creator_key_ids,
                    api_keys::expires_at,
                ))
                .first(conn)
                .await
                .optional()?
                .ok_or_else(AppError::unauthorized)?;
            if parent.creator_key_ids.len() >= MAX_CHAIN {
                return Err(ApiKeysError::ChainTooLong { max: MAX_CHAIN }.into());
            }
            // A key never outlives the key that made it (deleting that key
            // deletes this one too).
            expires_at = match (expires_at, parent.expires_at) {
                (Some(own), Some(limit)) if own > limit => {
                    return Err(ApiKeysError::ExpiryAfterCreator.into());
                }
                (None, limit) => limit,
                (own, _) => own,
            };
            let mut chain = parent.creator_key_ids;
            chain.push(key);
            (key, parent.creator_user_id, chain)
        }
        (None, None) => return Err(AppError::unauthorized()),
    };

    Ok(NewKey {
        name: input.name.trim().to_string(),
        description: input
            .description
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty()),
        tenant_id: tenant,
        organization_id: organization,
        roles,
        expires_at,
        created_by,
        creator_user_id,
        creator_key_ids,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_formats() {
        let at = |s: &str| {
            parse_expiry(Some(s))
                .ok()
                .flatten()
                .map(|t| t.unix_timestamp())
        };
        assert_eq!(at("2030-01-02T03:04:05Z"), Some(1_893_553_445));
        assert_eq!(at("2030-01-02T04:04:05+01:00"), Some(1_893_553_445));
        assert_eq!(at("2030-01-02T03:04:05.123Z"), Some(1_893_553_445));
        assert_eq!(at("2030-01-02T03:04:05"), Some(1_893_553_445));
        assert_eq!(at("2030-01-02T03:04"), Some(1_893_553_440));
        assert_eq!(at("2030-01-02"), Some(1_893_542_400));
        assert!(parse_expiry(None).is_ok_and(|v| v.is_none()));
        assert!(parse_expiry(Some("  ")).is_ok_and(|v| v.is_none()));
        for bad in [
            "tomorrow",
            "2030-13-01",
            "2030-01-02T25:00:00Z",
            "1893553445",
        ] {
            let err = parse_expiry(Some(bad)).err();
            assert_eq!(err.map(|e| e.status().as_u16()), Some(400), "{bad}");
        }
    }
}
