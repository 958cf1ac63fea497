//! Discovery cache: each process keeps every tenant's live, enabled rules,
//! compiled, tagged with the tenant's `business_rule_versions.version`. Every
//! change of a tenant's rules (in any process) bumps that version (a trigger
//! on `business_rules`), the way `acl_version` reaches every process.
//!
//! - The event trigger reads the version (one primary-key lookup) on every
//!   event and reloads only when it moved.
//! - The write guard runs on every write of every module, and the execute
//!   endpoints are the engine's hot path, so both read the version at most
//!   once per [`REFRESH`] per tenant ([`recent`]): in between they cost no
//!   query at all (a tenant without GUARD rules costs a write nothing,
//!   [`guard_may_apply`]). A rule changed in another process reaches this
//!   process's guard and execute within [`REFRESH`]; a change made in this
//!   process applies at once ([`invalidate`]).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, RwLock};
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use uuid::Uuid;

use crate::engine::CompiledRule;
use crate::model::RuleState;
use crate::schema::{business_rule_versions, business_rules};

/// How long the guard trusts a tenant's cached rules without reading the version.
pub const REFRESH: Duration = Duration::from_secs(1);
/// Tenants kept per process (past it the cache starts over).
const MAX_TENANTS: usize = 10_000;

struct Entry {
    version: i64,
    checked: Instant,
    has_guards: bool,
    rules: Arc<[Arc<CompiledRule>]>,
}

static CACHE: LazyLock<RwLock<HashMap<Uuid, Entry>>> = LazyLock::new(Default::default);

/// Whether the guard must look at a write of `tenant`: `false` only when the
/// tenant's rules were read within [`REFRESH`] and hold no GUARD rule.
pub fn guard_may_apply(tenant: Uuid) -> bool {
    let cache = CACHE.read().unwrap_or_else(|e| e.into_inner());
    match cache.get(&tenant) {
        Some(e) if e.checked.elapsed() < REFRESH => e.has_guards,
        _ => true,
    }
}

/// The tenant's rules when they were read (or their version checked)
/// within [`REFRESH`]; `None`: call [`rules`].
pub fn recent(tenant: Uuid) -> Option<Arc<[Arc<CompiledRule>]>> {
    let cache = CACHE.read().unwrap_or_else(|e| e.into_inner());
    cache
        .get(&tenant)
        .filter(|e| e.checked.elapsed() < REFRESH)
        .map(|e| e.rules.clone())
}

/// Drops a tenant's cached rules (after a rule write in this process).
pub fn invalidate(tenant: Uuid) {
    CACHE
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&tenant);
}

/// Drops every tenant's cached rules (a change whose tenant is not at hand).
pub fn invalidate_all() {
    CACHE.write().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The tenant's live, enabled rules. `fresh`: read the version first (the
/// execute endpoints, the trigger); otherwise trust an entry younger than
/// [`REFRESH`] (the write guard).
pub async fn rules(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    fresh: bool,
) -> Result<Arc<[Arc<CompiledRule>]>, AppError> {
    let cached = {
        let cache = CACHE.read().unwrap_or_else(|e| e.into_inner());
        cache
            .get(&tenant)
            .map(|e| (e.version, e.checked.elapsed() < REFRESH, e.rules.clone()))
    };
    if let Some((_, true, rules)) = &cached
        && !fresh
    {
        return Ok(rules.clone());
    }
    let version: i64 = business_rule_versions::table
        .find(tenant)
        .select(business_rule_versions::version)
        .first(conn)
        .await
        .optional()?
        .unwrap_or(0);
    if let Some((v, _, rules)) = cached
        && v == version
    {
        if let Some(e) = CACHE
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(&tenant)
        {
            e.checked = Instant::now();
        }
        return Ok(rules);
    }
    // No version row: the tenant never had a rule (the trigger adds the row
    // with the first one), so there is nothing to load.
    let states: Vec<RuleState> = if version == 0 {
        Vec::new()
    } else {
        business_rules::table
            .filter(business_rules::tenant_id.eq(tenant))
            .filter(business_rules::deleted_at.is_null())
            .filter(business_rules::enabled.eq(true))
            .select(RuleState::as_select())
            .load(conn)
            .await?
    };
    let rules: Arc<[Arc<CompiledRule>]> = states
        .iter()
        .map(|s| Arc::new(CompiledRule::compile(s)))
        .collect();
    let has_guards = rules.iter().any(|r| r.is_guard());
    let mut cache = CACHE.write().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= MAX_TENANTS {
        cache.clear();
    }
    let stale = cache.get(&tenant).is_some_and(|e| e.version > version);
    if !stale {
        cache.insert(
            tenant,
            Entry {
                version,
                checked: Instant::now(),
                has_guards,
                rules: rules.clone(),
            },
        );
    }
    Ok(rules)
}
