//! `POST /dashboards/widgets/data` and `/batch` over the wave-1 sources,
//! against values computed by hand from seeded rows.

use serde_json::{Value, json};
use stoa_acl::slots::{AnalyticsField, AnalyticsSource, FieldKind};
use stoa_acl::{Feature, ModuleInfo, Registry};
use stoa_testkit::{AppService, TestApp};
use time::format_description::well_known::Rfc3339;
use time::{Date, Duration, Month, OffsetDateTime, Time};
use uuid::Uuid;

use super::support::*;

const DATA: &str = "/api/dashboards/widgets/data";
const BATCH: &str = "/api/dashboards/widgets/data/batch";

fn month_start(year: i32, month: u8) -> OffsetDateTime {
    let (year, month) = if month == 0 {
        (year - 1, 12)
    } else if month == 13 {
        (year + 1, 1)
    } else {
        (year, month)
    };
    Date::from_calendar_date(year, Month::try_from(month).unwrap(), 1)
        .unwrap()
        .with_time(Time::MIDNIGHT)
        .assume_utc()
}

fn iso(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).unwrap()
}

/// Period keys as the engine writes them.
fn key(t: OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T00:00:00.000Z",
        t.year(),
        t.month() as u8,
        t.day()
    )
}

async fn data<S: AppService>(app: &TestApp<S>, token: &str, body: Value) -> Value {
    let res = app.send(post_json(DATA, token, body.clone())).await;
    assert_eq!(res.status, 200, "{body}: {}", res.text());
    res.json()
}

async fn status<S: AppService>(app: &TestApp<S>, token: &str, body: Value) -> (u16, Value) {
    let res = app.send(post_json(DATA, token, body)).await;
    (res.status.as_u16(), res.json())
}

