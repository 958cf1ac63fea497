//! The demo-data slot: modules whose records a new workspace can start with
//! (onboarding's "prepare workspace" job: demo deals, demo products) seed
//! them on the job's connection, so onboarding depends on no domain crate.

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use stoa_core::AppError;
use uuid::Uuid;

/// Where demo records go: the new workspace's tenant and organization, and
/// the users that may own them (the new admin).
#[derive(Clone, Copy, Debug)]
pub struct DemoScope<'a> {
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub owners: &'a [Uuid],
}

/// Seeds `count` demo records of one kind into a scope (idempotent enough
/// for a retried job unit: numbering continues after what an earlier run
/// added). Returns how many it wrote.
pub trait DemoSeeder: Send + Sync {
    fn seed<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        scope: DemoScope<'a>,
        count: i64,
    ) -> BoxFuture<'a, Result<u64, AppError>>;
}

/// One module's demo records: the kind names the count in the job's
/// payload and its result (`deals`, `products`).
#[derive(Clone)]
pub struct DemoData {
    pub kind: &'static str,
    pub module: &'static str,
    pub seeder: Arc<dyn DemoSeeder>,
}

impl std::fmt::Debug for DemoData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoData")
            .field("kind", &self.kind)
            .field("module", &self.module)
            .finish_non_exhaustive()
    }
}
