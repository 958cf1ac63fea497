//! `GET /devices`: own devices only, sorting, paging, filters, the 200-id limit.

use serde_json::{Value, json};
use uuid::Uuid;

use super::support::*;

fn ids(res: &Value) -> Vec<String> {
    res["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["device_id"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn sorts_pages_and_filters() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let admin = token_for(&app.db, acme.admin).await;
    // Registered a, b, c; last seen c < a < b.
    let mut made = Vec::new();
    for (name, platform, seen) in [
        ("a", "ios", "2026-01-02T00:00:00Z"),
        ("b", "android", "2026-01-03T00:00:00Z"),
        ("c", "ios", "2026-01-01T00:00:00Z"),
    ] {
        let (id, _) = register(
            &app,
            &employee,
            json!({"deviceId": name, "platform": platform}),
        )
        .await;
        let res = app
            .send(put_json(
                &format!("/api/devices/{id}"),
                &employee,
                json!({"lastSeenAt": seen}),
            ))
            .await;
        assert_eq!(res.status, 200);
        made.push(id);
    }
    // Someone else's devices never show in the own list.
    register(
        &app,
        &admin,
        json!({"deviceId": "admin-phone", "platform": "ios"}),
    )
    .await;

    let res = app.send(get("/api/devices", &employee)).await.json();
    assert_eq!(ids(&res), ["b", "a", "c"], "default: lastSeenAt desc");
    assert_eq!(
        (
            &res["total"],
            &res["page"],
            &res["pageSize"],
            &res["totalPages"]
        ),
        (&json!(3), &json!(1), &json!(50), &json!(1))
    );
    let res = app
        .send(get("/api/devices?sortDir=asc", &employee))
        .await
        .json();
    assert_eq!(ids(&res), ["c", "a", "b"]);
    let res = app
        .send(get(
            "/api/devices?sortField=createdAt&sortDir=asc",
            &employee,
        ))
        .await
        .json();
    assert_eq!(ids(&res), ["a", "b", "c"]);
    let res = app
        .send(get("/api/devices?sortField=createdAt", &employee))
        .await
        .json();
    assert_eq!(ids(&res), ["c", "b", "a"]);
    // Touch "a" last: it leads by updatedAt.
    app.send(put_json(
        &format!("/api/devices/{}", made[0]),
        &employee,
        json!({"lastSeenAt": "2026-01-02T00:00:00Z", "osVersion": "1"}),
    ))
    .await;
    let res = app
        .send(get(
            "/api/devices?sortField=updatedAt&sortDir=desc",
            &employee,
        ))
        .await
        .json();
    assert_eq!(ids(&res)[0], "a");

    let res = app
        .send(get("/api/devices?pageSize=2&page=2", &employee))
        .await
        .json();
    assert_eq!(ids(&res), ["c"]);
    assert_eq!(
        (
            &res["total"],
            &res["page"],
            &res["pageSize"],
            &res["totalPages"]
        ),
        (&json!(3), &json!(2), &json!(2), &json!(2))
    );
    let res = app.send(get("/api/devices?page=5", &employee)).await.json();
    assert_eq!((ids(&res).len(), &res["total"]), (0, &json!(3)));

    let res = app
        .send(get("/api/devices?platform=ios", &employee))
        .await
        .json();
    assert_eq!(ids(&res), ["a", "c"]);
    let res = app
        .send(get(
            &format!("/api/devices?ids={},{}", made[1], made[2]),
            &employee,
        ))
        .await
        .json();
    assert_eq!(ids(&res), ["b", "c"]);
    // An empty `ids` does not filter.
    let res = app.send(get("/api/devices?ids=", &employee)).await.json();
    assert_eq!(res["total"], 3);
}

#[actix_web::test]
async fn at_most_200_ids_and_bad_queries_are_400() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let (id, _) = register(&app, &employee, json!({"deviceId": "d", "platform": "web"})).await;
    let mut list: Vec<String> = (0..199).map(|_| Uuid::new_v4().to_string()).collect();
    list.push(id.to_string());
    let res = app
        .send(get(
            &format!("/api/devices?ids={}", list.join(",")),
            &employee,
        ))
        .await;
    assert_eq!(res.status, 200, "200 ids are fine");
    assert_eq!(res.json()["total"], 1);
    list.push(Uuid::new_v4().to_string());
    let res = app
        .send(get(
            &format!("/api/devices?ids={}", list.join(",")),
            &employee,
        ))
        .await;
    assert_eq!(res.status, 400, "201 ids are too many");
    assert_eq!(
        res.json()["error"],
        "Invalid query parameters: ids: at most 200 ids are allowed"
    );
    for query in [
        "ids=abc",
        &format!("ids={id},nope"),
        "pageSize=0",
        "pageSize=101",
        "pageSize=ten",
        "page=0",
        "platform=windows",
        "sortField=name",
        "sortDir=up",
        "userId=someone",
    ] {
        let res = app
            .send(get(&format!("/api/devices?{query}"), &employee))
            .await;
        assert_eq!(res.status, 400, "{query}: {}", res.text());
        assert!(
            res.json()["error"]
                .as_str()
                .unwrap()
                .contains("Invalid query parameters")
        );
    }
    let res = app.send(get("/api/devices?pageSize=100", &employee)).await;
    assert_eq!(res.status, 200);
}

