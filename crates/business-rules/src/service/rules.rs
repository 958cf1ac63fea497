//! Rules: create, update (partial), delete (soft), read, list.

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::accounts::{Creator, CreatorResolver};
use stoa_acl::{AuthContext, Reach, Registry, Services};
use stoa_core::AppError;
use stoa_core::command::{Operation, execute};
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::outbound::Outbound;
use stoa_core::search::escape_like;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{page_of, parse_time, target_organization, total_pages};
use crate::commands::{self as cmd, WriteRule};
use crate::condition::{self, Problem, Schema};
use crate::dto::*;
use crate::error::{RulesError, invalid};
use crate::model::{RuleRow, RuleState};
use crate::schema::business_rules as r;
use crate::{MANAGE, actions, cache, secrets, webhook};

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
/// own, [`secrets`]).
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

fn window(value: Option<&str>, path: &str) -> Result<Option<OffsetDateTime>, AppError> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(s) => parse_time(s).map(Some).ok_or_else(|| {
            invalid(
                "",
                vec![Problem::new(
                    vec![path.into()],
                    "must be a date (YYYY-MM-DD) or an RFC 3339 date-time",
                )],
            )
        }),
    }
}

/// Creates a rule; answers its id, its webhook secret (made when its
/// actions call webhooks: shown this once) and the operation.
pub async fn create(
    services: &Services,
    ctx: &AuthContext,
    body: CreateRule,
) -> Result<(Uuid, Option<String>, Operation), AppError> {
    let (db, registry, outbound) = (&services.db, &*services.registry, &services.outbound);
    let (ring, creators) = (&*services.keys, &*services.creators);
    ctx.require(MANAGE)?;
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let organization = target_organization(ctx)?;
    let state = RuleState {
        id: Uuid::new_v4(),
        tenant_id: tenant,
        organization_id: organization,
        rule_id: body.rule_id.trim().to_string(),
        rule_name: body.rule_name.trim().to_string(),
        description: body.description,
        rule_type: body.rule_type.as_str().to_string(),
        rule_category: body.rule_category,
        entity_type: body.entity_type.trim().to_string(),
        event_type: body.event_type.filter(|e| !e.trim().is_empty()),
        condition_expression: body.condition_expression.filter(|v| !v.is_null()),
        success_actions: body.success_actions.filter(|v| !v.is_null()),
        failure_actions: body.failure_actions.filter(|v| !v.is_null()),
        enabled: body.enabled.unwrap_or(true),
        priority: body.priority.unwrap_or(100),
        version: body.version.unwrap_or(1),
        effective_from: window(body.effective_from.as_deref(), "effectiveFrom")?,
        effective_to: window(body.effective_to.as_deref(), "effectiveTo")?,
        created_by: ctx.actor_id(),
        updated_by: ctx.actor_id(),
        created_at: OffsetDateTime::now_utc(),
        deleted_at: None,
    };
    let keys = check_rule(ctx, registry, outbound, &state)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    check_keys(
        &mut conn,
        ctx,
        creators,
        (tenant, organization),
        &keys,
        false,
    )
    .await?;
    let id = state.id;
    let secret = calls_webhook(&state)
        .then(|| secrets::generate(ring, tenant, id))
        .transpose()?;
    let op = conn
        .transaction(async |conn| {
            let command = WriteRule {
                command_id: cmd::RULE_CREATE,
                label: "Create business rule",
                before: None,
                after: state,
            };
            let (_, op) = execute(conn, &actor, command).await?;
            if let Some((_, stored)) = &secret {
                secrets::store(conn, tenant, id, stored).await?;
            }
            Ok::<_, AppError>(op)
        })
        .await?;
    cache::invalidate(tenant);
    Ok((id, secret.map(|(shown, _)| shown), op))
}