fn count_users(extra: Value) -> Value {
    let mut body =
        json!({"entityType": "auth:users", "metric": {"field": "id", "aggregate": "count"}});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

struct Seeded {
    acme: Tenant,
    child: Uuid,
    m0: OffsetDateTime,
    m1: OffsetDateTime,
    /// Acme's users created in 2020 that its admin counts (every user but
    /// the five placed, less the super admin: hidden from the admin, as
    /// `GET /auth/users` hides it).
    old: i64,
}

/// Acme: every existing user moved to 2020-01-15; five placed around this
/// month's boundaries (u3 in the child organization, u2 inactive):
/// u1 = this month's start + 1 day, u2 = this month's start (exactly),
/// u3 = one microsecond before it, u4 = last month's start + 2 days,
/// u5 = one microsecond before next month. Globex's users are all new.
async fn seeded<S: AppService>(app: &TestApp<S>) -> Seeded {
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    seed(&app.db, "Globex", "globex.com").await;
    let child = child_org(&app.db, &acme, acme.organization_id, "Child").await;
    let now = OffsetDateTime::now_utc();
    let m0 = month_start(now.year(), now.month() as u8);
    let m1 = month_start(m0.year(), m0.month() as u8 - 1);
    let m2 = month_start(m0.year(), m0.month() as u8 + 1);
    let micro = Duration::microseconds(1);
    exec(
        &app.db,
        &format!(
            "UPDATE users SET created_at = '2020-01-15T10:00:00Z' WHERE tenant_id = '{}'",
            acme.tenant_id
        ),
    )
    .await;
    let root = acme.organization_id;
    let rows = [
        ("u1", m0 + Duration::days(1), root, true),
        ("u2", m0, root, false),
        ("u3", m0 - micro, child, true),
        ("u4", m1 + Duration::days(2), root, true),
        ("u5", m2 - micro, root, true),
    ];
    for (name, at, org, active) in rows {
        exec(
            &app.db,
            &format!(
                "INSERT INTO users (tenant_id, organization_id, email, created_at, is_active) \
             VALUES ('{}', '{org}', '{name}@acme.com', '{}', {active})",
                acme.tenant_id,
                iso(at)
            ),
        )
        .await;
    }
    Seeded {
        acme,
        child,
        m0,
        m1,
        old: 2,
    }
}

#[actix_web::test]
async fn counts_presets_and_comparisons_by_hand() {
    let app = start().await;
    let s = seeded(&app).await;
    let admin = token_for(&app.db, s.acme.admin).await;

    // This month: u1, u2 (at its first microsecond), u5 (its last); before it: u3, u4.
    let body = data(
        &app,
        &admin,
        count_users(json!({
            "dateRange": {"field": "createdAt", "preset": "this_month"},
            "comparison": {"type": "previous_period"},
        })),
    )
    .await;
    assert_eq!(body["value"], 3.0);
    assert_eq!(body["exactValue"], "3");
    assert_eq!(body["data"], json!([]));
    assert_eq!(
        body["comparison"],
        json!({"value": 2.0, "change": 50.0, "direction": "up"})
    );
    assert_eq!(body["metadata"]["recordCount"], 1);
    assert_eq!(body["metadata"]["currency"], Value::Null);
    // previous_year compares with the same previous period (as the reference).
    let year = data(
        &app,
        &admin,
        count_users(json!({
            "dateRange": {"field": "createdAt", "preset": "this_month"},
            "comparison": {"type": "previous_year"},
        })),
    )
    .await;
    assert_eq!(year["comparison"], body["comparison"]);
    let last = data(
        &app,
        &admin,
        count_users(json!({
            "dateRange": {"field": "createdAt", "preset": "last_month"},
        })),
    )
    .await;
    assert_eq!(
        (last["value"].clone(), last.get("comparison").cloned()),
        (json!(2.0), None)
    );
    // A year ago: nothing; compared with nothing: unchanged.
    let body = data(
        &app,
        &admin,
        count_users(json!({
            "dateRange": {"field": "createdAt", "preset": "last_year"},
            "filters": [{"field": "createdAt", "operator": "gt", "value": "2021-01-01T00:00:00Z"}],
            "comparison": {"type": "previous_period"},
        })),
    )
    .await;
    assert_eq!(
        body["comparison"],
        json!({"value": 0.0, "change": 0.0, "direction": "unchanged"})
    );

    // No range: every live user of the tenant (Globex's are not counted).
    let all = data(&app, &admin, count_users(json!({}))).await;
    assert_eq!(all["value"], json!((s.old + 5) as f64));
    // A deleted user is not counted.
    exec(
        &app.db,
        "UPDATE users SET deleted_at = now() WHERE email = 'u1@acme.com'",
    )
    .await;
    let body = data(
        &app,
        &admin,
        count_users(json!({"dateRange": {"field": "createdAt", "preset": "this_month"}})),
    )
    .await;
    assert_eq!(body["value"], 2.0);
}

#[actix_web::test]
async fn date_groups_come_back_in_date_order_and_the_limit_keeps_the_latest() {
    let app = start().await;
    let s = seeded(&app).await;
    let admin = token_for(&app.db, s.acme.admin).await;
    let body = data(
        &app,
        &admin,
        count_users(json!({"groupBy": {"field": "createdAt", "granularity": "month"}})),
    )
    .await;
    let expected_old = json!({"groupKey": "2020-01-01T00:00:00.000Z", "value": s.old as f64, "exactValue": s.old.to_string()});
    assert_eq!(
        body["data"],
        json!([
            expected_old,
            {"groupKey": key(s.m1), "value": 2.0, "exactValue": "2"},
            {"groupKey": key(s.m0), "value": 3.0, "exactValue": "3"},
        ])
    );
    assert_eq!(body["metadata"]["recordCount"], 3);
    assert_eq!(body["value"], json!((s.old + 5) as f64));
    let body = data(
        &app,
        &admin,
        count_users(json!({"groupBy": {"field": "createdAt", "granularity": "month", "limit": 2}})),
    )
    .await;
    let keys: Vec<_> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["groupKey"].clone())
        .collect();
    assert_eq!(keys, [json!(key(s.m1)), json!(key(s.m0))]);
    // By day inside this month: u2 at 00:00 of the 1st, u1 on the 2nd, u5 on the last day.
    let body = data(
        &app,
        &admin,
        count_users(json!({
            "groupBy": {"field": "createdAt", "granularity": "day"},
            "dateRange": {"field": "createdAt", "preset": "this_month"},
        })),
    )
    .await;
    let keys: Vec<_> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["groupKey"].as_str().unwrap().to_string())
        .collect();
    let last_day = month_start(s.m0.year(), s.m0.month() as u8 + 1) - Duration::days(1);
    assert_eq!(
        keys,
        [key(s.m0), key(s.m0 + Duration::days(1)), key(last_day)]
    );
    // By year.
    let body = data(
        &app,
        &admin,
        count_users(json!({"groupBy": {"field": "createdAt", "granularity": "year"}})),
    )
    .await;
    assert_eq!(body["data"][0]["groupKey"], "2020-01-01T00:00:00.000Z");
    assert_eq!(body["data"][0]["value"], json!(s.old as f64));
    let this_year: f64 = body["data"].as_array().unwrap()[1..]
        .iter()
        .map(|p| p["value"].as_f64().unwrap())
        .sum();
    assert_eq!(this_year, 5.0);
    // By quarter and week: every user is in exactly one period.
    for granularity in ["quarter", "week"] {
        let body = data(
            &app,
            &admin,
            count_users(json!({"groupBy": {"field": "createdAt", "granularity": granularity}})),
        )
        .await;
        let total: f64 = body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["value"].as_f64().unwrap())
            .sum();
        assert_eq!(total, (s.old + 5) as f64, "{granularity}");
        let keys: Vec<String> = body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["groupKey"].as_str().unwrap().to_string())
            .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted, "{granularity} in date order");
    }
}

