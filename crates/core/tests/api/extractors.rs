//! Bad input of every kind answers a JSON 4xx that names the field.

use actix_web::test::TestRequest;
use serde_json::{Value, json};
use stoa_testkit::app;

use super::fixtures;

fn assert_json_error(res: &stoa_testkit::TestResponse, status: u16, needle: &str) -> Value {
    assert_eq!(res.status.as_u16(), status, "body: {}", res.text());
    assert!(
        res.header("content-type")
            .unwrap_or("")
            .starts_with("application/json"),
        "content-type: {:?}",
        res.header("content-type")
    );
    let body = res.json();
    let message = body["error"].as_str().unwrap_or_default();
    // Body errors say `Invalid input` and name the field in `issues` and
    // `details.fieldErrors`; query and path errors name it in the message too.
    let issues = body["issues"].as_array().cloned().unwrap_or_default();
    let named = issues.iter().any(|issue| {
        let path: Vec<String> = issue["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().map_or_else(|| p.to_string(), String::from))
            .collect();
        path.join(".").contains(needle)
            || issue["message"]
                .as_str()
                .unwrap_or_default()
                .contains(needle)
    });
    assert!(
        message.contains(needle) || named,
        "`{body}` should mention `{needle}`"
    );
    for issue in &issues {
        let errors = match issue["path"].get(0) {
            None => body["details"]["formErrors"].clone(),
            Some(Value::String(field)) => body["details"]["fieldErrors"][field].clone(),
            Some(index) => body["details"]["fieldErrors"][index.to_string()].clone(),
        };
        assert!(
            errors
                .as_array()
                .is_some_and(|list| list.contains(&issue["message"])),
            "details should list {issue}: {body}"
        );
    }
    body
}

#[actix_web::test]
async fn valid_json_is_accepted() {
    let app = app().module(fixtures::configure).start().await;
    let res = app
        .post_json(
            "/api/test/echo",
            &json!({"name": "a", "count": 2, "kind": "ios", "items": [{"qty": 1}]}),
        )
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!({"name": "a", "count": 2, "kind": "ios"}));
}

#[actix_web::test]
async fn malformed_json_is_400() {
    let app = app().module(fixtures::configure).start().await;
    let req = TestRequest::post()
        .uri("/api/test/echo")
        .insert_header(("content-type", "application/json"))
        .set_payload("{\"name\": ");
    assert_json_error(&app.send(req).await, 400, "Invalid JSON body");
    let req = TestRequest::post()
        .uri("/api/test/echo")
        .insert_header(("content-type", "application/json"))
        .set_payload("{\"name\":\"a\",\"count\":1,\"kind\":\"ios\"} trailing");
    assert_json_error(&app.send(req).await, 400, "Invalid JSON body");
    let req = TestRequest::post().uri("/api/test/echo").set_payload("");
    assert_json_error(&app.send(req).await, 400, "empty");
}

#[actix_web::test]
async fn wrong_types_name_the_field() {
    let app = app().module(fixtures::configure).start().await;
    let res = app
        .post_json(
            "/api/test/echo",
            &json!({"name": "a", "count": "seven", "kind": "ios"}),
        )
        .await;
    let body = assert_json_error(&res, 400, "count");
    assert_eq!(body["issues"][0]["path"], json!(["count"]));

    let res = app
        .post_json(
            "/api/test/echo",
            &json!({"name": "a", "count": -1, "kind": "ios"}),
        )
        .await;
    assert_json_error(&res, 400, "count");

    let res = app
        .post_json(
            "/api/test/echo",
            &json!({"name": "a", "count": 1, "kind": "ios", "items": [{"qty": "x"}]}),
        )
        .await;
    let body = assert_json_error(&res, 400, "items.0.qty");
    assert_eq!(body["issues"][0]["path"], json!(["items", 0, "qty"]));

    let res = app.post_json("/api/test/echo", &json!([1, 2])).await;
    assert_json_error(&res, 400, "Invalid input");
}

