//! The job queue's benchmark, with progress records (`stoa bench-jobs`, run by `cargo xtask
//! bench`): empty one-item units, so a run measures what the queue costs per
//! unit. Never used by the server's requests.

use serde_json::{Map, Value};
use stoa_core::db::Db;

/// `bench.units` `{units}`: empty units of one item each, so a run measures
/// what the queue itself costs per unit (its `job_units` row, the progress
/// counter, the transaction).
pub struct BenchUnits;

impl stoa_jobs::JobHandler for BenchUnits {
    fn kind(&self) -> &'static str {
        "bench.units"
    }
    fn run<'a>(
        &'a self,
        ctx: &'a stoa_jobs::JobContext,
    ) -> stoa_jobs::BoxFuture<'a, Result<stoa_jobs::Outcome, stoa_jobs::JobError>> {
        Box::pin(async move {
            let units = ctx.payload()["units"].as_u64().unwrap_or(0);
            for unit in 0..units {
                ctx.unit(
                    &unit.to_string(),
                    1,
                    Box::new(|_| Box::pin(async { Ok(stoa_jobs::UnitReport::ok()) })),
                )
                .await?;
            }
            Ok(stoa_jobs::Outcome::Completed(None))
        })
    }
}

/// Runs one job of each size in `units` through a worker and returns the cost
/// per unit in µs by size (`{"1000": 812.5, ...}`). Flat figures mean progress
/// costs O(1) per unit. The jobs belong to `tenant` (the demo tenant).
pub async fn per_unit_costs(
    db: &Db,
    tenant: uuid::Uuid,
    units: &[u32],
) -> Result<Map<String, Value>, String> {
    let other = |e: String| e;
    let workers = stoa_jobs::Workers::new(
        db.clone(),
        vec![std::sync::Arc::new(BenchUnits)],
        stoa_jobs::WorkerConfig::default(),
    )
    .with_records(crate::records());
    let mut per_unit = serde_json::Map::new();
    for &count in units {
        let mut conn = db.conn().await.map_err(|e| e.to_string())?;
        let progress = crate::service::create(
            &mut conn,
            &crate::service::NewJob {
                job_type: "bench.units".into(),
                name: format!("bench {count} units"),
                total_count: i32::try_from(count).ok(),
                tenant_id: tenant,
                ..Default::default()
            },
        )
        .await
        .map_err(|e| other(e.to_string()))?;
        stoa_jobs::enqueue(
            &mut conn,
            "bench.units",
            &serde_json::json!({ "units": count }),
            Some(progress),
            1,
        )
        .await
        .map_err(|e| other(e.to_string()))?;
        drop(conn);
        let started = std::time::Instant::now();
        if !workers.run_one().await.map_err(|e| e.to_string())? {
            return Err(other("the bench job was not claimed".into()));
        }
        let micros = started.elapsed().as_secs_f64() * 1e6 / f64::from(count.max(1));
        let mut conn = db.conn().await.map_err(|e| e.to_string())?;
        let done = crate::service::get(&mut conn, progress)
            .await
            .map_err(|e| other(e.to_string()))?
            .filter(|job| job.status == "completed" && job.processed_count == count as i32);
        if done.is_none() {
            return Err(other(format!(
                "the {count}-unit bench job did not complete"
            )));
        }
        per_unit.insert(
            count.to_string(),
            serde_json::json!((micros * 10.0).round() / 10.0),
        );
    }
    Ok(per_unit)
}
