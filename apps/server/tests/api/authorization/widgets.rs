//! Dashboards over a module's data, across crates: deals declared by
//! stoa-customers through the analytics slot are aggregated by
//! stoa-dashboards' engine, exactly and only within the caller's tenant.

use serde_json::{Value, json};
use stoa_auth::AuthConfig;
use stoa_auth::testing::token_for;
use stoa_testkit::requests::post_json;

use super::seed::{Seeded, seed};

const DATA: &str = "/api/dashboards/widgets/data";

#[actix_web::test]
async fn deal_widgets_sum_money_exactly_within_the_tenant() {
    let app = stoa_testkit::app()
        .server_with(|db| {
            let modules = stoa_server::modules(
                &stoa_server::test_services(db).unwrap(),
                AuthConfig::for_tests(),
            )
            .unwrap();
            (modules.configurators, Some(modules.access))
        })
        .start()
        .await;
    let Seeded {
        records,
        a_token,
        b_admin,
        ..
    } = seed(&app).await;
    // The seed's deal has no value; three more with values in two currencies.
    for (title, amount, currency) in [
        ("One", "100.10", "USD"),
        ("Two", "200.25", "USD"),
        ("Three", "50", "EUR"),
    ] {
        let res = app
            .send(post_json(
                "/api/customers/deals",
                &a_token,
                json!({"title": title, "pipelineStageId": records.stage,
                       "valueAmount": amount, "valueCurrency": currency}),
            ))
            .await;
        assert_eq!(res.status, 201, "{}", res.text());
    }
    let ask = |token: &str, body: Value| {
        let req = post_json(DATA, token, body);
        let app = &app;
        async move {
            let res = app.send(req).await;
            assert_eq!(res.status, 200, "{}", res.text());
            res.json()
        }
    };

    let count =
        json!({"entityType": "customers:deals", "metric": {"field": "id", "aggregate": "count"}});
    assert_eq!(ask(&a_token, count.clone()).await["value"], 4.0);

    // 100.10 + 200.25 in binary floating point is not 300.35; the sum stays
    // exact in numeric and comes back as `exactValue`.
    let usd = ask(
        &a_token,
        json!({"entityType": "customers:deals",
               "metric": {"field": "valueAmount", "aggregate": "sum"},
               "filters": [{"field": "valueCurrency", "operator": "eq", "value": "USD"}]}),
    )
    .await;
    let exact = usd["exactValue"].as_str().unwrap();
    assert_eq!(exact.trim_end_matches('0'), "300.35", "{usd}");

    let by_currency = ask(
        &a_token,
        json!({"entityType": "customers:deals",
               "metric": {"field": "id", "aggregate": "count"},
               "groupBy": {"field": "valueCurrency"}}),
    )
    .await;
    let mut groups: Vec<(String, f64)> = by_currency["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["groupKey"].as_str().unwrap_or("(none)").to_string(),
                g["value"].as_f64().unwrap(),
            )
        })
        .collect();
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        groups,
        [
            ("(none)".to_string(), 1.0),
            ("EUR".to_string(), 1.0),
            ("USD".to_string(), 2.0)
        ],
        "{by_currency}"
    );

    // A repeated request is answered from the kept answer (one small
    // statement beside the session check), and never stale: a deal written
    // through the API moves the tenant's version, so the next answer counts it.
    let by_month = json!({"entityType": "customers:deals",
                          "metric": {"field": "id", "aggregate": "count"},
                          "groupBy": {"field": "createdAt", "granularity": "month"}});
    let total = |v: &Value| -> f64 {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["value"].as_f64().unwrap())
            .sum()
    };
    assert_eq!(total(&ask(&a_token, by_month.clone()).await), 4.0);
    let before = stoa_core::db::thread_queries();
    let kept = ask(&a_token, by_month.clone()).await;
    let statements = stoa_core::db::thread_queries() - before;
    assert_eq!(total(&kept), 4.0);
    assert!(statements <= 2, "{statements} statements for a kept answer");
    let res = app
        .send(post_json(
            "/api/customers/deals",
            &a_token,
            json!({"title": "Five", "pipelineStageId": records.stage}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(total(&ask(&a_token, by_month.clone()).await), 5.0);
    assert_eq!(ask(&a_token, count.clone()).await["value"], 5.0);

    // Tenant B's administrator holds every feature and sees none of it, even
    // for the request tenant A's answer is kept for.
    let b = token_for(&app.db, b_admin).await;
    assert_eq!(ask(&b, count).await["value"], 0.0);
    assert_eq!(total(&ask(&b, by_month).await), 0.0);
}

#[actix_web::test]
async fn a_repeated_layout_read_is_kept_until_what_it_shows_changes() {
    use diesel_async::SimpleAsyncConnection;
    use stoa_testkit::requests::put_json;
    let app = stoa_testkit::app()
        .server_with(|db| {
            let modules = stoa_server::modules(
                &stoa_server::test_services(db).unwrap(),
                AuthConfig::for_tests(),
            )
            .unwrap();
            (modules.configurators, Some(modules.access))
        })
        .reads_with(stoa_auth::testing::reads)
        .start()
        .await;
    let Seeded { a, a_token, .. } = seed(&app).await;
    const LAYOUT: &str = "/api/dashboards/layout";
    // A read (storing the default layout if the caller had none) and one
    // more keep the answer; then a repeat is the session check alone.
    app.statements(LAYOUT, &a_token).await;
    let (_, first) = app.statements(LAYOUT, &a_token).await;
    for _ in 0..3 {
        let (n, again) = app.statements(LAYOUT, &a_token).await;
        assert_eq!((n, &again), (1, &first), "a kept answer");
    }
    let allowed: Vec<String> = first["allowedWidgetIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert!(allowed.len() >= 2, "{first}");

    // Saving the layout: the next read shows it.
    let item = uuid::Uuid::new_v4();
    let res = app
        .send(put_json(
            LAYOUT,
            &a_token,
            json!({"items": [{"id": item, "widgetId": allowed[1], "order": 0}]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (_, body) = app.statements(LAYOUT, &a_token).await;
    assert_eq!(body["layout"]["items"][0]["id"], json!(item));
    // (That read renumbered the saved items, a write of its own; the next
    // one keeps the answer again.)
    app.statements(LAYOUT, &a_token).await;
    assert_eq!(app.statements(LAYOUT, &a_token).await.0, 1);

    // The caller's own widget list (another dashboards table).
    let res = app
        .send(put_json(
            "/api/dashboards/users/widgets",
            &a_token,
            json!({"userId": a.superadmin, "mode": "override", "widgetIds": [allowed[0]]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (_, body) = app.statements(LAYOUT, &a_token).await;
    assert_eq!(body["allowedWidgetIds"], json!([allowed[0]]));

    // The caller's name, which the context shows (the users' read version).
    let mut conn = app.db.conn().await.unwrap();
    conn.batch_execute(&format!(
        "UPDATE users SET name = 'Ada Admin' WHERE id = '{}'",
        a.superadmin
    ))
    .await
    .unwrap();
    drop(conn);
    let (_, body) = app.statements(LAYOUT, &a_token).await;
    assert_eq!(body["context"]["userName"], "Ada Admin");
}
