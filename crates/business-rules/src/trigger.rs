//! The event trigger: every domain event with a tenant and an organization
//! runs the rules of its entity and event type after commit (outbox
//! subscriber), actions included; logs and effects are written in one
//! transaction. `SET_FIELD` writes run first, each through the entity's own
//! command ([`crate::writes`]). Events emitted by rules themselves, events of
//! writes made by rules (the action-log entry names the rule), and the
//! module's own and the infrastructure's events are skipped, so a rule
//! never re-triggers rules.

use diesel::OptionalExtension;
use diesel::sql_types::{Jsonb, Nullable};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};
use stoa_core::command::outbox::{Delivered, Origins, Subscriber};
use stoa_core::db::Db;
use time::OffsetDateTime;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use stoa_acl::accounts::CreatorResolver;
use stoa_acl::{BUSINESS_RULE_SOURCE, PlatformSlot, Registry};

use crate::authors::Authorized;
use crate::engine::{self, EMIT_COMMAND, RULES_ORIGIN, Request};
use crate::{authors, cache, platform, writes};

/// Event name prefixes the trigger never handles.
const SKIPPED: &[&str] = &[
    "query_index.",
    "search.",
    "business_rules.",
    "cache.",
    "queue.",
    "workflows.",
    "mail.",
    "progress.",
    "audit.",
];

/// The subscriber (the server lists it in `subscribers`).
pub struct RuleTrigger {
    db: Db,
    /// The rule writers (`SET_FIELD`) and the write guards their writes pass.
    registry: Arc<Registry>,
    /// The in-process caller of `CALL_OPEN_MERCATO` (filled by the server).
    platform: PlatformSlot,
    /// Resolves each rule's author as they stand now ([`crate::authors`]).
    creators: Arc<dyn CreatorResolver>,
}

impl RuleTrigger {
    pub fn new(
        db: Db,
        registry: Arc<Registry>,
        platform: PlatformSlot,
        creators: Arc<dyn CreatorResolver>,
    ) -> Self {
        Self {
            db,
            registry,
            platform,
            creators,
        }
    }
}

/// `customers.deal.updated` → (`customers.deal`, `updated`); names with
/// fewer than three segments carry no entity.
pub fn split_event(name: &str) -> Option<(&str, &str)> {
    if name.split('.').count() < 3 {
        return None;
    }
    name.rsplit_once('.')
}

#[derive(diesel::QueryableByName)]
struct Snapshots {
    #[diesel(sql_type = Nullable<Jsonb>)]
    before: Option<Value>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    after: Option<Value>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    context: Option<Value>,
    #[diesel(sql_type = diesel::sql_types::Text)]
    source: String,
}

/// What the event's rules see, and whether a rule made the write.
struct Record {
    data: Value,
    by_rule: bool,
}

/// What the event's rules test: the record as the command's action-log
/// entry shows it after the write (before it, for a deletion), with
/// `previous` = the record before, and the event's payload keys on top
/// (`fromStageId`, ...). An event outside the command bus: its payload.
async fn record_data(
    conn: &mut AsyncPgConnection,
    event: &Delivered,
) -> Result<Record, diesel::result::Error> {
    let payload = || Record {
        data: event.payload.clone(),
        by_rule: false,
    };
    let Some(log_id) = event.action_log_id else {
        return Ok(payload());
    };
    let found: Option<Snapshots> = diesel::sql_query(
        "SELECT snapshot_before AS before, snapshot_after AS after, context_json AS context, \
         source_key AS source FROM action_logs WHERE id = $1",
    )
    .bind::<diesel::sql_types::Uuid, _>(log_id)
    .get_result(conn)
    .await
    .optional()?;
    let Some(Snapshots {
        before,
        after,
        context,
        source,
    }) = found
    else {
        return Ok(payload());
    };
    // A `SET_FIELD` write, or a write of a rule's platform call.
    if writes::by_rule(context.as_ref()) || source == BUSINESS_RULE_SOURCE {
        return Ok(Record {
            data: Value::Null,
            by_rule: true,
        });
    }
    let mut data = match after.clone().or(before.clone()) {
        Some(Value::Object(map)) => map,
        _ => return Ok(payload()),
    };
    if let Value::Object(payload) = &event.payload {
        for (k, v) in payload {
            data.insert(k.clone(), v.clone());
        }
    }
    data.entry("previous")
        .or_insert(before.unwrap_or(Value::Null));
    Ok(Record {
        data: Value::Object(data),
        by_rule: false,
    })
}

impl Subscriber for RuleTrigger {
    fn id(&self) -> &str {
        "business_rules.trigger"
    }

