//! Money through Postgres `numeric(18,4)` and through the JSON extractor.

use actix_web::{HttpResponse, web};
use diesel::QueryableByName;
use diesel::sql_types::{Integer, Numeric};
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};
use serde_json::json;
use stoa_core::Json;
use stoa_core::db::Db;
use stoa_core::money::Money;
use stoa_testkit::{TestDb, app};

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Integer)]
    id: i32,
    #[diesel(sql_type = Numeric)]
    amount: Money,
}

#[actix_web::test]
async fn money_round_trips_through_a_numeric_column() {
    let test_db = TestDb::new().await;
    let db = Db::from_url(test_db.url(), 1, std::time::Duration::from_secs(5)).unwrap();
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(
        "CREATE TEMP TABLE prices (id int PRIMARY KEY, amount numeric(18,4) NOT NULL)",
    )
    .execute(&mut *conn)
    .await
    .unwrap();
    let values = [
        "0",
        "19.99",
        "-0.0001",
        "1250.5",
        "99999999999999.9999",
        "-99999999999999.9999",
        "0.1",
    ];
    for (id, value) in values.iter().enumerate() {
        diesel::sql_query("INSERT INTO prices (id, amount) VALUES ($1, $2)")
            .bind::<Integer, _>(i32::try_from(id).unwrap())
            .bind::<Numeric, _>(value.parse::<Money>().unwrap())
            .execute(&mut *conn)
            .await
            .unwrap();
    }
    let rows: Vec<Row> = diesel::sql_query("SELECT id, amount FROM prices ORDER BY id")
        .load(&mut *conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), values.len());
    for row in &rows {
        let expected = values[usize::try_from(row.id).unwrap()];
        assert_eq!(row.amount.to_string(), expected, "row {}", row.id);
    }
    // Postgres agrees on the exact value (no float on the way).
    #[derive(QueryableByName)]
    struct Text {
        #[diesel(sql_type = diesel::sql_types::Text)]
        t: String,
    }
    let sum: Text =
        diesel::sql_query("SELECT sum(amount)::text AS t FROM prices WHERE id IN (1, 6)")
            .get_result(&mut *conn)
            .await
            .unwrap();
    assert_eq!(sum.t, "20.0900");
}

#[derive(Deserialize, Serialize, validator::Validate)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Price {
    amount: Money,
    discount: Option<Money>,
}

async fn echo_price(body: Json<Price>) -> HttpResponse {
    HttpResponse::Ok().json(&*body)
}

fn configure(cfg: &mut stoa_core::http::ServiceConfig) {
    cfg.route("/test/price", web::post().to(echo_price));
}

#[actix_web::test]
async fn money_travels_as_a_string_and_bad_amounts_are_400() {
    let app = app().module(configure).start().await;
    let res = app
        .post_json(
            "/api/test/price",
            &json!({"amount": "1250.50", "discount": 3}),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"amount": "1250.5", "discount": "3"}));

    for (bad, needle) in [
        (json!({"amount": "abc"}), "decimal number"),
        (json!({"amount": "1e3"}), "decimal number"),
        (json!({"amount": "12.34567"}), "4 digits after"),
        (json!({"amount": "123456789012345"}), "14 digits before"),
        (json!({"amount": true}), "decimal amount"),
        (json!({"amount": "1", "discount": "-"}), "decimal number"),
    ] {
        let res = app.post_json("/api/test/price", &bad).await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
        let body = res.json();
        let field = if bad.get("discount").is_some() {
            "discount"
        } else {
            "amount"
        };
        let issue = &body["issues"][0];
        assert_eq!(issue["path"], json!([field]), "{body}");
        assert!(
            issue["message"]
                .as_str()
                .unwrap_or_default()
                .contains(needle),
            "{bad}: {body}"
        );
    }
}