#[actix_web::test]
async fn unknown_enum_values_missing_and_unknown_fields_are_400() {
    let app = app().module(fixtures::configure).start().await;
    let res = app
        .post_json(
            "/api/test/echo",
            &json!({"name": "a", "count": 1, "kind": "windows-phone"}),
        )
        .await;
    let body = assert_json_error(&res, 400, "kind");
    assert_eq!(body["issues"][0]["code"], "invalid_enum_value");

    let res = app
        .post_json("/api/test/echo", &json!({"count": 1, "kind": "ios"}))
        .await;
    assert_json_error(&res, 400, "name");

    let res = app
        .post_json(
            "/api/test/echo",
            &json!({"name": "a", "count": 1, "kind": "ios", "admin": true}),
        )
        .await;
    assert_json_error(&res, 400, "admin");
}

#[actix_web::test]
async fn validation_rules_report_every_issue_with_its_path() {
    let app = app().module(fixtures::configure).start().await;
    let res = app
        .post_json(
            "/api/test/echo",
            &json!({"name": "far-too-long-name", "count": 1, "kind": "android", "items": [{"qty": 1}, {"qty": 9}]}),
        )
        .await;
    let body = assert_json_error(&res, 400, "Invalid input");
    assert_eq!(body["error"], "Invalid input");
    assert_eq!(
        body["details"]["fieldErrors"]["name"],
        json!(["length must be between 1 and 10"])
    );
    assert_eq!(
        body["details"]["fieldErrors"]["items"],
        json!(["must be between 1 and 5"])
    );
    assert_eq!(body["details"]["formErrors"], json!([]));
    let paths: Vec<Value> = body["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].clone())
        .collect();
    assert!(paths.contains(&json!(["name"])), "{paths:?}");
    assert!(paths.contains(&json!(["items", 1, "qty"])), "{paths:?}");
}

#[actix_web::test]
async fn huge_bodies_are_413_whether_declared_or_streamed() {
    let app = app()
        .module(fixtures::configure)
        .http(|h| h.body_limit = 1024)
        .start()
        .await;
    let big = format!("{{\"name\":\"{}\"}}", "x".repeat(4096));
    let req = TestRequest::post()
        .uri("/api/test/echo")
        .insert_header(("content-type", "application/json"))
        .set_payload(big.clone());
    assert_json_error(&app.send(req).await, 413, "limit");

    // A lying (small) Content-Length does not get past the streamed check.
    let req = TestRequest::post()
        .uri("/api/test/echo")
        .insert_header(("content-type", "application/json"))
        .insert_header(("content-length", "10"))
        .set_payload(big);
    let res = app.send(req).await;
    assert!(res.status == 413 || res.status == 400, "{}", res.status);
}

/// Collection-style bodies and raw bodies follow `STOA_BODY_LIMIT` like the
/// JSON extractors (they had actix's 256 KiB default).
#[actix_web::test]
async fn collection_and_raw_bodies_follow_the_body_limit() {
    let id = uuid::Uuid::new_v4();
    let body = |pad: usize| format!("{{\"id\":\"{id}\",\"note\":\"{}\"}}", "x".repeat(pad));
    let send = |method: actix_web::http::Method, uri: &str, payload: String| {
        TestRequest::default()
            .method(method)
            .uri(uri)
            .insert_header(("content-type", "application/json"))
            .set_payload(payload)
    };
    use actix_web::http::Method;
    // 300 KiB: past actix's default, inside stoa's 1 MiB.
    let open = app().module(fixtures::configure).start().await;
    for (method, uri) in [
        (Method::DELETE, "/api/test/collection"),
        (Method::PUT, "/api/test/collection"),
        (Method::POST, "/api/test/raw"),
    ] {
        let res = open.send(send(method.clone(), uri, body(300 * 1024))).await;
        assert_eq!(res.status, 200, "{method} {uri}: {}", res.text());
    }
    let res = open
        .send(send(Method::DELETE, "/api/test/collection", body(10)))
        .await;
    assert_eq!(res.json()["id"], id.to_string());
    // Past a configured limit: 413 with a JSON error.
    let small = app()
        .module(fixtures::configure)
        .http(|h| h.body_limit = 1024)
        .start()
        .await;
    for (method, uri) in [
        (Method::DELETE, "/api/test/collection"),
        (Method::PUT, "/api/test/collection"),
        (Method::POST, "/api/test/raw"),
    ] {
        let res = small.send(send(method.clone(), uri, body(4096))).await;
        assert_eq!(res.status, 413, "{method} {uri}: {}", res.text());
        assert!(
            res.json()["error"].is_string(),
            "{method} {uri}: {}",
            res.text()
        );
    }
}

#[actix_web::test]
async fn bad_uuid_in_path_is_400_naming_the_parameter() {
    let app = app().module(fixtures::configure).start().await;
    let res = app.get("/api/test/items/not-a-uuid").await;
    assert_json_error(&res, 400, "id");
    let id = uuid::Uuid::new_v4();
    let res = app.get(&format!("/api/test/items/{id}")).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["id"], id.to_string());
}