    fn accepts(&self, name: &str) -> bool {
        !SKIPPED.iter().any(|p| name.starts_with(p)) && split_event(name).is_some()
    }

    /// Domain events of every module; the rules' own events are skipped
    /// in `handle` (no loops), by their origin, which no rule can set.
    fn origins(&self) -> Origins {
        Origins::Any
    }

    fn handle<'a>(&'a self, event: &'a Delivered) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            if event.origin == RULES_ORIGIN || event.command_id.as_deref() == Some(EMIT_COMMAND) {
                return Ok(());
            }
            let (Some(tenant), Some(organization), Some((entity_type, event_type))) = (
                event.tenant_id,
                event.organization_id,
                split_event(&event.name),
            ) else {
                return Ok(());
            };
            let mut conn = self.db.conn().await.map_err(|e| e.to_string())?;
            let rules = cache::rules(&mut conn, tenant, false)
                .await
                .map_err(|e| e.to_string())?;
            let now = OffsetDateTime::now_utc();
            let applicable = engine::discover(
                &rules,
                organization,
                entity_type,
                Some(event_type),
                false,
                now,
            );
            if applicable.is_empty() {
                return Ok(());
            }
            let entity_id = event.resource_id.clone().or_else(|| {
                event
                    .payload
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
            let record = record_data(&mut conn, event)
                .await
                .map_err(|e| e.to_string())?;
            if record.by_rule {
                // A rule's own write: no rule runs again (no loops).
                return Ok(());
            }
            let req = Request {
                tenant_id: tenant,
                organization_id: organization,
                entity_type: entity_type.to_string(),
                entity_id,
                event_type: Some(event_type.to_string()),
                data: record.data,
                user: json!({"id": event.actor_user_id, "email": null, "role": null}),
                executed_by: event.actor_user_id.map(|u| u.to_string()),
                dry_run: false,
                writes_fields: true,
            };
            // Delegated work: each rule acts for its author as they stand now.
            let Authorized {
                acting,
                stopped,
                authors,
            } = authors::authorize(
                &mut conn,
                self.creators.as_ref(),
                &self.registry,
                applicable,
                &req,
            )
            .await
            .map_err(|e| e.to_string())?;
            let mut run = engine::run(&acting, &req, now);
            if run.outcomes.is_empty() && !acting.is_empty() {
                // Over the rule cap: nothing ran; say so once.
                tracing::warn!(event = %event.name, errors = ?run.errors, "business rules not run");
                return Ok(());
            }
            for (rule, reason) in stopped {
                tracing::info!(rule = %rule.rule_id, %reason, "business rule not run");
                run.outcomes.push(engine::not_run(rule, reason));
            }
            if writes::pending(&run) {
                // The writes take their own connections (one transaction each).
                drop(conn);
                writes::perform(&self.db, &self.registry, &req, &mut run, &authors).await;
                conn = self.db.conn().await.map_err(|e| e.to_string())?;
            }
            if platform::pending(&run) {
                // Each call is a request of its own (its own transactions).
                drop(conn);
                platform::perform(&self.platform, &req, &mut run, &authors).await;
                conn = self.db.conn().await.map_err(|e| e.to_string())?;
            }
            engine::commit(&mut conn, &req, &mut run, false)
                .await
                .map_err(|e| e.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resolves nobody.
    struct NoCreators;

    impl CreatorResolver for NoCreators {
        fn resolve_creator<'a>(
            &'a self,
            _: &'a mut AsyncPgConnection,
            _: stoa_acl::accounts::Creator,
        ) -> BoxFuture<
            'a,
            Result<
                Result<stoa_acl::AuthContext, stoa_acl::accounts::CreatorGone>,
                stoa_core::AppError,
            >,
        > {
            Box::pin(async { Ok(Err(stoa_acl::accounts::CreatorGone("none".into()))) })
        }
    }

    #[test]
    fn events_split_into_entity_and_verb() {
        assert_eq!(
            split_event("customers.deal.stage_changed"),
            Some(("customers.deal", "stage_changed"))
        );
        assert_eq!(split_event("mail.send"), None);
        let t = RuleTrigger::new(
            Db::from_url(
                "postgres://x@127.0.0.1:1/none",
                1,
                std::time::Duration::from_millis(1),
            )
            .unwrap(),
            Arc::new(Registry::new()),
            PlatformSlot::default(),
            Arc::new(NoCreators),
        );
        assert!(t.accepts("customers.deal.updated"));
        assert!(!t.accepts("business_rules.rule.execution_failed"));
        assert!(!t.accepts("mail.send"));
    }
}
