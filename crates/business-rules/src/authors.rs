//! Who a rule acts for: its author — the last person who saved it, whose
//! rights were checked then — as they stand *now*. A rule's actions are
//! delegated work (docs/security.md, "Delegated work"): before a triggered
//! rule runs, its author is resolved again in the record's organization
//! (`stoa_acl::CreatorResolver`, the same resolution as a queued job's
//! creator), and must still hold `business_rules.manage` and the features
//! needed to read the rule's entity. Otherwise the rule does not run (its
//! log says why), so a demoted or deleted author's rules stop acting at
//! once. Its `SET_FIELD` writes and `CALL_OPEN_MERCATO` calls then act with
//! what both the author and their own credential hold
//! (`AuthContext::delegated_by`).

use std::collections::HashMap;
use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use stoa_acl::accounts::{Creator, CreatorResolver};
use stoa_acl::{AuthContext, Registry};
use stoa_core::AppError;
use uuid::Uuid;

use crate::MANAGE;
use crate::engine::{CompiledRule, Request};

/// Rules split by whether their authors may still have them act
/// ([`authorize`]).
#[derive(Default)]
pub struct Authorized {
    /// The rules that run.
    pub acting: Vec<Arc<CompiledRule>>,
    /// The rules that do not, with the reason (their logs say it).
    pub stopped: Vec<(Arc<CompiledRule>, String)>,
    /// Each acting rule's author as they stand now, by rule id (none for a
    /// rule no person saved).
    pub authors: HashMap<Uuid, AuthContext>,
}

/// Splits `rules` for a run on `req`'s record (each author resolved once).
pub async fn authorize(
    conn: &mut AsyncPgConnection,
    creators: &dyn CreatorResolver,
    registry: &Registry,
    rules: Vec<Arc<CompiledRule>>,
    req: &Request,
) -> Result<Authorized, AppError> {
    let mut out = Authorized::default();
    let mut seen: HashMap<Uuid, Result<Option<AuthContext>, String>> = HashMap::new();
    for rule in rules {
        let verdict = match rule.author.and_then(|a| seen.get(&a)) {
            Some(known) => known.clone(),
            None => {
                let found = author_now(conn, creators, registry, &rule, req).await?;
                if let Some(author) = rule.author {
                    seen.insert(author, found.clone());
                }
                found
            }
        };
        match verdict {
            Ok(author) => {
                if let Some(author) = author {
                    out.authors.insert(rule.id, author);
                }
                out.acting.push(rule);
            }
            Err(reason) => out.stopped.push((rule, reason)),
        }
    }
    Ok(out)
}

/// The author of `rule` for a run on `req`'s record: `Ok(None)` for a rule
/// no person saved (a seeded one), `Ok(Some(author))` when the author may
/// still have it act, `Err(reason)` when not.
pub async fn author_now(
    conn: &mut AsyncPgConnection,
    creators: &dyn CreatorResolver,
    registry: &Registry,
    rule: &CompiledRule,
    req: &Request,
) -> Result<Result<Option<AuthContext>, String>, AppError> {
    let Some(author) = rule.author else {
        return Ok(Ok(None));
    };
    // A rule saved by a user or by an API key: the id is one or the other.
    let mut found = None;
    let mut reason = String::new();
    for (user_id, api_key_id) in [(Some(author), None), (None, Some(author))] {
        let creator = Creator {
            tenant_id: req.tenant_id,
            organization_id: Some(req.organization_id),
            user_id,
            api_key_id,
        };
        match creators.resolve_creator(conn, creator).await? {
            Ok(ctx) => {
                found = Some(ctx);
                break;
            }
            Err(gone) if user_id.is_some() => reason = gone.0,
            Err(_) => {}
        }
    }
    let Some(ctx) = found else {
        return Ok(Err(format!(
            "the rule's author can no longer act: {}",
            reason.replace("created it", "saved the rule")
        )));
    };
    let mut needed = vec![MANAGE];
    if let Some(entity) = registry.rule_entity(&rule.entity_type) {
        needed.extend(entity.features);
    }
    if let Some(missing) = needed.iter().find(|f| !ctx.has(f)) {
        return Ok(Err(format!(
            "the rule's author no longer holds {missing} in the record's organization"
        )));
    }
    Ok(Ok(Some(ctx)))
}
