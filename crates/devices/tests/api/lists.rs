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
