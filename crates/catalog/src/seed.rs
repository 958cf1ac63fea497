//! Demo and benchmark products (`stoa seed demo --products N`, used by
//! `cargo xtask bench`): plain SQL in batches, since a million products
//! through the API would measure the API. Never used by requests.
//!
//! Each batch is one `INSERT ... SELECT FROM generate_series` statement in
//! its own transaction, so a large seed shows progress (a terminal progress
//! bar) and an interrupted one keeps what it wrote. SKUs carry a prefix of
//! the run, so seeding twice never collides with earlier products.

use diesel::sql_types::{BigInt, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use indicatif::{ProgressBar, ProgressStyle};
use stoa_core::AppError;
use uuid::Uuid;

/// Products per statement.
pub const BATCH: i64 = 5_000;

const INSERT_BATCH: &str = "\
INSERT INTO catalog_products (tenant_id, organization_id, title, description, sku, handle, \
    product_type, is_active, price_amount, price_currency, created_at, updated_at) \
SELECT $1, $2, \
    (ARRAY['Desk','Chair','Lamp','Shelf','Mug','Notebook','Backpack','Headphones'])[1 + i % 8] \
        || ' ' || (ARRAY['Classic','Pro','Mini','Max','Eco','Studio'])[1 + (i / 8) % 6] || ' #' || i, \
    'Demo product ' || i, \
    $3 || '-' || lpad(i::text, 8, '0'), \
    lower($3) || '-' || i, \
    (ARRAY['simple','simple','simple','configurable','virtual','bundle'])[1 + i % 6], \
    i % 10 <> 0, \
    ((i * 37) % 100000) / 100.0 + 0.99, \
    (ARRAY['EUR','USD','PLN'])[1 + i % 3], \
    now() - make_interval(mins => (i % 1000000)::int), now() - make_interval(mins => (i % 1000000)::int) \
FROM generate_series($4::bigint, $5::bigint) AS i";

/// Adds `count` demo products to `tenant` / `organization`, in batches of
/// [`BATCH`]; `progress` draws a bar on the terminal (stderr). Returns how
/// many were added.
pub async fn demo_products(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Uuid,
    count: i64,
    progress: bool,
) -> Result<i64, AppError> {
    let bar = if progress {
        ProgressBar::new(u64::try_from(count.max(0)).unwrap_or(0))
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) =
        ProgressStyle::with_template("products {bar:40} {pos}/{len} ({per_sec}, {eta} left)")
    {
        bar.set_style(style);
    }
    // SKUs: `DEMO<8 hex>-<n>`, unique per run.
    let run = Uuid::new_v4().simple().to_string();
    let prefix = format!("DEMO{}", &run[..8]).to_ascii_uppercase();
    let mut added = 0i64;
    let mut from = 1i64;
    while from <= count {
        let to = (from + BATCH - 1).min(count);
        let n = diesel::sql_query(INSERT_BATCH)
            .bind::<SqlUuid, _>(tenant)
            .bind::<SqlUuid, _>(organization)
            .bind::<Text, _>(&prefix)
            .bind::<BigInt, _>(from)
            .bind::<BigInt, _>(to)
            .execute(conn)
            .await?;
        added += i64::try_from(n).unwrap_or(0);
        bar.inc(u64::try_from(n).unwrap_or(0));
        from = to + 1;
    }
    bar.finish();
    diesel::sql_query("ANALYZE catalog_products")
        .execute(conn)
        .await?;
    Ok(added)
}

/// The demo products of a new workspace (the registry's demo-data slot,
/// which onboarding's "prepare workspace" job runs): [`demo_products`]
/// into the scope, without a progress bar.
pub fn demo_data() -> stoa_acl::DemoData {
    stoa_acl::DemoData {
        kind: "products",
        module: crate::MODULE.id,
        seeder: std::sync::Arc::new(DemoProducts),
    }
}

struct DemoProducts;

impl stoa_acl::DemoSeeder for DemoProducts {
    fn seed<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        scope: stoa_acl::DemoScope<'a>,
        count: i64,
    ) -> futures_util::future::BoxFuture<'a, Result<u64, AppError>> {
        Box::pin(async move {
            let written =
                demo_products(conn, scope.tenant_id, scope.organization_id, count, false).await?;
            Ok(u64::try_from(written).unwrap_or(0))
        })
    }
}
