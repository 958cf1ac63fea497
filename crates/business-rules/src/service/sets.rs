//! Rule sets and their members (organisational: the engine never reads them).

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_acl::resource::{self as kit, Write};
use stoa_core::AppError;
use stoa_core::command::Operation;
use stoa_core::db::Db;
use time::OffsetDateTime;
use uuid::Uuid;

use super::target_organization;
use crate::commands as cmd;
use crate::dto::*;
use crate::error::RulesError;
use crate::model::{MemberState, SetRow, SetState};
use crate::schema::{business_rule_set_members as m, business_rule_sets as s, business_rules as r};

pub async fn create(
    db: &Db,
    ctx: &AuthContext,
    body: CreateSet,
) -> Result<(Uuid, Operation), AppError> {
    let state = SetState {
        id: Uuid::new_v4(),
        tenant_id: ctx.tenant().map_err(|_| RulesError::ScopeRequired)?,
        organization_id: target_organization(ctx)?,
        set_id: body.set_id.trim().to_string(),
        set_name: body.set_name.trim().to_string(),
        description: body.description,
        enabled: body.enabled.unwrap_or(true),
        created_by: ctx.actor_id(),
        updated_by: ctx.actor_id(),
        created_at: OffsetDateTime::now_utc(),
        deleted_at: None,
    };
    let mut conn = db.conn().await?;
    let id = state.id;
    conn.transaction(async |conn| {
        let how = Write::new(cmd::SET_CREATE, "Create rule set");
        let (_, op) = kit::create_in(conn, ctx, None, how, state).await?;
        Ok((id, op))
    })
    .await
}

/// The live set `id`, locked for a write by `ctx` (the kit's `locked_in`);
/// a deleted one is 404 as an unknown one.
async fn live(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<SetState, AppError> {
    ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let set = kit::locked_in::<SetState>(conn, ctx, id, None).await?;
    match set.deleted_at {
        None => Ok(set),
        Some(_) => Err(RulesError::SetNotFound.into()),
    }
}

pub async fn update(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
    body: UpdateSet,
) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = live(conn, ctx, id).await?;
        let mut after = before.clone();
        if let Some(v) = body.set_id {
            after.set_id = v.trim().to_string();
        }
        if let Some(v) = body.set_name {
            after.set_name = v.trim().to_string();
        }
        if let Some(v) = body.description {
            after.description = v;
        }
        if let Some(v) = body.enabled {
            after.enabled = v;
        }
        after.updated_by = ctx.actor_id();
        let how = Write::new(cmd::SET_UPDATE, "Update rule set");
        let (_, op) = kit::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
        Ok(op)
    })
    .await
}

/// Deletes set `id` softly (its row keeps `deletedAt`; undo revives it).
pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = live(conn, ctx, id).await?;
        let mut after = before.clone();
        after.deleted_at = Some(OffsetDateTime::now_utc());
        after.updated_by = ctx.actor_id();
        let how = Write::new(cmd::SET_DELETE, "Delete rule set");
        let (_, op) = kit::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
        Ok(op)
    })
    .await
}

pub(super) fn item(row: SetRow) -> SetItem {
    let x = row.state;
    SetItem {
        id: x.id,
        set_id: x.set_id,
        set_name: x.set_name,
        description: x.description,
        enabled: x.enabled,
        tenant_id: x.tenant_id,
        organization_id: x.organization_id,
        created_by: x.created_by,
        updated_by: x.updated_by,
        created_at: x.created_at,
        updated_at: row.updated_at,
    }
}

pub async fn get(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<SetDetail, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let row = s::table
        .find(id)
        .filter(s::tenant_id.eq(tenant))
        .filter(s::deleted_at.is_null())
        .select(SetRow::as_select())
        .first(conn)
        .await
        .optional()?
        .filter(|x| ctx.can_see_organization(x.state.organization_id))
        .ok_or(RulesError::SetNotFound)?;
    let members: Vec<(Uuid, Uuid, String, String, i32, bool)> = m::table
        .inner_join(r::table)
        .filter(m::rule_set_id.eq(id))
        .order((m::sequence.asc(), m::id.asc()))
        .select((
            m::id,
            m::rule_id,
            r::rule_name,
            r::rule_type,
            m::sequence,
            m::enabled,
        ))
        .load(conn)
        .await?;
    Ok(SetDetail {
        set: item(row),
        members: members
            .into_iter()
            .map(
                |(id, rule_id, rule_name, rule_type, sequence, enabled)| MemberItem {
                    id,
                    rule_id,
                    rule_name,
                    rule_type,
                    sequence,
                    enabled,
                },
            )
            .collect(),
    })
}

/// Adds a rule to set `set`: the set is locked first (as every member
/// write), the member's own checks (its rule live and seen by the caller)
/// are the kit's `Resource::check`.
pub async fn add_member(
    db: &Db,
    ctx: &AuthContext,
    set: Uuid,
    body: AddMember,
) -> Result<(Uuid, Operation), AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let owner = live(conn, ctx, set).await?;
        let state = MemberState {
            id: Uuid::new_v4(),
            tenant_id: owner.tenant_id,
            organization_id: owner.organization_id,
            rule_set_id: owner.id,
            rule_id: body.rule_id,
            sequence: body.sequence.unwrap_or(0),
            enabled: body.enabled.unwrap_or(true),
            created_at: OffsetDateTime::now_utc(),
        };
        let id = state.id;
        let how = Write::new(cmd::MEMBER_CREATE, "Add rule to set");
        let (_, op) = kit::create_in(conn, ctx, None, how, state).await?;
        Ok((id, op))
    })
    .await
}

/// Member `member` of set `set`, both locked for a write by `ctx` (the set
/// first, as every member write); a member of another set is 404.
async fn live_member(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    set: Uuid,
    member: Uuid,
) -> Result<MemberState, AppError> {
    let owner = live(conn, ctx, set).await?;
    let state = kit::locked_in::<MemberState>(conn, ctx, member, None).await?;
    if state.rule_set_id == owner.id {
        Ok(state)
    } else {
        Err(RulesError::MemberNotFound.into())
    }
}

pub async fn update_member(
    db: &Db,
    ctx: &AuthContext,
    set: Uuid,
    body: UpdateMember,
) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = live_member(conn, ctx, set, body.member_id).await?;
        let mut after = before.clone();
        if let Some(v) = body.sequence {
            after.sequence = v;
        }
        if let Some(v) = body.enabled {
            after.enabled = v;
        }
        let how = Write::new(cmd::MEMBER_UPDATE, "Update rule set member");
        let (_, op) = kit::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
        Ok(op)
    })
    .await
}

pub async fn remove_member(
    db: &Db,
    ctx: &AuthContext,
    set: Uuid,
    member: Uuid,
) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = live_member(conn, ctx, set, member).await?;
        let how = Write::new(cmd::MEMBER_DELETE, "Remove rule from set");
        let (_, op) = kit::save_in::<MemberState>(conn, ctx, None, how, Some(before), None).await?;
        Ok(op)
    })
    .await
}