#[actix_web::test]
async fn value_groups_filters_and_labels() {
    let app = start().await;
    let s = seeded(&app).await;
    let admin = token_for(&app.db, s.acme.admin).await;
    let total = (s.old + 5) as f64;
    let body = data(
        &app,
        &admin,
        count_users(json!({"groupBy": {"field": "isActive", "resolveLabels": true}})),
    )
    .await;
    assert_eq!(
        body["data"],
        json!([
            {"groupKey": "true", "groupLabel": "true", "value": total - 1.0, "exactValue": (s.old + 4).to_string()},
            {"groupKey": "false", "groupLabel": "false", "value": 1.0, "exactValue": "1"},
        ])
    );
    let cases = [
        (
            json!({"field": "isActive", "operator": "eq", "value": false}),
            1.0,
        ),
        (
            json!({"field": "isActive", "operator": "neq", "value": "false"}),
            total - 1.0,
        ),
        (
            json!({"field": "organizationId", "operator": "in", "value": [s.child]}),
            1.0,
        ),
        (
            json!({"field": "organizationId", "operator": "in", "value": s.child}),
            1.0,
        ),
        (
            json!({"field": "organizationId", "operator": "not_in", "value": [s.child]}),
            total - 1.0,
        ),
        (
            json!({"field": "organizationId", "operator": "in", "value": []}),
            0.0,
        ),
        (
            json!({"field": "organizationId", "operator": "not_in", "value": []}),
            total,
        ),
        (
            json!({"field": "lastLoginAt", "operator": "is_null"}),
            total,
        ),
        (
            json!({"field": "lastLoginAt", "operator": "is_not_null"}),
            0.0,
        ),
        (
            json!({"field": "lastLoginAt", "operator": "eq", "value": null}),
            total,
        ),
        (
            json!({"field": "createdAt", "operator": "gt", "value": iso(s.m0)}),
            2.0,
        ),
        (
            json!({"field": "createdAt", "operator": "gte", "value": iso(s.m0)}),
            3.0,
        ),
        (
            json!({"field": "createdAt", "operator": "lt", "value": iso(s.m0)}),
            total - 3.0,
        ),
        (
            json!({"field": "createdAt", "operator": "lte", "value": iso(s.m0)}),
            total - 2.0,
        ),
        (
            json!({"field": "createdAt", "operator": "gt", "value": null}),
            0.0,
        ),
    ];
    for (filter, expected) in cases {
        let body = data(
            &app,
            &admin,
            count_users(json!({"filters": [filter.clone()]})),
        )
        .await;
        assert_eq!(body["value"], json!(expected), "{filter}");
    }
    // A value the field cannot hold is a 400, not a database error.
    for filter in [
        json!({"field": "createdAt", "operator": "gt", "value": "yesterday"}),
        json!({"field": "createdAt", "operator": "gt", "value": 5}),
    ] {
        let (code, body) = status(&app, &admin, count_users(json!({"filters": [filter]}))).await;
        assert_eq!(code, 400, "{body}");
    }
}

