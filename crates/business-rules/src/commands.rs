//! Every write of the module as an undoable command: a rule's, a set's and
//! a member's whole row is its `Tracked` state; `authorize` repeats the
//! forward checks (feature, tenant, organization) for the caller of an undo.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::tracked::{Tracked, entry, lock_row};
use stoa_core::command::{Actor, Command, CommandHandler, LogEntry, StateHandler};
use uuid::Uuid;

use crate::error::{RulesError, unique};
use crate::model::{MemberState, RuleState, SetState};
use crate::schema::{business_rule_set_members, business_rule_sets, business_rules};
use crate::{MANAGE, MANAGE_SETS, cache};

pub const RULE_KIND: &str = "business_rules.rule";
pub const SET_KIND: &str = "business_rules.set";
pub const MEMBER_KIND: &str = "business_rules.set_member";

pub const RULE_CREATE: &str = "business_rules.rules.create";
pub const RULE_UPDATE: &str = "business_rules.rules.update";
pub const RULE_DELETE: &str = "business_rules.rules.delete";
/// Not undoable (no handler): see [`RotateSecret`].
pub const RULE_ROTATE_SECRET: &str = "business_rules.rules.rotate_webhook_secret";
pub const SET_CREATE: &str = "business_rules.sets.create";
pub const SET_UPDATE: &str = "business_rules.sets.update";
pub const SET_DELETE: &str = "business_rules.sets.delete";
pub const MEMBER_CREATE: &str = "business_rules.members.create";
pub const MEMBER_UPDATE: &str = "business_rules.members.update";
pub const MEMBER_DELETE: &str = "business_rules.members.delete";

/// The module's undo/redo handlers.
pub fn handlers() -> Vec<Arc<dyn CommandHandler>> {
    vec![
        StateHandler::<RuleState>::boxed(RULE_CREATE),
        StateHandler::<RuleState>::boxed(RULE_UPDATE),
        StateHandler::<RuleState>::boxed(RULE_DELETE),
        StateHandler::<SetState>::boxed(SET_CREATE),
        StateHandler::<SetState>::boxed(SET_UPDATE),
        StateHandler::<SetState>::boxed(SET_DELETE),
        StateHandler::<MemberState>::boxed(MEMBER_CREATE),
        StateHandler::<MemberState>::boxed(MEMBER_UPDATE),
        StateHandler::<MemberState>::boxed(MEMBER_DELETE),
    ]
}

fn scoped_entry<T: Tracked>(
    label: &str,
    id: Uuid,
    organization: Uuid,
    before: Option<&T>,
    after: Option<&T>,
    event: Option<(String, Value)>,
) -> LogEntry {
    let mut log = entry(label, id, before, after);
    log.organization_id = Some(organization);
    match event {
        Some((name, payload)) => log.with_event(name, payload),
        None => log,
    }
}

fn may_write(
    ctx: &AuthContext,
    feature: &str,
    tenant: Uuid,
    organization: Uuid,
    missing: RulesError,
) -> Result<(), AppError> {
    ctx.require(feature)?;
    if ctx.tenant_id != Some(tenant) {
        return Err(missing.into());
    }
    ctx.require_organizations([Some(organization)])
}

/// Writes a rule's new state (a deletion is a state with `deletedAt`).
pub struct WriteRule {
    pub command_id: &'static str,
    pub label: &'static str,
    pub before: Option<RuleState>,
    pub after: RuleState,
}

async fn upsert_rule(conn: &mut AsyncPgConnection, state: &RuleState) -> Result<(), AppError> {
    diesel::insert_into(business_rules::table)
        .values(state)
        .on_conflict(business_rules::id)
        .do_update()
        .set(state)
        .execute(conn)
        .await
        .map_err(|e| unique(e, RulesError::DuplicateRule(state.rule_id.clone())))?;
    Ok(())
}

impl Command for WriteRule {
    type Output = ();
    fn id(&self) -> &'static str {
        self.command_id
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            upsert_rule(conn, &self.after).await?;
            let verb = match (&self.before, self.after.deleted_at) {
                (None, _) => "created",
                (_, Some(_)) => "deleted",
                _ => "updated",
            };
            let log = scoped_entry(
                self.label,
                self.after.id,
                self.after.organization_id,
                self.before.as_ref(),
                Some(&self.after),
                Some((
                    format!("business_rules.rule.{verb}"),
                    json!({"id": self.after.id, "ruleId": self.after.rule_id,
                           "tenantId": self.after.tenant_id, "organizationId": self.after.organization_id}),
                )),
            );
            Ok(((), log))
        })
    }
}

impl Tracked for RuleState {
    const KIND: &'static str = RULE_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        lock_row(conn, "business_rules", id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        Ok(business_rules::table
            .find(id)
            .select(RuleState::as_select())
            .first(conn)
            .await
            .optional()?)
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        upsert_rule(conn, self).await?;
        cache::invalidate(self.tenant_id);
        Ok(())
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        // Rules are deleted softly: the log rows keep pointing at them.
        diesel::update(business_rules::table.find(id))
            .set(business_rules::deleted_at.eq(diesel::dsl::now))
            .execute(conn)
            .await?;
        cache::invalidate_all();
        Ok(())
    }

    fn view(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    async fn authorize(
        _: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        for s in [current, target].into_iter().flatten() {
            may_write(
                ctx,
                MANAGE,
                s.tenant_id,
                s.organization_id,
                RulesError::RuleNotFound,
            )?;
        }
        Ok(())
    }
}

