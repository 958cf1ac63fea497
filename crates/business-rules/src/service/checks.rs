//! A rule's own checks before it is written (`Resource::check` of
//! [`RuleState`], run by the kit after the caller's scope and feature): the
//! entity type and its features, the condition, the actions, the window,
//! and the API keys its `CALL_OPEN_MERCATO` actions run as.

use diesel_async::AsyncPgConnection;
use serde_json::Value;
use stoa_acl::accounts::{Creator, CreatorResolver};
use stoa_acl::{AuthContext, Registry, Services};
use stoa_core::AppError;
use stoa_core::outbound::Outbound;
use uuid::Uuid;

use crate::condition::{self, Problem, Schema};
use crate::error::invalid;
use crate::model::RuleState;
use crate::{actions, webhook};

/// Everything [`RuleState`]'s writes check of its content, for `ctx`:
/// [`check_rule`], then [`check_keys`] (`previous`: the state it replaces,
/// whose platform calls need `api_keys.create` too).
pub async fn check(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    services: &Services,
    target: &RuleState,
    previous: Option<&RuleState>,
) -> Result<(), AppError> {
    let keys = check_rule(ctx, &services.registry, &services.outbound, target)?;
    check_keys(
        conn,
        ctx,
        &*services.creators,
        (target.tenant_id, target.organization_id),
        &keys,
        previous.is_some_and(calls_platform),
    )
    .await
}

/// Largest stored condition or action list, as JSON text.
pub const MAX_JSON_BYTES: usize = 64 * 1024;