/// The live rule `id` in the caller's tenant and organizations, locked.
async fn locked(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<RuleState, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    r::table
        .find(id)
        .filter(r::tenant_id.eq(tenant))
        .filter(r::deleted_at.is_null())
        .select(RuleState::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?
        // The one organization-scope rule (stoa_acl::AuthContext::reach).
        .filter(|s| ctx.reach(Some(s.tenant_id), Some(s.organization_id)) == Reach::Write)
        .ok_or_else(|| RulesError::RuleNotFound.into())
}

/// Changes the fields sent; answers the rule's new webhook secret when this
/// change gave a rule without one its first `CALL_WEBHOOK` action (shown
/// this once), and the operation.
pub async fn update(
    services: &Services,
    ctx: &AuthContext,
    id: Uuid,
    body: UpdateRule,
) -> Result<(Option<String>, Operation), AppError> {
    let (db, registry, outbound) = (&services.db, &*services.registry, &services.outbound);
    let (ring, creators) = (&*services.keys, &*services.creators);
    ctx.require(MANAGE)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    let (tenant, secret, op) = conn
        .transaction(async |conn| {
            let before = locked(conn, ctx, id).await?;
            ctx.require_organizations([Some(before.organization_id)])?;
            let mut after = before.clone();
            if let Some(v) = body.rule_id {
                after.rule_id = v.trim().to_string();
            }
            if let Some(v) = body.rule_name {
                after.rule_name = v.trim().to_string();
            }
            if let Some(v) = body.rule_type {
                after.rule_type = v.as_str().to_string();
            }
            if let Some(v) = body.entity_type {
                after.entity_type = v.trim().to_string();
            }
            if let Some(v) = body.description {
                after.description = v;
            }
            if let Some(v) = body.rule_category {
                after.rule_category = v;
            }
            if let Some(v) = body.event_type {
                after.event_type = v.filter(|e| !e.trim().is_empty());
            }
            if let Some(v) = body.enabled {
                after.enabled = v;
            }
            if let Some(v) = body.priority {
                after.priority = v;
            }
            if let Some(v) = body.version {
                after.version = v;
            }
            if let Some(v) = body.effective_from {
                after.effective_from = window(v.as_deref(), "effectiveFrom")?;
            }
            if let Some(v) = body.effective_to {
                after.effective_to = window(v.as_deref(), "effectiveTo")?;
            }
            if let Some(v) = body.condition_expression {
                after.condition_expression = v.filter(|v| !v.is_null());
            }
            if let Some(v) = body.success_actions {
                after.success_actions = v.filter(|v| !v.is_null());
            }
            if let Some(v) = body.failure_actions {
                after.failure_actions = v.filter(|v| !v.is_null());
            }
            after.updated_by = ctx.actor_id();
            let keys = check_rule(ctx, registry, outbound, &after)?;
            check_keys(
                conn,
                ctx,
                creators,
                (after.tenant_id, after.organization_id),
                &keys,
                calls_platform(&before),
            )
            .await?;
            let tenant = after.tenant_id;
            let secret = if calls_webhook(&after) && !secrets::has_secret(conn, tenant, id).await? {
                Some(secrets::generate(ring, tenant, id)?)
            } else {
                None
            };
            let command = WriteRule {
                command_id: cmd::RULE_UPDATE,
                label: "Update business rule",
                before: Some(before),
                after,
            };
            let (_, op) = execute(conn, &actor, command).await?;
            if let Some((_, stored)) = &secret {
                secrets::store(conn, tenant, id, stored).await?;
            }
            Ok::<_, AppError>((tenant, secret.map(|(shown, _)| shown), op))
        })
        .await?;
    cache::invalidate(tenant);
    Ok((secret, op))
}

/// Gives rule `id` a new webhook secret (the old one stops signing at
/// once); answers it (shown this once) and the operation. The action log
/// records the rotation, without the secret and not undoable: undo would
/// bring back a secret that may have leaked.
pub async fn rotate_secret(
    db: &Db,
    ctx: &AuthContext,
    keys: &KeyRing,
    id: Uuid,
) -> Result<(String, Operation), AppError> {
    ctx.require(MANAGE)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    let (tenant, secret, op) = conn
        .transaction(async |conn| {
            let rule = locked(conn, ctx, id).await?;
            ctx.require_organizations([Some(rule.organization_id)])?;
            let (shown, stored) = secrets::generate(keys, rule.tenant_id, id)?;
            let command = cmd::RotateSecret {
                tenant_id: rule.tenant_id,
                organization_id: rule.organization_id,
                id,
                stored,
            };
            let (_, op) = execute(conn, &actor, command).await?;
            Ok::<_, AppError>((rule.tenant_id, shown, op))
        })
        .await?;
    cache::invalidate(tenant);
    Ok((secret, op))
}

pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    ctx.require(MANAGE)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    let (tenant, op) = conn
        .transaction(async |conn| {
            let before = locked(conn, ctx, id).await?;
            ctx.require_organizations([Some(before.organization_id)])?;
            let mut after = before.clone();
            after.deleted_at = Some(OffsetDateTime::now_utc());
            after.updated_by = ctx.actor_id();
            let tenant = after.tenant_id;
            let command = WriteRule {
                command_id: cmd::RULE_DELETE,
                label: "Delete business rule",
                before: Some(before),
                after,
            };
            let (_, op) = execute(conn, &actor, command).await?;
            Ok::<_, AppError>((tenant, op))
        })
        .await?;
    cache::invalidate(tenant);
    Ok(op)
}

