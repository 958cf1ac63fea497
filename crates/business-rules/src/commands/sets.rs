//! Rule sets and their members as resources of the kit. A set is deleted
//! softly (its row keeps `deletedAt`); a member is removed for good.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_acl::resource::{self, Resource};
use stoa_core::AppError;
use stoa_core::command::LogEntry;
use stoa_core::command::tracked::Tracked;
use uuid::Uuid;

use super::{MEMBER_KIND, SET_KIND, scoped_entry};
use crate::MANAGE_SETS;
use crate::error::{RulesError, unique};
use crate::model::{MemberState, SetState};
use crate::schema::{business_rule_set_members as m, business_rule_sets as s, business_rules as r};

/// Writes a set's state; a `setId` taken in the tenant is 409.
async fn upsert_set(conn: &mut AsyncPgConnection, state: &SetState) -> Result<SetState, AppError> {
    diesel::insert_into(s::table)
        .values(state)
        .on_conflict(s::id)
        .do_update()
        .set(state)
        .returning(SetState::as_returning())
        .get_result(conn)
        .await
        .map_err(|e| unique(e, RulesError::DuplicateSet(state.set_id.clone())))
}

/// Writes a member's state; a rule already in the set is 409.
async fn upsert_member(
    conn: &mut AsyncPgConnection,
    state: &MemberState,
) -> Result<MemberState, AppError> {
    diesel::insert_into(m::table)
        .values(state)
        .on_conflict(m::id)
        .do_update()
        .set(state)
        .returning(MemberState::as_returning())
        .get_result(conn)
        .await
        .map_err(|e| unique(e, RulesError::AlreadyMember))
}

impl Tracked for SetState {
    const KIND: &'static str = SET_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        Ok(s::table
            .find(id)
            .select(SetState::as_select())
            .first(conn)
            .await
            .optional()?)
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        upsert_set(conn, self).await?;
        Ok(())
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        diesel::update(s::table.find(id))
            .set(s::deleted_at.eq(diesel::dsl::now))
            .execute(conn)
            .await?;
        Ok(())
    }

    stoa_acl::tracked_by_kit!();
}

/// A set through the resource kit: `business_rules.manage_sets` and its
/// organization; one outside the selected organization is 404 (the
/// module's contract before the kit).
impl Resource for SetState {
    const TABLE: &'static str = "business_rule_sets";
    const FEATURE: &'static str = MANAGE_SETS;
    const SELECTION_HIDES: bool = true;
    type Services = ();

    stoa_acl::resource_identity!();
    fn not_found() -> AppError {
        RulesError::SetNotFound.into()
    }
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        match after.or(before) {
            Some(any) => scoped_entry(label, any.id, any.organization_id, before, after, None),
            None => LogEntry::default(),
        }
    }
    /// One statement: the upsert returns the row as stored.
    async fn save(&self, conn: &mut AsyncPgConnection) -> Result<Self, AppError> {
        upsert_set(conn, self).await
    }
}

impl Tracked for MemberState {
    const KIND: &'static str = MEMBER_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        Ok(m::table
            .find(id)
            .select(MemberState::as_select())
            .first(conn)
            .await
            .optional()?)
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        upsert_member(conn, self).await?;
        Ok(())
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        diesel::delete(m::table.find(id)).execute(conn).await?;
        Ok(())
    }

    stoa_acl::tracked_by_kit!();
}

/// A member's references: its set live in its tenant and organization
/// (404 `Rule set not found`), its rule live in its tenant and in an
/// organization the caller sees (404 `Rule not found`).
async fn check_member(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    state: &MemberState,
) -> Result<(), AppError> {
    let set_org: Option<Uuid> = s::table
        .find(state.rule_set_id)
        .filter(s::tenant_id.eq(state.tenant_id))
        .filter(s::deleted_at.is_null())
        .select(s::organization_id)
        .first(conn)
        .await
        .optional()?;
    if set_org != Some(state.organization_id) {
        return Err(RulesError::SetNotFound.into());
    }
    let rule_org: Option<Uuid> = r::table
        .find(state.rule_id)
        .filter(r::tenant_id.eq(state.tenant_id))
        .filter(r::deleted_at.is_null())
        .select(r::organization_id)
        .first(conn)
        .await
        .optional()?;
    match rule_org {
        Some(org) if ctx.can_see_organization(org) => Ok(()),
        _ => Err(RulesError::RuleNotFound.into()),
    }
}

/// A member through the resource kit: `business_rules.manage_sets`, its
/// set's organization, and its set and rule ([`check_member`]). Members
/// have no optimistic-lock column.
impl Resource for MemberState {
    const TABLE: &'static str = "business_rule_set_members";
    const VERSION: Option<&'static str> = None;
    const FEATURE: &'static str = MANAGE_SETS;
    const SELECTION_HIDES: bool = true;
    type Services = ();

    stoa_acl::resource_identity!();
    fn not_found() -> AppError {
        RulesError::MemberNotFound.into()
    }
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        match after.or(before) {
            Some(any) => scoped_entry(label, any.id, any.organization_id, before, after, None),
            None => LogEntry::default(),
        }
    }
    async fn check(
        conn: &mut AsyncPgConnection,
        ctx: &AuthContext,
        _: Option<&()>,
        target: &Self,
        previous: Option<&Self>,
    ) -> Result<(), AppError> {
        // A member keeps its set and rule: only a new or restored one is checked.
        if previous
            .is_some_and(|p| p.rule_set_id == target.rule_set_id && p.rule_id == target.rule_id)
        {
            return Ok(());
        }
        check_member(conn, ctx, target).await
    }
    /// One statement: the upsert returns the row as stored.
    async fn save(&self, conn: &mut AsyncPgConnection) -> Result<Self, AppError> {
        upsert_member(conn, self).await
    }
}
