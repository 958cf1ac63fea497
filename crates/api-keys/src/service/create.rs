//! Creating a key: the checks of a creation request (`prepare`) and the
//! transaction that runs the command (`create`).

use std::borrow::Cow;
use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::grants::{self, RoleGrant, RoleLookupError};
use stoa_acl::{AuthContext, OrganizationDirectory, RoleDirectory};
use stoa_core::AppError;
use stoa_core::db::Db;
use stoa_core::error::Issue;
use time::{Date, OffsetDateTime, PrimitiveDateTime, Time, format_description};
use uuid::Uuid;

use super::MAX_CHAIN;
use crate::commands::CreateKeyCommand;
use crate::error::ApiKeysError;
use crate::model::{CreateApiKey, CreatedApiKey};
use crate::schema::api_keys;

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
    organizations: &dyn OrganizationDirectory,
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
            if !organizations.tenant_exists(conn, tenant).await? {
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
        && !organizations.organization_exists(conn, tenant, org).await?
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

/// Creates a key in its own transaction: checks the request ([`prepare`])
/// and runs the command, which logs it. The result carries the secret. The
/// arguments are owned: the transaction's future may not borrow.
pub async fn create(
    db: &Db,
    roles: Arc<dyn RoleDirectory>,
    organizations: Arc<dyn OrganizationDirectory>,
    ctx: AuthContext,
    input: CreateApiKey,
) -> Result<CreatedApiKey, AppError> {
    let actor = ctx.actor();
    let (created, _) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let now = OffsetDateTime::now_utc();
                let key = prepare(conn, &*roles, &*organizations, &ctx, input, now).await?;
                stoa_core::command::execute(conn, &actor, CreateKeyCommand(key)).await
            })
        })
        .await?;
    Ok(created)
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