fn item(row: RuleRow) -> (RuleItem, RuleState) {
    let s = row.state;
    (
        RuleItem {
            id: s.id,
            rule_id: s.rule_id.clone(),
            rule_name: s.rule_name.clone(),
            description: s.description.clone(),
            rule_type: s.rule_type.clone(),
            rule_category: s.rule_category.clone(),
            entity_type: s.entity_type.clone(),
            event_type: s.event_type.clone(),
            enabled: s.enabled,
            priority: s.priority,
            version: s.version,
            effective_from: s.effective_from,
            effective_to: s.effective_to,
            tenant_id: s.tenant_id,
            organization_id: s.organization_id,
            created_at: s.created_at,
            updated_at: row.updated_at,
        },
        s,
    )
}

/// The live rule `id` as its detail (404 outside the caller's scope).
pub async fn get(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<RuleDetail, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let row = r::table
        .find(id)
        .filter(r::tenant_id.eq(tenant))
        .filter(r::deleted_at.is_null())
        .select(RuleRow::as_select())
        .first(conn)
        .await
        .optional()?
        .filter(|row| ctx.can_see_organization(row.state.organization_id))
        .ok_or(RulesError::RuleNotFound)?;
    let (item, s) = item(row);
    Ok(RuleDetail {
        item,
        condition_expression: s.condition_expression,
        success_actions: s.success_actions,
        failure_actions: s.failure_actions,
        created_by: s.created_by,
        updated_by: s.updated_by,
    })
}

type Boxed<'a> = r::BoxedQuery<'a, diesel::pg::Pg>;

fn filtered<'a>(ctx: &AuthContext, tenant: Uuid, q: &'a RuleListQuery) -> Boxed<'a> {
    let mut query = r::table
        .filter(r::tenant_id.eq(tenant))
        .filter(r::deleted_at.is_null())
        .into_boxed();
    if let Some(orgs) = &ctx.acl.visible_organization_ids {
        query = query.filter(r::organization_id.eq_any(orgs.clone()));
    }
    if let Some(id) = q.id {
        query = query.filter(r::id.eq(id));
    }
    if let Some(s) = q.search.as_deref().filter(|s| !s.trim().is_empty()) {
        query = query.filter(r::rule_name.ilike(format!("%{}%", escape_like(s.trim()))));
    }
    if let Some(s) = q.rule_id.as_deref().filter(|s| !s.trim().is_empty()) {
        query = query.filter(r::rule_id.ilike(format!("%{}%", escape_like(s.trim()))));
    }
    if let Some(t) = q.rule_type {
        query = query.filter(r::rule_type.eq(t.as_str()));
    }
    if let Some(e) = &q.entity_type {
        query = query.filter(r::entity_type.eq(e.clone()));
    }
    if let Some(e) = &q.event_type {
        query = query.filter(r::event_type.eq(e.clone()));
    }
    if let Some(e) = q.enabled {
        query = query.filter(r::enabled.eq(e));
    }
    if let Some(c) = &q.rule_category {
        query = query.filter(r::rule_category.eq(c.clone()));
    }
    query
}

pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    q: &RuleListQuery,
) -> Result<RuleList, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let (page, page_size) = page_of(q.page, q.page_size);
    let total: i64 = filtered(ctx, tenant, q).count().get_result(conn).await?;
    let desc = q.sort_dir.unwrap_or(SortDir::Desc) == SortDir::Desc;
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
    query = match q.sort_field.unwrap_or(RuleSort::Priority) {
        RuleSort::RuleId => by!(r::rule_id),
        RuleSort::RuleName => by!(r::rule_name),
        RuleSort::RuleType => by!(r::rule_type),
        RuleSort::EntityType => by!(r::entity_type),
        RuleSort::Priority => by!(r::priority),
        RuleSort::CreatedAt => by!(r::created_at),
        RuleSort::UpdatedAt => by!(r::updated_at),
    };
    let rows: Vec<RuleRow> = query
        .then_order_by(r::rule_id.asc())
        .then_order_by(r::id.asc())
        .limit(page_size)
        .offset((page - 1) * page_size)
        .select(RuleRow::as_select())
        .load(conn)
        .await?;
    Ok(RuleList {
        items: rows.into_iter().map(|row| item(row).0).collect(),
        total,
        page,
        page_size,
        total_pages: total_pages(total, page_size),
    })
}
