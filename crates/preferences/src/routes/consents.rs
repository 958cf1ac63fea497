//! `GET /auth/users/consents?userId=`: a user's consent records with their
//! integrity verified.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Query};
use uuid::Uuid;

use super::State;
use crate::consents;
use crate::consents::dto::{ConsentItem, ConsentList, ConsentQuery};
use crate::error::PreferencesError;

/// A user's consents in the caller's tenant (`auth.users.edit`), newest
/// first, each with `integrityValid`. A user outside the caller's tenant or
/// visible organizations answers 404, like a user that does not exist.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(ConsentQuery),
    responses(
        (status = 200, body = ConsentList),
        (status = 400, body = ErrorBody, description = "`{ok:false, error:\"Invalid userId\"}`"),
        (status = 404, body = ErrorBody, description = "`{ok:false, error:\"User not found\"}`"),
    )
)]
#[get("/auth/users/consents")]
pub async fn list_consents(
    ctx: AuthContext,
    state: State,
    q: Query<ConsentQuery>,
) -> AppResult<web::Json<ConsentList>> {
    ctx.require("auth.users.edit")?;
    let user_id: Uuid = q
        .user_id
        .as_deref()
        .map(str::trim)
        .and_then(|s| s.parse().ok())
        .ok_or(PreferencesError::InvalidUserId)?;
    let not_found = || AppError::from(PreferencesError::UserNotFound);
    let tenant = ctx.tenant_id.ok_or_else(not_found)?;
    let visible = if ctx.is_super_admin() {
        None
    } else {
        ctx.acl.visible_organization_ids.clone()
    };
    let mut conn = state.db.conn().await?;
    // The user is stoa-auth's: looked up through the user directory.
    let home: Option<Option<Uuid>> = state
        .users
        .user(&mut conn, user_id)
        .await?
        .filter(|u| u.tenant_id == Some(tenant))
        .map(|u| u.organization_id);
    match (home, &visible) {
        (None, _) => return Err(not_found()),
        (Some(org), Some(visible)) if !org.is_some_and(|o| visible.contains(&o)) => {
            return Err(not_found());
        }
        _ => {}
    }
    let rows = consents::list(&mut conn, user_id, tenant, visible.as_deref()).await?;
    let key = &state.consent_key;
    let items: Vec<ConsentItem> = rows
        .into_iter()
        .map(|row| ConsentItem::new(row, key))
        .collect();
    // Consent records (with IP addresses) are the user's personal data: the
    // read is logged against the user, with the consent fields returned.
    stoa_acl::read_log::record_user_reads(
        &mut conn,
        &ctx,
        &[user_id],
        true,
        &stoa_acl::read_log::fields_of(&items),
        "/api/auth/users/consents",
    )
    .await?;
    Ok(web::Json(ConsentList { ok: true, items }))
}