#[actix_web::test]
async fn aggregates_over_numbers_and_the_organization_scope() {
    let app = start().await;
    let s = seeded(&app).await;
    let grandchild = child_org(&app.db, &s.acme, s.child, "Grandchild").await;
    let _ = grandchild;
    let admin = token_for(&app.db, s.acme.admin).await;
    let depth = |aggregate: &str| json!({"entityType": "directory:organizations", "metric": {"field": "depth", "aggregate": aggregate}});
    // Depths 0 (root), 1 (child), 2 (grandchild).
    for (aggregate, expected, exact) in [
        ("count", 3.0, "3"),
        ("sum", 3.0, "3"),
        ("min", 0.0, "0"),
        ("max", 2.0, "2"),
    ] {
        let body = data(&app, &admin, depth(aggregate)).await;
        assert_eq!(
            (body["value"].clone(), body["exactValue"].clone()),
            (json!(expected), json!(exact)),
            "{aggregate}"
        );
    }
    let body = data(&app, &admin, depth("avg")).await;
    assert_eq!(body["value"], 1.0);

    // A caller limited to the child's subtree sees depths 1 and 2 only.
    let limited = user_with_features(
        &app.db,
        &s.acme,
        "limited@acme.com",
        &[
            "analytics.view",
            "directory.organizations.view",
            "auth.users.list",
        ],
        Some(vec![s.child]),
        Some(s.child),
    )
    .await;
    exec(
        &app.db,
        "UPDATE users SET created_at = '2020-01-15T10:00:00Z' WHERE email = 'limited@acme.com'",
    )
    .await;
    let limited = token_for(&app.db, limited).await;
    for (aggregate, expected) in [
        ("count", 2.0),
        ("sum", 3.0),
        ("avg", 1.5),
        ("min", 1.0),
        ("max", 2.0),
    ] {
        let body = data(&app, &limited, depth(aggregate)).await;
        assert_eq!(body["value"], json!(expected), "{aggregate}");
    }
    // Its users: u3 and itself.
    let body = data(&app, &limited, count_users(json!({}))).await;
    assert_eq!(body["value"], 2.0);
    let body = data(&app, &limited, count_users(json!({"dateRange": {"field": "createdAt", "preset": "this_month"}, "comparison": {"type": "previous_period"}}))).await;
    assert_eq!(body["value"], 0.0);
    assert_eq!(
        body["comparison"],
        json!({"value": 1.0, "change": -100.0, "direction": "down"})
    );
    // Nothing matches: min and max are null, sum and avg 0.
    let none = json!([{"field": "depth", "operator": "gt", "value": 10}]);
    for (aggregate, expected) in [
        ("min", Value::Null),
        ("max", Value::Null),
        ("sum", json!(0.0)),
        ("avg", json!(0.0)),
    ] {
        let mut body = depth(aggregate);
        body["filters"] = none.clone();
        assert_eq!(
            data(&app, &admin, body).await["value"],
            expected,
            "{aggregate}"
        );
    }
}