#[actix_web::test]
async fn query_parameters_are_typed_and_paging_is_bounded() {
    let app = app().module(fixtures::configure).start().await;
    let res = app.get("/api/test/list").await;
    assert_eq!(
        res.json(),
        json!({"page": 1, "pageSize": 50, "offset": 0, "roleIds": []})
    );

    let a = uuid::Uuid::new_v4();
    let b = uuid::Uuid::new_v4();
    let res = app
        .get(&format!(
            "/api/test/list?page=3&pageSize=200&roleIds={a}&roleIds={b}"
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({"page": 3, "pageSize": 200, "offset": 400, "roleIds": [a, b]})
    );

    assert_json_error(
        &app.get("/api/test/list?pageSize=201").await,
        400,
        "pageSize",
    );
    assert_json_error(&app.get("/api/test/list?pageSize=0").await, 400, "pageSize");
    assert_json_error(&app.get("/api/test/list?page=0").await, 400, "page");
    assert_json_error(
        &app.get("/api/test/list?pageSize=abc").await,
        400,
        "pageSize",
    );
    assert_json_error(&app.get("/api/test/list?page=-1").await, 400, "page");
    assert_json_error(
        &app.get("/api/test/list?roleIds=nope").await,
        400,
        "roleIds",
    );
}

/// The fields of each issue, in order.
fn issue_fields(body: &Value) -> Vec<String> {
    body["issues"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|issue| issue["path"][0].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[actix_web::test]
async fn every_failing_query_parameter_is_reported() {
    let app = app().module(fixtures::configure).start().await;
    let ok = app.get("/api/test/search?term=ab&limit=3").await;
    assert_eq!(ok.status, 200, "{}", ok.text());

    // A missing one, a wrong type and a malformed uuid: all three named.
    let res = app.get("/api/test/search?limit=abc&fromId=nope").await;
    let body = assert_json_error(&res, 400, "term");
    let mut fields = issue_fields(&body);
    fields.sort();
    assert_eq!(fields, ["fromId", "limit", "term"], "{body}");
    assert_eq!(body["details"]["fieldErrors"]["term"], json!(["Required"]));

    // A wrong type beside validation rules of the parameters that parsed.
    let res = app
        .get("/api/test/search?term=toolong&limit=x&depth=11")
        .await;
    let body = assert_json_error(&res, 400, "limit");
    let mut fields = issue_fields(&body);
    fields.sort();
    assert_eq!(fields, ["depth", "limit", "term"], "{body}");

    // Rules alone (everything parsed) keep reporting every one.
    let res = app.get("/api/test/search?term=&limit=1&depth=99").await;
    let body = assert_json_error(&res, 400, "term");
    let mut fields = issue_fields(&body);
    fields.sort();
    assert_eq!(fields, ["depth", "term"], "{body}");
}

#[actix_web::test]
async fn form_bodies_are_parsed_and_validated() {
    let app = app().module(fixtures::configure).start().await;
    let req = TestRequest::post()
        .uri("/api/test/login")
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .set_payload("email=a%40b.co&remember=true");
    let res = app.send(req).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"email": "a@b.co", "remember": true}));

    let req = TestRequest::post()
        .uri("/api/test/login")
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .set_payload("email=a%40b.co&remember=perhaps");
    assert_json_error(&app.send(req).await, 400, "remember");

    let req = TestRequest::post()
        .uri("/api/test/login")
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .set_payload("email=not-an-email");
    assert_json_error(&app.send(req).await, 400, "email");

    let req = TestRequest::post()
        .uri("/api/test/login")
        .set_json(json!({"email": "c@d.io"}));
    assert_eq!(app.send(req).await.status, 200);

    let req = TestRequest::post()
        .uri("/api/test/login")
        .insert_header(("content-type", "text/csv"))
        .set_payload("email");
    assert_eq!(app.send(req).await.status, 415);
}

