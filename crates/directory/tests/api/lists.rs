//! Statement counts of the directory lists, and the tenant list's capped
//! totals and cursors.

use serde_json::{Value, json};

use super::support::*;

fn names(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect()
}

async fn access_logs(app_db: &stoa_core::db::Db) -> i64 {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = app_db.conn().await.unwrap();
    diesel::sql_query(
        "SELECT count(*) AS n FROM access_logs WHERE resource_kind = 'directory.tenant'",
    )
    .get_result::<Count>(&mut *conn)
    .await
    .unwrap()
    .n
}

#[actix_web::test]
async fn tenant_list_is_two_round_trips_with_capped_totals_and_cursors() {
    use diesel_async::RunQueryDsl;
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let root = token_for(&app.db, acme.superadmin).await;
    {
        let mut conn = app.db.conn().await.unwrap();
        diesel::sql_query(
            "INSERT INTO tenants (name, created_at) \
             SELECT 'Bulk ' || lpad(g::text, 4, '0'), \
             timestamptz '2026-01-01 00:00:00.250001+00' + g * interval '1 second' \
             FROM generate_series(1, 1005) g",
        )
        .execute(&mut *conn)
        .await
        .unwrap();
    }
    // Warm the ACL cache; then the list is the session check and one
    // statement (page, total and the access-log entries).
    app.send(get("/api/directory/tenants?pageSize=1", &root))
        .await;
    let logs = access_logs(&app.db).await;
    let (n, body) = app
        .statements("/api/directory/tenants?pageSize=50", &root)
        .await;
    assert_eq!(n, 2, "tenant list statements");
    assert_eq!(
        (&body["total"], &body["totalCapped"]),
        (&json!(1000), &json!(true))
    );
    assert_eq!(names(&body)[0], "Acme Corp");
    assert_eq!(access_logs(&app.db).await - logs, 50, "each read is logged");
    let (n, body) = app
        .statements("/api/directory/tenants?includeTotal=true", &root)
        .await;
    assert_eq!(
        (n, &body["total"], &body["totalCapped"]),
        (2, &json!(1007), &json!(false))
    );

    // Cursors follow every order the list offers, exactly as pages do.
    for order in [
        "sortField=name",
        "sortField=name&sortDir=desc",
        "sortField=createdAt&sortDir=desc",
        "sortField=updatedAt",
    ] {
        let base = format!("/api/directory/tenants?{order}&pageSize=100");
        let (_, first) = app.statements(&base, &root).await;
        let (_, second) = app.statements(&format!("{base}&page=2"), &root).await;
        let cursor = first["nextCursor"].as_str().unwrap();
        let (n, next) = app
            .statements(&format!("{base}&cursor={cursor}"), &root)
            .await;
        assert_eq!(n, 2, "{order}");
        assert_eq!(names(&next), names(&second), "{order}");
        assert_eq!(next["page"], 2);
        let mut seen = 200;
        let mut cursor = next["nextCursor"].as_str().map(String::from);
        while let Some(c) = cursor {
            let (_, page) = app.statements(&format!("{base}&cursor={c}"), &root).await;
            seen += names(&page).len();
            cursor = page["nextCursor"].as_str().map(String::from);
        }
        assert_eq!(seen, 1007, "{order}: every tenant once");
    }
    // A cursor of another order, or a damaged one, is 400.
    let (_, first) = app
        .statements("/api/directory/tenants?pageSize=10", &root)
        .await;
    let by_name = first["nextCursor"].as_str().unwrap();
    for bad in [
        format!("/api/directory/tenants?sortField=createdAt&cursor={by_name}"),
        "/api/directory/tenants?cursor=%25%25".to_string(),
    ] {
        let res = app.send(get(&bad, &root)).await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
    }
    // Past the end: the total still comes, from a second statement.
    let (n, past) = app
        .statements("/api/directory/tenants?page=99", &root)
        .await;
    assert_eq!(
        (n, &past["total"], &past["items"]),
        (3, &json!(1007), &json!([]))
    );
}

#[actix_web::test]
async fn organization_views_are_two_round_trips() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let root = token_for(&app.db, acme.superadmin).await;
    app.send(get("/api/directory/organizations", &admin)).await;
    app.send(get("/api/directory/organizations", &root)).await;
    for (path, token, expected) in [
        ("/api/directory/organizations?view=options", &admin, 2),
        ("/api/directory/organizations?view=tree", &admin, 2),
        ("/api/directory/organizations?view=manage", &admin, 2),
        ("/api/directory/organizations?view=manage", &root, 2),
        (
            "/api/directory/organizations?view=manage&tenantId=all",
            &root,
            2,
        ),
    ] {
        let (n, body) = app.statements(path, token).await;
        assert_eq!(n, expected, "{path}");
        assert!(!body["items"].as_array().unwrap().is_empty(), "{path}");
    }
}