#[actix_web::test]
async fn names_outside_the_registry_are_refused_and_nothing_is_interpolated() {
    let app = start().await;
    let s = seeded(&app).await;
    let admin = token_for(&app.db, s.acme.admin).await;
    let attempts = [
        (
            json!({"entityType": "auth:users; DROP TABLE dashboard_layouts; --", "metric": {"field": "id", "aggregate": "count"}}),
            "Invalid entity type",
        ),
        (
            json!({"entityType": "users u", "metric": {"field": "id", "aggregate": "count"}}),
            "Invalid entity type",
        ),
        (
            count_users(
                json!({"metric": {"field": "id) FROM users; DROP TABLE dashboard_layouts; --", "aggregate": "count"}}),
            ),
            "Invalid metric field",
        ),
        (
            count_users(json!({"metric": {"field": "stoa_u.email", "aggregate": "count"}})),
            "Invalid metric field",
        ),
        (
            count_users(json!({"groupBy": {"field": "createdAt\"; DROP TABLE users; --"}})),
            "Invalid groupBy field",
        ),
        (
            count_users(json!({"groupBy": {"field": "email"}})),
            "Invalid groupBy field",
        ),
        (
            count_users(json!({"filters": [{"field": "1=1 OR id", "operator": "eq", "value": 1}]})),
            "Invalid filter field",
        ),
        (
            count_users(json!({"dateRange": {"field": "now()", "preset": "today"}})),
            "Invalid dateRange field",
        ),
        (
            count_users(json!({"dateRange": {"field": "isActive", "preset": "today"}})),
            "Invalid dateRange field",
        ),
        (
            count_users(json!({"metric": {"field": "isActive", "aggregate": "sum"}})),
            "Invalid metric field",
        ),
    ];
    for (body, message) in attempts {
        let (code, answer) = status(&app, &admin, body.clone()).await;
        assert_eq!(code, 400, "{body}");
        assert!(
            answer["error"].as_str().unwrap().starts_with(message),
            "{body}: {answer}"
        );
    }
    // A value is bound, never read as SQL.
    let body = count_users(
        json!({"filters": [{"field": "isActive", "operator": "eq", "value": "true' OR '1'='1"}]}),
    );
    assert_eq!(data(&app, &admin, body).await["value"], 0.0);
    // Everything is still there.
    assert_eq!(
        data(&app, &admin, count_users(json!({}))).await["value"],
        json!((s.old + 5) as f64)
    );
    layout(&app, &admin).await;
}

#[actix_web::test]
async fn schema_problems_features_and_tenants() {
    let app = start().await;
    let s = seeded(&app).await;
    let admin = token_for(&app.db, s.acme.admin).await;
    let in_201: Vec<i32> = (0..201).collect();
    for body in [
        json!({"metric": {"field": "id", "aggregate": "count"}}),
        count_users(json!({"metric": {"field": "id", "aggregate": "median"}})),
        count_users(json!({"dateRange": {"field": "createdAt", "preset": "next_decade"}})),
        count_users(json!({"groupBy": {"field": "createdAt", "granularity": "hour"}})),
        count_users(json!({"groupBy": {"field": "createdAt", "limit": 0}})),
        count_users(json!({"groupBy": {"field": "createdAt", "limit": 101}})),
        count_users(json!({"filters": [{"field": "id", "operator": "in", "value": in_201}]})),
        count_users(json!({"filters": [{"field": "id", "operator": "in", "value": [null]}]})),
        count_users(json!({"filters": [{"field": "id", "operator": "like", "value": "a"}]})),
        count_users(json!({"comparison": {"type": "next_period"}})),
    ] {
        let (code, answer) = status(&app, &admin, body.clone()).await;
        assert_eq!(code, 400, "{body}: {answer}");
    }
    // The entity's own features: the employee may read analytics, not users.
    let employee = token_for(&app.db, s.acme.employee).await;
    let (code, answer) = status(&app, &employee, count_users(json!({}))).await;
    assert_eq!((code, answer["error"].clone()), (403, json!("Forbidden")));
    let viewer = user_with_features(
        &app.db,
        &s.acme,
        "v@acme.com",
        &["auth.users.list"],
        None,
        None,
    )
    .await;
    let viewer = token_for(&app.db, viewer).await;
    assert_eq!(status(&app, &viewer, count_users(json!({}))).await.0, 403);
    let batch = json!({"requests": [{"id": "a", "request": count_users(json!({}))}]});
    assert_eq!(app.send(post_json(BATCH, &viewer, batch)).await.status, 403);
}