/// A `CALL_OPEN_MERCATO` action's API key: the list (`successActions`),
/// the action's index and the key.
pub type KeyUse = (&'static str, usize, Uuid);

/// Checks a rule's state before it is written: the entity's fields and
/// features, the condition, the actions (webhook addresses, platform
/// operations), the window. Answers the API keys its `CALL_OPEN_MERCATO`
/// actions name ([`check_keys`] checks them against the database).
pub fn check_rule(
    ctx: &AuthContext,
    registry: &Registry,
    outbound: &Outbound,
    state: &RuleState,
) -> Result<Vec<KeyUse>, AppError> {
    let mut problems: Vec<Problem> = Vec::new();
    let at = |p: &str, m: &str| Problem::new(vec![p.to_string()], m);
    // Only entity types a module declares: each names the features needed
    // to read its records, which a rule's logs, mail and calls carry.
    let Some(entity) = registry.rule_entity(&state.entity_type) else {
        let known: Vec<&str> = registry
            .rule_entities()
            .iter()
            .map(|e| e.entity_type)
            .collect();
        return Err(invalid(
            "",
            vec![at(
                "entityType",
                &format!(
                    "is not an entity type rules may watch (one of: {})",
                    known.join(", ")
                ),
            )],
        ));
    };
    ctx.require_all(entity.features)?;
    let mut names: Vec<&str> = entity.fields.iter().map(|f| f.name).collect();
    names.extend(["id", "previous", "tenantId", "organizationId"]);
    let schema = Schema {
        fields: Some(names.as_slice()),
    };
    let too_big = |v: &Option<Value>| {
        v.as_ref()
            .is_some_and(|v| v.to_string().len() > MAX_JSON_BYTES)
    };
    if too_big(&state.condition_expression) {
        problems.push(at(
            "conditionExpression",
            &format!("{CONDITION_LIMITS}: larger than 64 KiB"),
        ));
    } else if let Some(c) = state.condition_expression.as_ref().filter(|v| !v.is_null())
        && let Err(found) = condition::parse(c, &schema)
    {
        problems.extend(found.into_iter().map(condition_problem));
    }
    let check_url = |url: &str| webhook::check_url(outbound, url);
    let writer = registry.rule_writer(&state.entity_type);
    let check_field = |field: &str, value: &Value| -> Result<(), actions::ConfigProblem> {
        let Some(writer) = writer else {
            return Err((
                "field",
                format!(
                    "entity type {} has no fields rules may write",
                    state.entity_type
                ),
            ));
        };
        if !writer.fields.contains(&field) {
            return writer.check(field, value).map_err(|m| ("field", m));
        }
        if actions::has_placeholder(value) {
            // Resolved when the rule runs, and checked then.
            return Ok(());
        }
        writer.check(field, value).map_err(|m| ("value", m))
    };
    let options = std::cell::OnceCell::new();
    let check_platform = |method: &str, endpoint: &str| -> Result<(), String> {
        let options = options.get_or_init(|| super::options::call_options(registry, None));
        if options
            .endpoints
            .iter()
            .any(|e| e.method == method && e.path == endpoint)
        {
            Ok(())
        } else {
            Err(format!(
                "{method} {endpoint} is not an available platform operation \
                 (see GET /api/business_rules/platform-call-options)"
            ))
        }
    };
    let check_event = |name: &str| reserved_namespace(registry, name);
    let checks = actions::Checks {
        url: &check_url,
        field: &check_field,
        platform: &check_platform,
        event: &check_event,
    };
    let mut writes = false;
    let mut keys: Vec<KeyUse> = Vec::new();
    for (key, list) in [
        ("successActions", &state.success_actions),
        ("failureActions", &state.failure_actions),
    ] {
        if too_big(list) {
            problems.push(at(key, "is larger than 64 KiB"));
        } else {
            match actions::parse(list.as_ref(), key, &checks) {
                Ok(found) => {
                    writes |= found
                        .iter()
                        .any(|a| a.kind == actions::ActionType::SetField);
                    keys.extend(found.iter().enumerate().filter_map(|(i, a)| {
                        (a.kind == actions::ActionType::CallPlatform)
                            .then(|| actions::api_key_of(&a.config))
                            .flatten()
                            .map(|k| (key, i, k))
                    }));
                }
                Err(found) => problems.extend(found),
            }
        }
    }
    // A rule writes as the entity's module allows its own callers only.
    if writes && let Some(writer) = writer {
        ctx.require_all(writer.features)?;
    }
    if let (Some(from), Some(to)) = (state.effective_from, state.effective_to)
        && to <= from
    {
        problems.push(at("effectiveTo", "must be after effectiveFrom"));
    }
    if problems.is_empty() {
        Ok(keys)
    } else {
        Err(invalid("", problems))
    }
}

/// How the reference words a condition past its safety limits (its
/// message names the limits; stoa's detail follows).
const CONDITION_LIMITS: &str = "Condition expression exceeds safety limits";

/// A condition's problem as the save answers it: under
/// `conditionExpression`, in the reference's words (`Invalid condition
/// expression` / `Condition expression exceeds safety limits`) followed by
/// what exactly is wrong.
fn condition_problem(mut p: Problem) -> Problem {
    p.path.insert(0, "conditionExpression".into());
    p.message = if p.limit {
        format!("{CONDITION_LIMITS}: {}", p.message)
    } else {
        format!("Invalid condition expression: {}", p.message)
    };
    p
}

/// Namespaces no module registers but the platform uses itself (the outbox's
/// batch rows, queued mail).
const PLATFORM_NAMESPACES: &[&str] = &["core", "mail", "stoa"];

/// `Err` when an `EMIT_EVENT` name lies in a registered module's namespace
/// (its first segment is a module id, e.g. `attachments.attachment.deleted`,
/// `mail.send`): rules emit their own events, never another module's.
/// Subscribers trust only their modules' events anyway (the outbox's
/// `Origin`); refusing at save tells the author at once.
fn reserved_namespace(registry: &Registry, name: &str) -> Result<(), String> {
    let namespace = name.split('.').next().unwrap_or_default();
    let taken =
        PLATFORM_NAMESPACES.contains(&namespace) || registry.modules().any(|m| m.id == namespace);
    if taken {
        Err(format!(
            "must not be in the namespace of module {namespace}: rules may emit only \
             event names outside every module's namespace (e.g. rules.{name})"
        ))
    } else {
        Ok(())
    }
}

/// Whether the rule's actions (success or failure) hold one of type `kind`.
fn has_action(state: &RuleState, kind: &str) -> bool {
    [&state.success_actions, &state.failure_actions]
        .into_iter()
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .any(|a| a.get("type").and_then(Value::as_str) == Some(kind))
}

/// Whether stored actions call the platform (changing such a rule needs
/// `api_keys.create` too, whatever the new actions are).
fn calls_platform(state: &RuleState) -> bool {
    has_action(state, "CALL_OPEN_MERCATO")
}

/// Whether the rule calls webhooks (it then signs them with a secret of its
/// own, [`crate::secrets`]).
pub fn calls_webhook(state: &RuleState) -> bool {
    has_action(state, "CALL_WEBHOOK")
}

/// An API key of `tenant` as it would act in `organization` now: its roles
/// bounded by its creator (the key's own resolution, through the accounts
/// interface); `None` when it cannot act at all (unknown in the tenant,
/// revoked, expired, its creator gone, the organization out of its reach).
pub async fn key_principal(
    conn: &mut AsyncPgConnection,
    creators: &dyn CreatorResolver,
    tenant: Uuid,
    organization: Option<Uuid>,
    key: Uuid,
) -> Result<Option<AuthContext>, AppError> {
    let creator = Creator {
        tenant_id: tenant,
        organization_id: organization,
        user_id: None,
        api_key_id: Some(key),
    };
    Ok(creators.resolve_creator(conn, creator).await?.ok())
}

/// A rule naming API keys (or one that did) needs `api_keys.create`, as
/// `platform-call-options` does; each key must be able to act in the rule's
/// organization, with at least one role (400 naming the action's `apiKeyId`
/// otherwise), and reach no further than its author: every feature and
/// organization the key holds the author holds too (403
/// `delegation_out_of_reach` otherwise), so a rules author cannot borrow a
/// wider key. What the key may call is decided when the action runs, as the
/// key bounded by the author as they stand then.
async fn check_keys(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    creators: &dyn CreatorResolver,
    (tenant, organization): (Uuid, Uuid),
    keys: &[KeyUse],
    stored_calls: bool,
) -> Result<(), AppError> {
    if keys.is_empty() && !stored_calls {
        return Ok(());
    }
    ctx.require(crate::API_KEYS_CREATE)?;
    let mut problems: Vec<Problem> = Vec::new();
    for (list, i, key) in keys {
        let message = match key_principal(conn, creators, tenant, Some(organization), *key).await? {
            None => "API key is not available",
            Some(p) if p.acl.roles.is_empty() && !p.is_super_admin() => "API key has no roles",
            Some(p) => {
                p.require_within(ctx)?;
                continue;
            }
        };
        problems.push(Problem::new(
            vec![
                (*list).to_string(),
                i.to_string(),
                "config".into(),
                "apiKeyId".into(),
            ],
            message,
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(invalid("", problems))
    }
}