#[actix_web::test]
async fn user_id_cannot_widen_the_own_list() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let admin = token_for(&app.db, acme.admin).await;
    register(&app, &employee, json!({"deviceId": "e", "platform": "ios"})).await;
    register(&app, &admin, json!({"deviceId": "a", "platform": "ios"})).await;

    let res = app
        .send(get(
            &format!("/api/devices?userId={}", acme.admin),
            &employee,
        ))
        .await
        .json();
    assert_eq!((ids(&res).len(), &res["total"]), (0, &json!(0)));
    let res = app
        .send(get(
            &format!("/api/devices?userId={}", acme.employee),
            &employee,
        ))
        .await
        .json();
    assert_eq!(ids(&res), ["e"]);
    // Holders of devices.admin may name another user of their tenant.
    let res = app.send(get("/api/devices", &admin)).await.json();
    assert_eq!(ids(&res), ["a"], "without userId: own devices");
    let res = app
        .send(get(
            &format!("/api/devices?userId={}", acme.employee),
            &admin,
        ))
        .await
        .json();
    assert_eq!(ids(&res), ["e"]);
}

#[actix_web::test]
async fn lists_are_two_round_trips_with_capped_totals_and_cursors() {
    use diesel_async::RunQueryDsl;
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let admin = token_for(&app.db, acme.admin).await;
    {
        // 1,005 devices of the employee, last seen one second apart.
        let mut conn = app.db.conn().await.unwrap();
        diesel::sql_query(
            "INSERT INTO user_devices (tenant_id, organization_id, user_id, device_id, \
             platform, last_seen_at) \
             SELECT $1, $2, $3, 'dev' || lpad(g::text, 4, '0'), 'ios', \
             timestamptz '2026-01-01 00:00:00.123456+00' + g * interval '1 second' \
             FROM generate_series(1, 1005) g",
        )
        .bind::<diesel::sql_types::Uuid, _>(acme.tenant_id)
        .bind::<diesel::sql_types::Uuid, _>(acme.organization_id)
        .bind::<diesel::sql_types::Uuid, _>(acme.employee)
        .execute(&mut *conn)
        .await
        .unwrap();
    }
    // Warm the ACL cache: then a list is the session check and one statement.
    app.send(get("/api/devices?pageSize=1", &employee)).await;
    app.send(get("/api/devices/admin/devices?pageSize=1", &admin))
        .await;
    for (path, token) in [
        ("/api/devices?pageSize=50", &employee),
        ("/api/devices/admin/devices?pageSize=50", &admin),
    ] {
        let (n, body) = app.statements(path, token).await;
        assert_eq!(n, 2, "{path} statements");
        assert_eq!(body["items"].as_array().unwrap().len(), 50);
        assert_eq!(
            (&body["total"], &body["totalCapped"]),
            (&json!(1000), &json!(true)),
            "{path}"
        );
        assert_eq!(body["items"][0]["device_id"], "dev1005", "newest first");
        assert!(body["nextCursor"].is_string());
    }
    // Exact when asked; not counted when declined.
    let (n, body) = app
        .statements("/api/devices?includeTotal=true", &employee)
        .await;
    assert_eq!(
        (n, &body["total"], &body["totalCapped"]),
        (2, &json!(1005), &json!(false))
    );
    assert_eq!(body["totalPages"], 21);
    let (_, body) = app
        .statements("/api/devices?includeTotal=false&page=2", &employee)
        .await;
    assert_eq!(
        (&body["total"], &body["totalCapped"]),
        (&json!(100), &json!(false))
    );
    assert!(
        body["nextCursor"].is_string(),
        "a full uncounted page may have more"
    );

    // Cursor paging walks the same order as page paging, to the end.
    let by_page = |page: u64| format!("/api/devices?sortDir=asc&pageSize=100&page={page}");
    let (_, first) = app.statements(&by_page(1), &employee).await;
    let (_, second) = app.statements(&by_page(2), &employee).await;
    let cursor = first["nextCursor"].as_str().unwrap().to_string();
    let (n, next) = app
        .statements(
            &format!("/api/devices?sortDir=asc&pageSize=100&cursor={cursor}"),
            &employee,
        )
        .await;
    assert_eq!(n, 2, "a cursor page is one statement too");
    assert_eq!(ids(&next), ids(&second));
    assert_eq!((&next["page"], &next["total"]), (&json!(2), &json!(1005)));
    let mut seen = ids(&first).len() + ids(&next).len();
    let mut cursor = next["nextCursor"].as_str().map(String::from);
    while let Some(c) = cursor {
        let (_, page) = app
            .statements(
                &format!("/api/devices?sortDir=asc&pageSize=100&cursor={c}"),
                &employee,
            )
            .await;
        seen += ids(&page).len();
        cursor = page["nextCursor"].as_str().map(String::from);
    }
    assert_eq!(seen, 1005, "every device once, none twice");
    let (_, last) = app
        .statements("/api/devices?sortDir=asc&pageSize=100&page=11", &employee)
        .await;
    assert_eq!(ids(&last).len(), 5);
    assert!(
        last.get("nextCursor").is_none(),
        "no cursor on the last page"
    );
    // Past the end: still the total (a second statement counts it).
    let (n, past) = app.statements("/api/devices?page=99", &employee).await;
    assert_eq!((n, &past["total"], ids(&past).len()), (3, &json!(1005), 0));

    // A cursor of another sort, or damaged, is 400.
    for bad in [
        format!(
            "/api/devices?sortDir=desc&pageSize=100&cursor={cursor_of}",
            cursor_of = first["nextCursor"].as_str().unwrap()
        ),
        "/api/devices?cursor=%25%25".to_string(),
        "/api/devices?cursor=eyJ2IjoxfQ".to_string(),
    ] {
        let res = app.send(get(&bad, &employee)).await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
    }
}
