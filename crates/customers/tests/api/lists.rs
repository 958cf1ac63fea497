//! The deal list: filters, sorts, capped totals, keyset cursors, and its
//! statement count.

use serde_json::{Value, json};
use uuid::Uuid;

use super::support::*;

/// Seeds `n` demo deals (six stages in turn, owners in turn) into the root organization.
async fn seeded(db: &stoa_core::db::Db, acme: &Tenant, n: i64) -> Vec<Uuid> {
    let mut conn = db.conn().await.unwrap();
    let owners = [acme.admin, acme.employee];
    stoa_customers::seed::demo(
        &mut conn,
        acme.tenant_id,
        acme.organization_id,
        &owners,
        n,
        |_| {},
    )
    .await
    .unwrap();
    stoa_customers::seed::demo_pipeline(&mut conn, acme.tenant_id, acme.organization_id)
        .await
        .unwrap()
        .1
}

fn ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn a_page_with_filters_is_two_statements_with_a_capped_total() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let stages = seeded(&app.db, &acme, 1_200).await;
    let admin = token_for(&app.db, acme.admin).await;
    // Warm-up: fills the ACL cache.
    app.send(get(&format!("{DEALS}?pageSize=1"), &admin)).await;
    let (n, body) = app.statements(DEALS, &admin).await;
    assert_eq!(n, 2, "session check and one list statement");
    assert_eq!(body["items"].as_array().unwrap().len(), 50);
    assert_eq!(
        (&body["total"], &body["totalCapped"]),
        (&json!(1000), &json!(true))
    );
    assert_eq!(body["items"][0]["title"], "Deal 0000001", "newest first");
    assert!(body["nextCursor"].is_string());

    let filtered = format!(
        "{DEALS}?pipelineStageId={}&ownerUserId={}&valueMin=100&valueMax=90000&valueCurrency=USD\
         &expectedCloseAtFrom=2000-01-01&sortField=value&sortDir=asc&pageSize=20",
        stages[1], acme.employee
    );
    let (n, page) = app.statements(&filtered, &admin).await;
    assert_eq!(n, 2, "filters add no statement");
    let items = page["items"].as_array().unwrap();
    assert!(!items.is_empty());
    let mut last = -1.0;
    for d in items {
        assert_eq!(d["pipeline_stage_id"], stages[1].to_string());
        assert_eq!(d["owner_user_id"], acme.employee.to_string());
        assert_eq!(d["value_currency"], "USD");
        let v: f64 = d["value_amount"].as_str().unwrap().parse().unwrap();
        assert!(
            (100.0..=90000.0).contains(&v) && v >= last,
            "{v} after {last}"
        );
        last = v;
    }
    let (n, exact) = app
        .statements(&format!("{filtered}&includeTotal=true"), &admin)
        .await;
    assert_eq!(n, 2);
    assert_eq!(exact["totalCapped"], false);
    let expected = count(
        &app.db,
        &format!(
            "SELECT count(*) AS n FROM customer_deals WHERE pipeline_stage_id = '{}' \
             AND owner_user_id = '{}' AND value_amount BETWEEN 100 AND 90000 AND value_currency = 'USD'",
            stages[1], acme.employee
        ),
    )
    .await;
    assert_eq!(exact["total"], expected);

    // Search, status and id.
    let found = app
        .send(get(&format!("{DEALS}?search=deal%200000012"), &admin))
        .await
        .json();
    assert_eq!(found["total"], 1);
    assert_eq!(found["items"][0]["title"], "Deal 0000012");
    let won = app
        .send(get(
            &format!("{DEALS}?status=won&includeTotal=true"),
            &admin,
        ))
        .await
        .json();
    assert_eq!(won["total"], 200);
    let one = &found["items"][0]["id"];
    let by_id = app
        .send(get(
            &format!("{DEALS}?id={}", one.as_str().unwrap()),
            &admin,
        ))
        .await
        .json();
    assert_eq!(by_id["total"], 1);
}

#[actix_web::test]
async fn cursors_walk_every_sort_exactly_once() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    seeded(&app.db, &acme, 230).await;
    let admin = token_for(&app.db, acme.admin).await;
    // Some deals without value, probability or close date (sorted as the lowest / last).
    sql(&app.db, "UPDATE customer_deals SET value_amount = NULL, value_currency = NULL, probability = NULL, expected_close_at = NULL WHERE title LIKE '%7'").await;
    for sort in [
        "createdAt",
        "updatedAt",
        "title",
        "value",
        "probability",
        "expectedCloseAt",
    ] {
        for dir in ["asc", "desc"] {
            let base = format!("{DEALS}?sortField={sort}&sortDir={dir}&pageSize=40");
            let mut by_cursor = Vec::new();
            let mut by_page = Vec::new();
            let mut cursor: Option<String> = None;
            for page in 1..=6 {
                let (_, p) = app.statements(&format!("{base}&page={page}"), &admin).await;
                by_page.extend(ids(&p));
                let url = match &cursor {
                    Some(c) => format!("{base}&cursor={c}"),
                    None => base.clone(),
                };
                let (_, c) = app.statements(&url, &admin).await;
                by_cursor.extend(ids(&c));
                cursor = c["nextCursor"].as_str().map(String::from);
            }
            assert_eq!(by_cursor.len(), 230, "{sort} {dir}");
            assert_eq!(by_cursor, by_page, "{sort} {dir}: cursor and page agree");
            assert!(
                cursor.is_none(),
                "{sort} {dir}: no cursor after the last page"
            );
        }
    }
    // A cursor of another sort, or a damaged one, is 400.
    let (_, first) = app
        .statements(&format!("{DEALS}?sortField=title&pageSize=10"), &admin)
        .await;
    let cursor = first["nextCursor"].as_str().unwrap();
    let res = app
        .send(get(
            &format!("{DEALS}?sortField=value&cursor={cursor}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(
        app.send(get(&format!("{DEALS}?cursor=garbage"), &admin))
            .await
            .status,
        400
    );
    for bad in [
        "pageSize=101",
        "page=0",
        "sortField=nope",
        "ownerUserId=x",
        "valueMin=abc",
        "expectedCloseAtTo=soon",
    ] {
        let res = app.send(get(&format!("{DEALS}?{bad}"), &admin)).await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
    }
}
