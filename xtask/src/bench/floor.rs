//! The database's floor under a bulk job (issue 52: "bounded by the
//! database"): the job's own change of the same rows run bare in psql, in
//! the same run, on the same table with all its indexes, and rolled back so
//! the scenarios after it read the data they expect. The job's time beside
//! it says how far above the database the job is, on any machine.

use std::time::Duration;

use crate::cmd::Result;
use crate::pg::Database;

/// How long `statement` takes bare, and how many rows it changed. `setup`
/// (untimed) fills the temporary table `bench_rows` with the rows to
/// change; `statement` reads it and changes them; the change is undone by a
/// subtransaction's exception, which carries the timing out of it.
pub(super) fn bare(
    db: &Database,
    url: &str,
    setup: &str,
    statement: &str,
) -> Result<(Duration, u64)> {
    let sql = format!(
        "DO $floor$ \
         DECLARE t0 timestamptz; took float8; n bigint; \
         BEGIN \
           {setup}; \
           BEGIN \
             t0 := clock_timestamp(); \
             {statement}; \
             GET DIAGNOSTICS n = ROW_COUNT; \
             took := extract(epoch FROM clock_timestamp() - t0); \
             RAISE EXCEPTION '% %', took, n; \
           EXCEPTION WHEN raise_exception THEN \
             PERFORM set_config('stoa_bench.floor', SQLERRM, false); \
           END; \
           DROP TABLE bench_rows; \
         END $floor$; \
         SELECT current_setting('stoa_bench.floor')"
    );
    let out = db.psql(url, &sql)?;
    let mut parts = out.split_whitespace();
    let seconds: f64 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("the floor statement printed `{out}`"))?;
    let rows: u64 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("the floor statement printed `{out}`"))?;
    Ok((Duration::from_secs_f64(seconds), rows))
}

/// The note of a job beside its floor: "the same UPDATE bare in psql 5.7 s
/// (100,000 rows); the job 1.4x it".
pub(super) fn note(what: &str, floor: Duration, rows: u64, job_seconds: f64) -> String {
    let floor = floor.as_secs_f64();
    let ratio = if floor > 0.0 {
        format!("; the job {:.1}x it", job_seconds / floor)
    } else {
        String::new()
    };
    format!("{what} bare in psql {floor:.2} s ({rows} rows, rolled back){ratio}")
}

/// The floor of the deal job: the same stage change of the deals the job
/// just moved (the newest updated ones), back to the stage they came from.
pub(super) fn deal_stage(
    db: &Database,
    url: &str,
    rows: usize,
    stage: &str,
) -> Result<(Duration, u64)> {
    bare(
        db,
        url,
        &format!(
            "CREATE TEMP TABLE bench_rows AS SELECT id FROM customer_deals \
             ORDER BY updated_at DESC LIMIT {rows}; ANALYZE bench_rows"
        ),
        &format!(
            "UPDATE customer_deals d SET pipeline_stage_id = '{stage}'::uuid, updated_at = now() \
             WHERE d.id IN (SELECT id FROM bench_rows)"
        ),
    )
}

/// The floor of the delete job: the same products deleted bare.
pub(super) fn product_delete(db: &Database, url: &str) -> Result<(Duration, u64)> {
    bare(
        db,
        url,
        "CREATE TEMP TABLE bench_rows AS SELECT id FROM catalog_products; ANALYZE bench_rows",
        "DELETE FROM catalog_products p WHERE p.id IN (SELECT id FROM bench_rows)",
    )
}
