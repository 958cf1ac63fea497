//! Demo and benchmark data (`stoa seed demo --deals N`, `cargo xtask dev`,
//! `cargo xtask bench`): a demo pipeline with its stages, and deals inserted
//! with plain SQL in batches (seeding through the API would measure the API).
//! Never used by the server's requests.

use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use uuid::Uuid;

use crate::schema::{customer_pipeline_stages, customer_pipelines};

/// The demo pipeline's name: found again by later runs, which reuse it.
pub const DEMO_PIPELINE: &str = "Sales pipeline";
/// Its stages, in order.
pub const DEMO_STAGES: &[&str] = &[
    "Lead",
    "Qualified",
    "Proposal",
    "Negotiation",
    "Won",
    "Lost",
];
/// Deals per insert statement.
pub const BATCH: i64 = 20_000;

/// The demo pipeline of `organization` (created with its stages on the
/// first run); its stage ids in order.
pub async fn demo_pipeline(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Uuid,
) -> Result<(Uuid, Vec<Uuid>), AppError> {
    let existing: Option<Uuid> = customer_pipelines::table
        .filter(customer_pipelines::tenant_id.eq(tenant))
        .filter(customer_pipelines::organization_id.eq(organization))
        .filter(customer_pipelines::name.eq(DEMO_PIPELINE))
        .select(customer_pipelines::id)
        .first(conn)
        .await
        .optional()?;
    let pipeline = match existing {
        Some(id) => id,
        None => {
            // The default unless the organization has one (one default each).
            let has_default: bool = diesel::select(diesel::dsl::exists(
                customer_pipelines::table
                    .filter(customer_pipelines::tenant_id.eq(tenant))
                    .filter(customer_pipelines::organization_id.eq(organization))
                    .filter(customer_pipelines::is_default.eq(true)),
            ))
            .get_result(conn)
            .await?;
            diesel::insert_into(customer_pipelines::table)
                .values((
                    customer_pipelines::tenant_id.eq(tenant),
                    customer_pipelines::organization_id.eq(organization),
                    customer_pipelines::name.eq(DEMO_PIPELINE),
                    customer_pipelines::is_default.eq(!has_default),
                ))
                .returning(customer_pipelines::id)
                .get_result(conn)
                .await?
        }
    };
    let mut stages: Vec<Uuid> = customer_pipeline_stages::table
        .filter(customer_pipeline_stages::pipeline_id.eq(pipeline))
        .order((
            customer_pipeline_stages::position,
            customer_pipeline_stages::id,
        ))
        .select(customer_pipeline_stages::id)
        .load(conn)
        .await?;
    if stages.is_empty() {
        for (position, label) in DEMO_STAGES.iter().enumerate() {
            let id: Uuid = diesel::insert_into(customer_pipeline_stages::table)
                .values((
                    customer_pipeline_stages::tenant_id.eq(tenant),
                    customer_pipeline_stages::organization_id.eq(organization),
                    customer_pipeline_stages::pipeline_id.eq(pipeline),
                    customer_pipeline_stages::label.eq(*label),
                    customer_pipeline_stages::position.eq(i32::try_from(position).unwrap_or(0)),
                ))
                .returning(customer_pipeline_stages::id)
                .get_result(conn)
                .await?;
            stages.push(id);
        }
    }
    Ok((pipeline, stages))
}

/// Where demo deals go: tenant, organization, the demo pipeline and its
/// stages, and the owners taken in turn.
struct Target<'a> {
    tenant: Uuid,
    organization: Uuid,
    pipeline: Uuid,
    stages: &'a [Uuid],
    owners: &'a [Uuid],
}

