//! Row-level security: the tenant a piece of work acts for, as Postgres sees it.
//!
//! Every table with a `tenant_id` column carries two policies (migrations
//! `2026-12-02-000000_core_row_level_security` and
//! `2026-12-03-000000_core_rls_policy_per_role`): for the role `stoa_app`,
//! a row is visible only when the session setting `stoa.tenant_id` names
//! its tenant; for the role `stoa_bypass`, every row is. The pools connect
//! as the owner and switch every connection to one of these roles (neither
//! owns anything, so the policies apply to them); migrations keep running
//! as the owner.
//!
//! Which setting a connection gets is decided by the [`Scope`] of the task
//! that takes it from the pool ([`crate::db::Db::conn`]):
//!
//! - a request starts [`Scope::Closed`] ([`request`]); the authenticator sets
//!   it to the caller's tenant ([`set_request_scope`]) once the credentials
//!   check out, or to a bypass for a super admin;
//! - a job runs in its tenant ([`in_tenant`]);
//! - cross-tenant work (the session check, login by e-mail, API-key lookup,
//!   claiming jobs, the outbox, the access-log writer, provisioning, seeding)
//!   runs in an explicit [`bypass`], which names its reason, is logged at
//!   debug level and counted ([`bypasses`]);
//! - anything else, including work outside every scope, is
//!   [`Scope::Closed`]: it sees no tenant rows and cannot write any.

use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use uuid::Uuid;

/// The role the tenant pool's connections act as (tenant and closed
/// scopes). It owns no table, so the policies apply to it.
pub const APP_ROLE: &str = "stoa_app";

/// The role the bypass pool's connections act as: its own policy shows
/// every row. Only [`bypass`] scopes reach it.
pub const BYPASS_ROLE: &str = "stoa_bypass";

/// What the rows of tenant tables a task may see and write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// No tenant rows at all (fail closed).
    Closed,
    /// The rows of one tenant (and shared rows whose `tenant_id` is null).
    Tenant(Uuid),
    /// Every row: a cross-tenant path, with the reason it needs it.
    Bypass(&'static str),
}

impl Scope {
    /// The `stoa.tenant_id` a tenant-pool connection needs ('' = none).
    /// Bypass scopes take the bypass pool, whose role needs no setting.
    pub(crate) fn settings(self) -> String {
        match self {
            Scope::Closed | Scope::Bypass(_) => String::new(),
            Scope::Tenant(tenant) => tenant.to_string(),
        }
    }
}

tokio::task_local! {
    static SCOPE: Cell<Scope>;
}

/// Bypass scopes entered by this process, for `/metrics` and tests.
static BYPASSES: AtomicU64 = AtomicU64::new(0);

/// The scope of the current task; [`Scope::Closed`] outside every scope.
pub fn current() -> Scope {
    SCOPE.try_with(Cell::get).unwrap_or(Scope::Closed)
}

/// Whether the current task runs inside a scope at all.
pub fn is_scoped() -> bool {
    SCOPE.try_with(|_| ()).is_ok()
}

/// Runs a request: `f` starts closed, and [`set_request_scope`] called from
/// inside it (the authenticator) opens it for the rest of the request.
pub fn request<F: Future>(f: F) -> impl Future<Output = F::Output> {
    SCOPE.scope(Cell::new(Scope::Closed), f)
}

/// Sets the scope of the enclosing [`request`] (or [`within`]) for the rest
/// of it. Outside every scope this does nothing: such work stays closed.
pub fn set_request_scope(scope: Scope) {
    if let Scope::Bypass(reason) = scope {
        note_bypass(reason);
    }
    let _ = SCOPE.try_with(|cell| cell.set(scope));
}

/// Runs `f` for one tenant's rows (a job of that tenant).
pub fn in_tenant<F: Future>(tenant: Uuid, f: F) -> impl Future<Output = F::Output> {
    SCOPE.scope(Cell::new(Scope::Tenant(tenant)), f)
}

/// Runs `f` in `scope` (e.g. work spawned by a request, in the request's
/// scope: see [`current`]).
pub fn within<F: Future>(scope: Scope, f: F) -> impl Future<Output = F::Output> {
    SCOPE.scope(Cell::new(scope), f)
}

/// Runs `f` across every tenant: the explicit, audited way past the
/// policies. `reason` names the path (it is logged and counted).
pub fn bypass<F: Future>(reason: &'static str, f: F) -> impl Future<Output = F::Output> {
    note_bypass(reason);
    SCOPE.scope(Cell::new(Scope::Bypass(reason)), f)
}

/// Runs `f` across every tenant when `cross_tenant`, else in the current
/// scope (a super admin may act across tenants, a tenant admin may not).
pub async fn bypass_if<F: Future>(cross_tenant: bool, reason: &'static str, f: F) -> F::Output {
    if cross_tenant {
        bypass(reason, f).await
    } else {
        f.await
    }
}

/// A bypass scope for [`within`], logged and counted as [`bypass`] is.
pub fn bypass_scope(reason: &'static str) -> Scope {
    note_bypass(reason);
    Scope::Bypass(reason)
}

fn note_bypass(reason: &'static str) {
    BYPASSES.fetch_add(1, Ordering::Relaxed);
    tracing::debug!(reason, "row-level security bypassed");
}

/// Bypass scopes entered by this process.
pub fn bypasses() -> u64 {
    BYPASSES.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn scopes_nest_and_default_to_closed() {
        assert_eq!(current(), Scope::Closed);
        assert!(!is_scoped());
        let tenant = Uuid::from_u128(1);
        request(async {
            assert_eq!(current(), Scope::Closed);
            bypass("session check", async {
                assert_eq!(current(), Scope::Bypass("session check"));
            })
            .await;
            set_request_scope(Scope::Tenant(tenant));
            assert_eq!(current(), Scope::Tenant(tenant));
        })
        .await;
        set_request_scope(Scope::Tenant(tenant));
        assert_eq!(current(), Scope::Closed, "outside a request nothing opens");
        let before = bypasses();
        bypass("test", async {}).await;
        assert!(bypasses() > before);
    }
}