#[actix_web::test]
async fn batches_answer_each_entry_alone_in_order() {
    let app = start().await;
    let s = seeded(&app).await;
    let mixed = user_with_features(
        &app.db,
        &s.acme,
        "m@acme.com",
        &["analytics.view", "directory.organizations.view"],
        None,
        None,
    )
    .await;
    let mixed = token_for(&app.db, mixed).await;
    let orgs = json!({"entityType": "directory:organizations", "metric": {"field": "id", "aggregate": "count"}});
    let body = json!({"requests": [
        {"id": "orgs", "request": orgs},
        {"id": "users", "request": count_users(json!({}))},
        {"id": "bad", "request": {"entityType": "nope", "metric": {"field": "id", "aggregate": "count"}}},
    ]});
    let res = app.send(post_json(BATCH, &mixed, body)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let results = res.json()["results"].clone();
    assert_eq!(results[0]["id"], "orgs");
    assert_eq!(
        (
            results[0]["ok"].clone(),
            results[0]["data"]["value"].clone()
        ),
        (json!(true), json!(2.0))
    );
    assert_eq!(
        results[1],
        json!({"id": "users", "ok": false, "error": "Forbidden"})
    );
    assert_eq!(
        results[2],
        json!({"id": "bad", "ok": false, "error": "Invalid entity type: nope"})
    );

    // Any schema problem fails the whole batch; 1 to 50 entries.
    let bad = json!({"requests": [{"id": "a", "request": orgs}, {"id": "b", "request": {"entityType": "x"}}]});
    let res = app.send(post_json(BATCH, &mixed, bad)).await;
    assert_eq!(res.status, 400);
    assert!(res.text().contains("requests"), "{}", res.text());
    assert_eq!(
        app.send(post_json(BATCH, &mixed, json!({"requests": []})))
            .await
            .status,
        400
    );
    let many: Vec<Value> = (0..51)
        .map(|n| json!({"id": n.to_string(), "request": orgs}))
        .collect();
    assert_eq!(
        app.send(post_json(BATCH, &mixed, json!({"requests": many})))
            .await
            .status,
        400
    );
    let res = app
        .send(post_json(
            BATCH,
            &mixed,
            json!({"requests": [{"id": "", "request": orgs}]}),
        ))
        .await;
    assert_eq!(res.status, 400);
}

#[actix_web::test]
async fn one_statement_per_request_and_per_batch_entry() {
    let app = start().await;
    let s = seeded(&app).await;
    let admin = token_for(&app.db, s.acme.admin).await;
    let body = count_users(json!({
        "dateRange": {"field": "createdAt", "preset": "this_month"},
        "comparison": {"type": "previous_period"},
        "groupBy": {"field": "createdAt", "granularity": "day"},
        "filters": [{"field": "isActive", "operator": "in", "value": [true, false]}],
    }));
    data(&app, &admin, body.clone()).await;
    for _ in 0..2 {
        let before = stoa_core::db::thread_queries();
        data(&app, &admin, body.clone()).await;
        assert_eq!(
            stoa_core::db::thread_queries() - before,
            2,
            "the session check and one statement"
        );
    }
    let batch = json!({"requests": [
        {"id": "a", "request": body},
        {"id": "b", "request": count_users(json!({}))},
        {"id": "c", "request": {"entityType": "audit_logs:action_logs", "metric": {"field": "id", "aggregate": "count"}}},
    ]});
    let before = stoa_core::db::thread_queries();
    let res = app.send(post_json(BATCH, &admin, batch)).await;
    assert_eq!(res.status, 200);
    assert_eq!(
        stoa_core::db::thread_queries() - before,
        4,
        "the session check and one per entry"
    );
}

/// A registry with a money source over every tenant: three amounts whose
/// exact sum a double cannot hold.
fn with_ledger() -> Registry {
    let mut registry = registry();
    registry
        .register(
            ModuleInfo {
                id: "ledger",
                title: "Ledger",
            },
            &[Feature {
                id: "ledger.view",
                title: "View",
                module: "ledger",
            }],
        )
        .unwrap();
    registry
        .add_analytics_source(AnalyticsSource {
            entity_type: "ledger:entries",
            module: "ledger",
            relation: "(SELECT t.id AS tenant_id, v.amount, v.at FROM tenants t CROSS JOIN \
                       (VALUES (12345678901234.5678::numeric(18,4), TIMESTAMPTZ '2026-01-31 23:30:00+00'), \
                               (0.0001::numeric(18,4), TIMESTAMPTZ '2026-02-01 00:30:00+01'), \
                               (0.0001::numeric(18,4), TIMESTAMPTZ '2026-02-01 00:00:00+00')) v(amount, at)) stoa_l",
            tenant_column: "stoa_l.tenant_id",
            organization_column: None,
            date_field: "at",
            fields: &[
                AnalyticsField { name: "amount", sql: "stoa_l.amount", kind: FieldKind::Money },
                AnalyticsField { name: "at", sql: "stoa_l.at", kind: FieldKind::Date },
            ],
            features: &["ledger.view"],
            read_model: None,
        })
        .unwrap();
    registry
}

#[actix_web::test]
async fn money_sums_are_exact_and_months_are_cut_in_utc() {
    let app = start_with(with_ledger).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let user = user_with_features(
        &app.db,
        &acme,
        "l@acme.com",
        &["analytics.view", "ledger.view"],
        None,
        None,
    )
    .await;
    let token = token_for(&app.db, user).await;
    let body = data(
        &app,
        &token,
        json!({"entityType": "ledger:entries", "metric": {"field": "amount", "aggregate": "sum"}}),
    )
    .await;
    assert_eq!(body["exactValue"], "12345678901234.5680");
    assert_eq!(body["value"], json!(12345678901234.568));
    // 00:30 on Feb 1st at +01:00 is still January in UTC.
    let body = data(
        &app,
        &token,
        json!({"entityType": "ledger:entries", "metric": {"field": "amount", "aggregate": "sum"},
        "groupBy": {"field": "at", "granularity": "month"}}),
    )
    .await;
    assert_eq!(
        body["data"],
        json!([
            {"groupKey": "2026-01-01T00:00:00.000Z", "value": 12345678901234.568, "exactValue": "12345678901234.5679"},
            {"groupKey": "2026-02-01T00:00:00.000Z", "value": 0.0001, "exactValue": "0.0001"},
        ])
    );
    let body = data(
        &app,
        &token,
        json!({"entityType": "ledger:entries", "metric": {"field": "amount", "aggregate": "avg"},
        "filters": [{"field": "amount", "operator": "lt", "value": "1"}]}),
    )
    .await;
    assert_eq!(
        body["exactValue"].as_str().unwrap().parse::<f64>().unwrap(),
        0.0001
    );
    let (code, _) = status(
        &app,
        &token,
        json!({"entityType": "ledger:entries", "metric": {"field": "amount", "aggregate": "sum"},
        "filters": [{"field": "amount", "operator": "gt", "value": "1; DROP TABLE users"}]}),
    )
    .await;
    assert_eq!(code, 400);
    let _ = Uuid::nil();
}
