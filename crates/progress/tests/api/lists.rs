use diesel_async::RunQueryDsl;
use serde_json::{Value, json};

use super::support::*;

const JOBS: &str = "/api/progress/jobs";

/// `count` running jobs of `tenant`, one second apart; every third has not
/// started (NULL `started_at`), so keyset paging over a nullable column is
/// exercised too.
async fn insert_jobs(app_db: &stoa_core::db::Db, tenant: &Tenant, count: u32) {
    let mut conn = app_db.conn().await.unwrap();
    diesel::sql_query(format!(
        "INSERT INTO progress_jobs (job_type, name, status, tenant_id, organization_id, created_at, started_at) \
         SELECT 'bulk.items', 'Job ' || g, 'running', '{}', '{}', \
                now() - g * interval '1 second', \
                CASE WHEN g % 3 = 0 THEN NULL ELSE now() - (g % 7) * interval '1 minute' END \
         FROM generate_series(1, {count}) g",
        tenant.tenant_id, tenant.organization_id
    ))
    .execute(&mut *conn)
    .await
    .unwrap();
}

fn ids(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn one_statement_per_page_with_capped_totals() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    insert_jobs(&app.db, &acme, 1100).await;
    insert_jobs(&app.db, &globex, 5).await;

    app.send(get(JOBS, &admin)).await;
    // Cached caller: the session check and the page with its count.
    let before = stoa_core::db::thread_queries();
    let res = app.send(get(JOBS, &admin)).await;
    assert_eq!(
        stoa_core::db::thread_queries() - before,
        2,
        "job list statements"
    );
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(1000), json!(true))
    );
    assert_eq!(body["totalPages"], 50);
    assert!(body["nextCursor"].is_string());

    let body = app
        .send(get(&format!("{JOBS}?includeTotal=true"), &admin))
        .await
        .json();
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(1100), json!(false)),
        "exact, and the other tenant's jobs are not counted"
    );
    let body = app
        .send(get(&format!("{JOBS}?includeTotal=false"), &admin))
        .await
        .json();
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(20), json!(false))
    );
    let body = app
        .send(get(&format!("{JOBS}?page=50&pageSize=100"), &admin))
        .await
        .json();
    assert_eq!(
        (
            body["total"].clone(),
            body["items"].as_array().unwrap().len()
        ),
        (json!(1100), 0),
        "a page past the end counts on its own"
    );
}

#[actix_web::test]
async fn cursors_walk_every_order_like_pages() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    insert_jobs(&app.db, &acme, 250).await;

    for order in [
        "",
        "&sortDir=asc",
        "&sortField=startedAt&sortDir=asc",
        "&sortField=startedAt",
        "&sortField=finishedAt",
    ] {
        let mut by_page = Vec::new();
        for page in 1..=3 {
            let body = app
                .send(get(
                    &format!("{JOBS}?pageSize=100&page={page}{order}"),
                    &admin,
                ))
                .await
                .json();
            by_page.extend(ids(&body));
        }
        assert_eq!(by_page.len(), 250, "{order}");

        let mut by_cursor = Vec::new();
        let mut url = format!("{JOBS}?pageSize=100{order}");
        loop {
            let before = stoa_core::db::thread_queries();
            let res = app.send(get(&url, &admin)).await;
            assert_eq!(res.status, 200, "{order}: {}", res.text());
            assert_eq!(stoa_core::db::thread_queries() - before, 2, "{order}");
            let body = res.json();
            assert_eq!(body["total"], 250, "{order}");
            by_cursor.extend(ids(&body));
            match body["nextCursor"].as_str() {
                Some(cursor) => url = format!("{JOBS}?pageSize=100{order}&cursor={cursor}"),
                None => break,
            }
        }
        assert_eq!(by_cursor, by_page, "{order}");
    }
}

#[actix_web::test]
async fn foreign_or_damaged_cursors_are_rejected() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    insert_jobs(&app.db, &acme, 30).await;
    let body = app
        .send(get(&format!("{JOBS}?pageSize=10"), &admin))
        .await
        .json();
    let cursor = body["nextCursor"].as_str().unwrap().to_string();
    for url in [
        format!("{JOBS}?pageSize=10&cursor=not-a-cursor"),
        format!("{JOBS}?pageSize=10&sortDir=asc&cursor={cursor}"),
        format!("{JOBS}?pageSize=10&sortField=startedAt&cursor={cursor}"),
    ] {
        let res = app.send(get(&url, &admin)).await;
        assert_eq!(res.status, 400, "{url}: {}", res.text());
    }
}
