//! The module's jobs: preparing a verified workspace's demo data (a progress
//! job the status page follows) and pruning expired requests (recurring).

use std::sync::Arc;
use std::time::Duration;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_acl::{DemoData, DemoScope, Registry};
use stoa_jobs::{JobContext, JobError, JobHandler, Outcome, Schedule, UnitReport};
use uuid::Uuid;

use crate::schema::onboarding_requests;

/// The demo-data job of a verified workspace.
pub const PREPARE_WORKSPACE: &str = "onboarding.prepare_workspace";
/// The recurring prune of expired requests.
pub const PRUNE_EXPIRED: &str = "onboarding.prune_expired";
/// How often expired requests are pruned.
pub const PRUNE_EVERY: Duration = Duration::from_secs(3600);
/// How long an expired request is kept, so a late click is told the link
/// expired rather than that it is unknown.
pub const KEEP_EXPIRED_HOURS: i32 = 24;

/// The module's job handlers. The workspace job seeds every kind of demo
/// records the modules declared in `registry` (its demo-data slot).
pub fn job_handlers(registry: &Registry) -> Vec<Arc<dyn JobHandler>> {
    vec![
        Arc::new(PrepareWorkspace {
            demo: registry.demo_data().to_vec(),
        }),
        Arc::new(PruneExpired),
    ]
}

/// The module's recurring jobs.
pub fn schedules() -> Vec<Schedule> {
    vec![Schedule::new(PRUNE_EXPIRED, PRUNE_EXPIRED, PRUNE_EVERY)]
}

/// `onboarding.prepare_workspace` `{requestId, deals, products}`: seeds, for
/// each kind of demo records a module declared (`deals` by stoa-customers,
/// `products` by stoa-catalog), the payload's count of them into the job's
/// tenant and organization, each a unit (a retry skips what is done), then
/// marks the request prepared. Records with owners are owned by the job's
/// creator, the new admin.
pub struct PrepareWorkspace {
    demo: Vec<DemoData>,
}

impl JobHandler for PrepareWorkspace {
    fn kind(&self) -> &'static str {
        PREPARE_WORKSPACE
    }

    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let scope = ctx
                .scope()
                .ok_or_else(|| JobError::fatal("the workspace job has no tenant"))?;
            let tenant = scope.tenant_id;
            let organization = scope
                .organization_id
                .ok_or_else(|| JobError::fatal("the workspace job has no organization"))?;
            let payload = ctx.payload();
            let request: Option<Uuid> = payload["requestId"].as_str().and_then(|s| s.parse().ok());
            let owners: Arc<[Uuid]> = scope.user_id.into_iter().collect();
            let mut result = serde_json::Map::new();
            let mut affected = 0;
            for data in &self.demo {
                let count = payload[data.kind].as_i64().unwrap_or(0).clamp(0, 10_000);
                result.insert(data.kind.to_string(), json!(count));
                if count == 0 {
                    continue;
                }
                affected += count;
                let seeder = Arc::clone(&data.seeder);
                let owners = Arc::clone(&owners);
                ctx.unit(
                    data.kind,
                    usize::try_from(count).unwrap_or(0),
                    Box::new(move |conn| {
                        Box::pin(async move {
                            let scope = DemoScope {
                                tenant_id: tenant,
                                organization_id: organization,
                                owners: &owners,
                            };
                            seeder.seed(conn, scope, count).await?;
                            Ok(UnitReport::ok())
                        })
                    }),
                )
                .await?;
            }
            if let Some(request) = request {
                let mut conn = ctx.db.conn().await?;
                diesel::update(
                    onboarding_requests::table
                        .find(request)
                        .filter(onboarding_requests::preparation_completed_at.is_null()),
                )
                .set((
                    onboarding_requests::preparation_completed_at.eq(diesel::dsl::now),
                    onboarding_requests::updated_at.eq(diesel::dsl::now),
                ))
                .execute(&mut *conn)
                .await?;
            }
            result.insert("affectedCount".into(), json!(affected));
            Ok(Outcome::Completed(Some(serde_json::Value::Object(result))))
        })
    }
}

/// `onboarding.prune_expired`: deletes pending requests that expired more
/// than [`KEEP_EXPIRED_HOURS`] ago (their password hashes with them) and
/// ended mail windows.
/// Idempotent.
pub struct PruneExpired;

impl JobHandler for PruneExpired {
    fn kind(&self) -> &'static str {
        PRUNE_EXPIRED
    }

    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let mut conn = ctx.db.conn().await?;
            let deleted = prune_expired(&mut conn, KEEP_EXPIRED_HOURS).await?;
            Ok(Outcome::Completed(Some(json!({"deleted": deleted}))))
        })
    }
}

/// Deletes pending requests that expired more than `keep_hours` ago, and
/// the mail windows that have ended (`onboarding_mail_sends`).
pub async fn prune_expired(
    conn: &mut diesel_async::AsyncPgConnection,
    keep_hours: i32,
) -> QueryResult<usize> {
    diesel::sql_query(
        "DELETE FROM onboarding_mail_sends WHERE sent_at < now() - make_interval(secs => $1)",
    )
    .bind::<diesel::sql_types::Integer, _>(crate::service::MAIL_WINDOW_SECS)
    .execute(conn)
    .await?;
    diesel::sql_query(
        "DELETE FROM onboarding_requests \
         WHERE status = 'pending' AND expires_at < now() - make_interval(hours => $1)",
    )
    .bind::<diesel::sql_types::Integer, _>(keep_hours)
    .execute(conn)
    .await
}
