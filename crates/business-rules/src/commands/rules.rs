//! Rules as a resource of the kit: create, update, delete (softly: a
//! deleted rule keeps its row with `deletedAt`, the log rows keep pointing
//! at it).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::json;
use stoa_acl::resource::{self, Resource};
use stoa_acl::{AuthContext, Services};
use stoa_core::AppError;
use stoa_core::command::LogEntry;
use stoa_core::command::tracked::Tracked;
use uuid::Uuid;

use super::{RULE_KIND, scoped_entry};
use crate::error::{RulesError, unique};
use crate::model::RuleState;
use crate::schema::business_rules;
use crate::{MANAGE, cache};

/// Writes a rule's state; a `ruleId` taken in the tenant is 409.
async fn upsert(conn: &mut AsyncPgConnection, state: &RuleState) -> Result<RuleState, AppError> {
    diesel::insert_into(business_rules::table)
        .values(state)
        .on_conflict(business_rules::id)
        .do_update()
        .set(state)
        .returning(RuleState::as_returning())
        .get_result(conn)
        .await
        .map_err(|e| unique(e, RulesError::DuplicateRule(state.rule_id.clone())))
}

/// The entry of a rule's change, with its event
/// (`business_rules.rule.created|updated|deleted`).
fn rule_entry(label: &str, before: Option<&RuleState>, after: Option<&RuleState>) -> LogEntry {
    let Some(any) = after.or(before) else {
        return LogEntry::default();
    };
    let verb = match (before, after) {
        (None, _) => "created",
        (_, None) => "deleted",
        (_, Some(after)) if after.deleted_at.is_some() => "deleted",
        _ => "updated",
    };
    scoped_entry(
        label,
        any.id,
        any.organization_id,
        before,
        after,
        Some((
            format!("business_rules.rule.{verb}"),
            json!({"id": any.id, "ruleId": any.rule_id,
                   "tenantId": any.tenant_id, "organizationId": any.organization_id}),
        )),
    )
}

impl Tracked for RuleState {
    const KIND: &'static str = RULE_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
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
        upsert(conn, self).await?;
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

    stoa_acl::tracked_by_kit!();
}

/// A rule through the resource kit: `business_rules.manage` and its
/// organization (`AuthContext::reach`: outside the caller's organizations
/// it is 404). Its own checks ([`crate::service::checks`]) are the
/// content's: the entity type and its features, the condition, the
/// actions, the window and the API keys its platform calls run as.
impl Resource for RuleState {
    const TABLE: &'static str = "business_rules";
    const FEATURE: &'static str = MANAGE;
    /// The registry, the outbound policy and the creator resolver.
    type Services = Services;

    stoa_acl::resource_identity!();
    fn not_found() -> AppError {
        RulesError::RuleNotFound.into()
    }
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        rule_entry(label, before, after)
    }
    async fn check(
        conn: &mut AsyncPgConnection,
        ctx: &AuthContext,
        services: Option<&Services>,
        target: &Self,
        previous: Option<&Self>,
    ) -> Result<(), AppError> {
        // A deletion leaves the content as it is: a rule whose key was
        // revoked or whose entity type went away can still be deleted.
        if target.deleted_at.is_some() {
            return Ok(());
        }
        // Every handler of the module holds the services (routes, undo and
        // redo alike); without them nothing of the content is checked, so
        // nothing is written.
        let Some(services) = services else {
            return Err(AppError::internal(
                "business rules: a rule is checked with the module's services",
            ));
        };
        crate::service::checks::check(conn, ctx, services, target, previous).await
    }
    /// One statement: the upsert returns the row as stored.
    async fn save(&self, conn: &mut AsyncPgConnection) -> Result<Self, AppError> {
        upsert(conn, self).await
    }
}