/// Replaces a rule's webhook secret (`stored`: the new one, encrypted). The
/// entry names the rule but holds no secret, and is not undoable: the
/// secret is not part of the rule's tracked state (see [`crate::secrets`]).
pub struct RotateSecret {
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub id: Uuid,
    pub stored: String,
}

impl Command for RotateSecret {
    type Output = ();
    fn id(&self) -> &'static str {
        RULE_ROTATE_SECRET
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            crate::secrets::store(conn, self.tenant_id, self.id, &self.stored).await?;
            let log = LogEntry {
                action_label: Some("Rotate business rule webhook secret".into()),
                resource_kind: Some(RULE_KIND.into()),
                resource_id: Some(self.id.to_string()),
                tenant_id: Some(self.tenant_id),
                organization_id: Some(self.organization_id),
                ..Default::default()
            };
            Ok(((), log))
        })
    }
}

/// Writes a set's new state (a deletion is a state with `deletedAt`).
pub struct WriteSet {
    pub command_id: &'static str,
    pub label: &'static str,
    pub before: Option<SetState>,
    pub after: SetState,
}

async fn upsert_set(conn: &mut AsyncPgConnection, state: &SetState) -> Result<(), AppError> {
    diesel::insert_into(business_rule_sets::table)
        .values(state)
        .on_conflict(business_rule_sets::id)
        .do_update()
        .set(state)
        .execute(conn)
        .await
        .map_err(|e| unique(e, RulesError::DuplicateSet(state.set_id.clone())))?;
    Ok(())
}

impl Command for WriteSet {
    type Output = ();
    fn id(&self) -> &'static str {
        self.command_id
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            upsert_set(conn, &self.after).await?;
            let log = scoped_entry(
                self.label,
                self.after.id,
                self.after.organization_id,
                self.before.as_ref(),
                Some(&self.after),
                None,
            );
            Ok(((), log))
        })
    }
}

impl Tracked for SetState {
    const KIND: &'static str = SET_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        lock_row(conn, "business_rule_sets", id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        Ok(business_rule_sets::table
            .find(id)
            .select(SetState::as_select())
            .first(conn)
            .await
            .optional()?)
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        upsert_set(conn, self).await
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        diesel::update(business_rule_sets::table.find(id))
            .set(business_rule_sets::deleted_at.eq(diesel::dsl::now))
            .execute(conn)
            .await?;
        Ok(())
    }

    fn view(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    async fn authorize(
        _: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        for s in [current, target].into_iter().flatten() {
            may_write(
                ctx,
                MANAGE_SETS,
                s.tenant_id,
                s.organization_id,
                RulesError::SetNotFound,
            )?;
        }
        Ok(())
    }
}

/// Writes a member's new state (`None`: removes it for good).
pub struct WriteMember {
    pub command_id: &'static str,
    pub label: &'static str,
    pub before: Option<MemberState>,
    pub after: Option<MemberState>,
}

async fn upsert_member(conn: &mut AsyncPgConnection, state: &MemberState) -> Result<(), AppError> {
    diesel::insert_into(business_rule_set_members::table)
        .values(state)
        .on_conflict(business_rule_set_members::id)
        .do_update()
        .set(state)
        .execute(conn)
        .await
        .map_err(|e| unique(e, RulesError::AlreadyMember))?;
    Ok(())
}

async fn delete_member(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
    diesel::delete(business_rule_set_members::table.find(id))
        .execute(conn)
        .await?;
    Ok(())
}

impl Command for WriteMember {
    type Output = ();
    fn id(&self) -> &'static str {
        self.command_id
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            match (&self.after, &self.before) {
                (Some(after), _) => upsert_member(conn, after).await?,
                (None, Some(before)) => delete_member(conn, before.id).await?,
                (None, None) => {}
            }
            let Some(any) = self.after.as_ref().or(self.before.as_ref()) else {
                return Ok(((), LogEntry::default()));
            };
            let log = scoped_entry(
                self.label,
                any.id,
                any.organization_id,
                self.before.as_ref(),
                self.after.as_ref(),
                None,
            );
            Ok(((), log))
        })
    }
}

impl Tracked for MemberState {
    const KIND: &'static str = MEMBER_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        lock_row(conn, "business_rule_set_members", id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        Ok(business_rule_set_members::table
            .find(id)
            .select(MemberState::as_select())
            .first(conn)
            .await
            .optional()?)
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        upsert_member(conn, self).await
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        delete_member(conn, id).await
    }

    fn view(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    async fn authorize(
        _: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        for s in [current, target].into_iter().flatten() {
            may_write(
                ctx,
                MANAGE_SETS,
                s.tenant_id,
                s.organization_id,
                RulesError::MemberNotFound,
            )?;
        }
        Ok(())
    }
}