/// Inserts deals `from..from+count` of the demo set: titles `Deal 000001`,
/// stages, owners, values (EUR, USD, PLN) and close dates spread evenly,
/// creation times one minute apart going back from now.
async fn insert_batch(
    conn: &mut AsyncPgConnection,
    to: &Target<'_>,
    from: i64,
    count: i64,
) -> Result<usize, AppError> {
    let labels: Vec<String> = DEMO_STAGES.iter().map(|s| s.to_string()).collect();
    let added = diesel::sql_query(
        "INSERT INTO customer_deals (tenant_id, organization_id, title, status, pipeline_id, \
             pipeline_stage_id, pipeline_stage, owner_user_id, value_amount, value_currency, \
             probability, expected_close_at, source, created_at, updated_at) \
         SELECT $1, $2, 'Deal ' || lpad(i::text, 7, '0'), \
             CASE i % cardinality($4::uuid[]) WHEN 4 THEN 'won' WHEN 5 THEN 'lost' ELSE 'open' END, \
             $3, ($4::uuid[])[1 + i % cardinality($4::uuid[])], \
             ($5::text[])[1 + i % cardinality($4::uuid[])], \
             CASE WHEN cardinality($6::uuid[]) = 0 THEN NULL \
                  ELSE ($6::uuid[])[1 + i % greatest(cardinality($6::uuid[]), 1)] END, \
             ((i * 7919) % 100000)::numeric + 0.5, \
             (ARRAY['EUR','USD','PLN'])[1 + i % 3], (i * 13) % 101, \
             now() + make_interval(days => (i % 365)::int), \
             (ARRAY['web','referral','event','partner'])[1 + i % 4], \
             now() - make_interval(mins => i::int), now() - make_interval(mins => i::int) \
         FROM generate_series($7::bigint, $7::bigint + $8::bigint - 1) AS i",
    )
    .bind::<SqlUuid, _>(to.tenant)
    .bind::<SqlUuid, _>(to.organization)
    .bind::<SqlUuid, _>(to.pipeline)
    .bind::<Array<SqlUuid>, _>(to.stages)
    .bind::<Array<Text>, _>(labels)
    .bind::<Array<SqlUuid>, _>(to.owners)
    .bind::<BigInt, _>(from)
    .bind::<BigInt, _>(count)
    .execute(conn)
    .await?;
    Ok(added)
}

/// Seeds the demo pipeline and `deals` deals in `organization`, owned in
/// turn by `owners`, in batches of [`BATCH`]; `progress` hears how many
/// deals are in after each batch. Then refreshes the table's statistics.
/// Returns the number of deals added.
pub async fn demo(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Uuid,
    owners: &[Uuid],
    deals: i64,
    mut progress: impl FnMut(u64),
) -> Result<u64, AppError> {
    let (pipeline, stages) = demo_pipeline(conn, tenant, organization).await?;
    // Numbering continues after deals an earlier run added.
    let start: i64 = crate::schema::customer_deals::table
        .filter(crate::schema::customer_deals::tenant_id.eq(tenant))
        .count()
        .get_result(conn)
        .await?;
    let to = Target {
        tenant,
        organization,
        pipeline,
        stages: &stages,
        owners,
    };
    let mut added = 0u64;
    let mut next = start + 1;
    let end = start + deals.max(0);
    while next <= end {
        let count = BATCH.min(end - next + 1);
        let n = insert_batch(conn, &to, next, count).await?;
        added += n as u64;
        next += count;
        progress(added);
    }
    diesel::sql_query("ANALYZE customer_deals")
        .execute(conn)
        .await?;
    Ok(added)
}

/// [`demo`] with a terminal progress bar (indicatif) on stderr.
pub async fn demo_with_bar(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Uuid,
    owners: &[Uuid],
    deals: i64,
) -> Result<u64, AppError> {
    let bar = indicatif::ProgressBar::new(u64::try_from(deals.max(0)).unwrap_or(0));
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("deals {bar:40} {pos}/{len} ({per_sec}, eta {eta})")
    {
        bar.set_style(style);
    }
    let added = demo(conn, tenant, organization, owners, deals, |n| {
        bar.set_position(n)
    })
    .await;
    bar.finish();
    added
}

/// The demo deals of a new workspace (the registry's demo-data slot, which
/// onboarding's "prepare workspace" job runs): [`demo`] into the scope,
/// owned by its owners.
pub fn demo_data() -> stoa_acl::DemoData {
    stoa_acl::DemoData {
        kind: "deals",
        module: crate::MODULE.id,
        seeder: std::sync::Arc::new(DemoDeals),
    }
}

struct DemoDeals;

impl stoa_acl::DemoSeeder for DemoDeals {
    fn seed<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        scope: stoa_acl::DemoScope<'a>,
        count: i64,
    ) -> futures_util::future::BoxFuture<'a, Result<u64, AppError>> {
        Box::pin(demo(
            conn,
            scope.tenant_id,
            scope.organization_id,
            scope.owners,
            count,
            |_| {},
        ))
    }
}
