//! Rule sets and their members (organisational: the engine never reads them).

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{Operation, execute};
use stoa_core::db::Db;
use stoa_core::search::escape_like;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{page_of, target_organization, total_pages};
use crate::MANAGE_SETS;
use crate::commands::{self as cmd, WriteMember, WriteSet};
use crate::dto::*;
use crate::error::RulesError;
use crate::model::{MemberState, SetRow, SetState};
use crate::schema::{business_rule_set_members as m, business_rule_sets as s, business_rules as r};

pub async fn create(
    db: &Db,
    ctx: &AuthContext,
    body: CreateSet,
) -> Result<(Uuid, Operation), AppError> {
    ctx.require(MANAGE_SETS)?;
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
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    let id = state.id;
    conn.transaction(async |conn| {
        let command = WriteSet {
            command_id: cmd::SET_CREATE,
            label: "Create rule set",
            before: None,
            after: state,
        };
        let (_, op) = execute(conn, &actor, command).await?;
        Ok((id, op))
    })
    .await
}

async fn locked(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<SetState, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    s::table
        .find(id)
        .filter(s::tenant_id.eq(tenant))
        .filter(s::deleted_at.is_null())
        .select(SetState::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?
        .filter(|x| ctx.can_see_organization(x.organization_id))
        .ok_or_else(|| RulesError::SetNotFound.into())
}

pub async fn update(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
    body: UpdateSet,
) -> Result<Operation, AppError> {
    ctx.require(MANAGE_SETS)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = locked(conn, ctx, id).await?;
        ctx.require_organizations([Some(before.organization_id)])?;
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
        let command = WriteSet {
            command_id: cmd::SET_UPDATE,
            label: "Update rule set",
            before: Some(before),
            after,
        };
        let (_, op) = execute(conn, &actor, command).await?;
        Ok(op)
    })
    .await
}

pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    ctx.require(MANAGE_SETS)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = locked(conn, ctx, id).await?;
        ctx.require_organizations([Some(before.organization_id)])?;
        let mut after = before.clone();
        after.deleted_at = Some(OffsetDateTime::now_utc());
        after.updated_by = ctx.actor_id();
        let command = WriteSet {
            command_id: cmd::SET_DELETE,
            label: "Delete rule set",
            before: Some(before),
            after,
        };
        let (_, op) = execute(conn, &actor, command).await?;
        Ok(op)
    })
    .await
}

fn item(row: SetRow) -> SetItem {
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

type Boxed<'a> = s::BoxedQuery<'a, diesel::pg::Pg>;

fn filtered<'a>(ctx: &AuthContext, tenant: Uuid, q: &'a SetListQuery) -> Boxed<'a> {
    let mut query = s::table
        .filter(s::tenant_id.eq(tenant))
        .filter(s::deleted_at.is_null())
        .into_boxed();
    if let Some(orgs) = &ctx.acl.visible_organization_ids {
        query = query.filter(s::organization_id.eq_any(orgs.clone()));
    }
    if let Some(id) = q.id {
        query = query.filter(s::id.eq(id));
    }
    if let Some(x) = q.search.as_deref().filter(|x| !x.trim().is_empty()) {
        query = query.filter(s::set_name.ilike(format!("%{}%", escape_like(x.trim()))));
    }
    if let Some(x) = q.set_id.as_deref().filter(|x| !x.trim().is_empty()) {
        query = query.filter(s::set_id.ilike(format!("%{}%", escape_like(x.trim()))));
    }
    if let Some(e) = q.enabled {
        query = query.filter(s::enabled.eq(e));
    }
    query
}

pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    q: &SetListQuery,
) -> Result<SetList, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let (page, page_size) = page_of(q.page, q.page_size);
    let total: i64 = filtered(ctx, tenant, q).count().get_result(conn).await?;
    let desc = q.sort_dir.unwrap_or(SortDir::Asc) == SortDir::Desc;
    let mut query = filtered(ctx, tenant, q);
    macro_rules! by {
        ($col:expr) => {
            if desc {
                query.order($col.desc())
            } else {
                query.order($col.asc())
            }
        };
    }
    query = match q.sort_field.unwrap_or(SetSort::SetId) {
        SetSort::SetId => by!(s::set_id),
        SetSort::SetName => by!(s::set_name),
        SetSort::Enabled => by!(s::enabled),
        SetSort::CreatedAt => by!(s::created_at),
        SetSort::UpdatedAt => by!(s::updated_at),
    };
    let rows: Vec<SetRow> = query
        .then_order_by(s::id.asc())
        .limit(page_size)
        .offset((page - 1) * page_size)
        .select(SetRow::as_select())
        .load(conn)
        .await?;
    Ok(SetList {
        items: rows.into_iter().map(item).collect(),
        total,
        page,
        page_size,
        total_pages: total_pages(total, page_size),
    })
}

pub async fn add_member(
    db: &Db,
    ctx: &AuthContext,
    set: Uuid,
    body: AddMember,
) -> Result<(Uuid, Operation), AppError> {
    ctx.require(MANAGE_SETS)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let owner = locked(conn, ctx, set).await?;
        ctx.require_organizations([Some(owner.organization_id)])?;
        let rule_org: Option<Uuid> = r::table
            .find(body.rule_id)
            .filter(r::tenant_id.eq(owner.tenant_id))
            .filter(r::deleted_at.is_null())
            .select(r::organization_id)
            .first(conn)
            .await
            .optional()?;
        match rule_org {
            Some(org) if ctx.can_see_organization(org) => {}
            _ => return Err(RulesError::RuleNotFound.into()),
        }
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
        let command = WriteMember {
            command_id: cmd::MEMBER_CREATE,
            label: "Add rule to set",
            before: None,
            after: Some(state),
        };
        let (_, op) = execute(conn, &actor, command).await?;
        Ok((id, op))
    })
    .await
}

async fn locked_member(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    set: Uuid,
    member: Uuid,
) -> Result<MemberState, AppError> {
    let owner = locked(conn, ctx, set).await?;
    ctx.require_organizations([Some(owner.organization_id)])?;
    m::table
        .find(member)
        .filter(m::rule_set_id.eq(owner.id))
        .select(MemberState::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| RulesError::MemberNotFound.into())
}

pub async fn update_member(
    db: &Db,
    ctx: &AuthContext,
    set: Uuid,
    body: UpdateMember,
) -> Result<Operation, AppError> {
    ctx.require(MANAGE_SETS)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = locked_member(conn, ctx, set, body.member_id).await?;
        let mut after = before.clone();
        if let Some(v) = body.sequence {
            after.sequence = v;
        }
        if let Some(v) = body.enabled {
            after.enabled = v;
        }
        let command = WriteMember {
            command_id: cmd::MEMBER_UPDATE,
            label: "Update rule set member",
            before: Some(before),
            after: Some(after),
        };
        let (_, op) = execute(conn, &actor, command).await?;
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
    ctx.require(MANAGE_SETS)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = locked_member(conn, ctx, set, member).await?;
        let command = WriteMember {
            command_id: cmd::MEMBER_DELETE,
            label: "Remove rule from set",
            before: Some(before),
            after: None,
        };
        let (_, op) = execute(conn, &actor, command).await?;
        Ok(op)
    })
    .await
}