/// The first issue's path and the field `details.fieldErrors` names.
fn control_field(res: &stoa_testkit::TestResponse) -> (Value, Value) {
    assert_eq!(res.status, 400, "{}", res.text());
    let body = res.json();
    assert_eq!(
        body["issues"][0]["message"],
        "must not contain control characters"
    );
    assert_eq!(body["issues"][0]["code"], "invalid_string");
    let fields = body["details"]["fieldErrors"].clone();
    (body["issues"][0]["path"].clone(), fields)
}

#[actix_web::test]
async fn control_characters_are_refused_naming_the_field() {
    let app = app().module(fixtures::configure).start().await;

    // JSON: `\u0000` in a string, at any depth; tab, LF and CR are text.
    let res = app
        .post_json(
            "/api/test/echo",
            &json!({"name": "a\u{0}b", "count": 1, "kind": "ios"}),
        )
        .await;
    let (path, fields) = control_field(&res);
    assert_eq!(path, json!(["name"]));
    assert_eq!(
        fields["name"],
        json!(["must not contain control characters"])
    );
    assert_eq!(res.json()["error"], "Invalid input");
    for bad in ["\u{1b}[31m", "a\u{7f}", "\u{8}", "\u{c}"] {
        let res = app
            .post_json(
                "/api/test/echo",
                &json!({"name": bad, "count": 1, "kind": "ios"}),
            )
            .await;
        assert_eq!(control_field(&res).0, json!(["name"]), "{bad:?}");
    }
    let res = app
        .post_json(
            "/api/test/echo",
            &json!({"name": "a", "count": 1, "kind": "ios", "items": [{"qty": 1}, {"qty": "\u{0}"}]}),
        )
        .await;
    assert_eq!(control_field(&res).0, json!(["items", 1, "qty"]));
    let res = app
        .post_json(
            "/api/test/echo",
            &json!({"name": "a\tb\r\nc", "count": 1, "kind": "ios"}),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    // Query strings: no control character at all, not even a tab.
    for query in ["roleIds=%00", "page=1&search=a%09b", "x%00=1"] {
        let res = app.get(&format!("/api/test/list?{query}")).await;
        let (path, _) = control_field(&res);
        assert!(
            res.json()["error"]
                .as_str()
                .unwrap()
                .starts_with("Invalid query parameters: "),
            "{query}: {}",
            res.text()
        );
        assert!(path.is_array(), "{query}");
    }
    let res = app.get("/api/test/list?roleIds=%00").await;
    assert_eq!(control_field(&res).0, json!(["roleIds"]));

    // Path segments.
    let res = app.get("/api/test/items/ab%00cd").await;
    assert_eq!(control_field(&res).0, json!(["id"]));
    assert!(
        res.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("Invalid path parameter: id")
    );

    // Form bodies: like JSON text, tab/LF/CR allowed.
    let req = TestRequest::post()
        .uri("/api/test/login")
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .set_payload("email=a%00%40b.co");
    assert_eq!(control_field(&app.send(req).await).0, json!(["email"]));
}
