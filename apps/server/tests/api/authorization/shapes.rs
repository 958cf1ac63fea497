//! Every operation answers malformed input in the error shape it declares
//! (`Operation::errors`, the reference's shape of the route): a body of the
//! wrong type, or a malformed id in the path or the query, sent by tenant A's
//! super admin. Every answer has an `error` key; operations without input
//! are listed as such, and every operation with input is probed.

use serde_json::{Value, json};
use stoa_auth::AuthConfig;
use stoa_core::http::ErrorShape;

use super::declarations::rows;
use super::requests::{Body, Call, Fill, call};
use super::seed::{Seeded, seed};
use super::{BODY_DEADLINE, Caller};

/// The request with its input made malformed, or `None` when it has none.
fn malformed(doc: &Value, path: &str, method: &str, mut probe: Call) -> Option<Call> {
    let op = &doc["paths"][path][method];
    let mut changed = false;
    if let Some(body) = &mut probe.body {
        match body {
            // A string where an object is expected.
            Body::Json(value) => *value = json!("malformed"),
            Body::Form(_) => *body = Body::Json(json!("malformed")),
            Body::Multipart(_) | Body::NotJson(_) => return None,
        }
        changed = true;
    }
    // And a malformed uuid in the first id-like parameter.
    let uuid_param = op["parameters"].as_array().and_then(|params| {
        params.iter().find(|p| {
            p["schema"]["format"] == "uuid" && matches!(p["in"].as_str(), Some("path" | "query"))
        })
    });
    let Some(uuid_param) = uuid_param else {
        return changed.then_some(probe);
    };
    let name = uuid_param["name"].as_str()?;
    if uuid_param["in"] == "path" {
        // The segment at the parameter's place in the template (earlier
        // parameters are filled with values of other lengths).
        let template = format!("{{{name}}}");
        let at = path.split('/').position(|s| s == template)?;
        let (route, query) = probe
            .uri
            .split_once('?')
            .map_or((probe.uri.as_str(), None), |(r, q)| (r, Some(q)));
        let mut segments: Vec<&str> = route.split('/').collect();
        *segments.get_mut(at)? = "not-a-uuid";
        let route = segments.join("/");
        probe.uri = match query {
            Some(q) => format!("{route}?{q}"),
            None => route,
        };
    } else {
        // Replaces a filled value, or adds one.
        let (base, query) = probe.uri.split_once('?').unwrap_or((&probe.uri, ""));
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| !pair.is_empty() && !pair.starts_with(&format!("{name}=")))
            .collect();
        probe.uri = if kept.is_empty() {
            format!("{base}?{name}=not-a-uuid")
        } else {
            format!("{base}?{}&{name}=not-a-uuid", kept.join("&"))
        };
    }
    Some(probe)
}

/// What is wrong with `body` (answered with `status`) for `shape`.
fn problem(shape: ErrorShape, status: u16, body: &Value) -> Option<String> {
    let expected_status = if shape == ErrorShape::D { 422 } else { 400 };
    if status != expected_status {
        return Some(format!("status {status}, expected {expected_status}"));
    }
    if !body["error"].is_string() {
        return Some("no `error` string".into());
    }
    let ok = match shape {
        ErrorShape::A => body["error"] == "Invalid input" && body["details"].is_array(),
        ErrorShape::B(message) => {
            body["details"]["fieldErrors"].is_object()
                && body["details"]["formErrors"].is_array()
                && (message.is_empty() || body["error"] == message)
        }
        ErrorShape::C(message) => {
            body["issues"].is_array() && (message.is_empty() || body["error"] == message)
        }
        ErrorShape::D => body["error"] == "Validation failed" && body["fieldErrors"].is_object(),
        ErrorShape::E => body["error"].as_str().is_some_and(|e| !e.is_empty()),
        ErrorShape::F => body["error"] == "Validation failed" && body["details"].is_array(),
        ErrorShape::G => body["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("Validation failed: ")),
        ErrorShape::H => {
            body["ok"] == false && body["progressJobId"].is_null() && body["message"].is_string()
        }
        ErrorShape::I => body["ok"] == false && body["fieldErrors"].is_object(),
    };
    (!ok).then(|| format!("not shape {}", shape.letter()))
}

/// What is wrong with the answer to a body that is not JSON: the declared
/// message ([`Operation::bad_json`]) as the whole error; the CRUD shape (A)
/// reads it as `{}` (field issues, then the JSON problem); any other shape
/// answers in its own form.
fn not_json_problem(row: &super::declarations::Row, status: u16, body: &Value) -> Option<String> {
    if let Some(message) = row.bad_json {
        return (status != 400 || body["error"] != message).then(|| format!("not `{message}`"));
    }
    if let Some(problem) = problem(row.errors, status, body) {
        return Some(problem);
    }
    if row.errors == ErrorShape::A {
        let last = body["details"].as_array().and_then(|list| list.last());
        if last.is_none_or(|issue| issue["code"] != "invalid_json") {
            return Some("the JSON problem is not the last issue".into());
        }
    }
    None
}

/// A shape-A answer (400 `Invalid input`) and the paths of its issues.
fn crud_issue_paths(res: stoa_testkit::TestResponse) -> (Value, Vec<Value>) {
    let body = res.json();
    assert_eq!(res.status, 400, "{body}");
    assert_eq!(body["error"], "Invalid input");
    let paths = body["details"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|issue| issue["path"].clone())
        .collect();
    (body, paths)
}

#[actix_web::test]
async fn every_operation_answers_malformed_input_in_its_declared_shape() {
    let app = stoa_testkit::app()
        .server_with(|db| {
            // Onboarding enabled: disabled, its routes answer 404 to anything.
            let modules = stoa_server::modules_with_onboarding(
                &stoa_server::test_services(db).unwrap(),
                AuthConfig::for_tests(),
                Some(stoa_onboarding::OnboardingConfig::enabled(
                    "http://localhost:8080",
                )),
            )
            .unwrap();
            (modules.configurators, Some(modules.access))
        })
        .start()
        .await;
    let doc = app.get("/api/docs/openapi.json").await.json();
    let registry = stoa_server::registry().unwrap();
    let rows = rows(&doc, registry.operations());
    let Seeded {
        a,
        records,
        a_token,
        ..
    } = seed(&app).await;
    let mut failures = Vec::new();
    let mut probed = 0;
    let mut without_input = Vec::new();
    // Signing out would end the session the other probes use: it goes last.
    let mut ordered: Vec<_> = rows.iter().collect();
    ordered.sort_by_key(|r| r.path.ends_with("/logout"));
    for row in ordered {
        let probe = call(&doc, &row.path, &row.method, &records, Fill::Required);
        let Some(probe) = malformed(&doc, &row.path, &row.method, probe) else {
            without_input.push(row.name());
            continue;
        };
        probed += 1;
        let res = app
            .send_within(
                Caller::Bearer(&a_token).sign(probe.request()),
                BODY_DEADLINE,
            )
            .await;
        let body: Value = serde_json::from_str(&res.text()).unwrap_or(Value::Null);
        if let Some(problem) = problem(row.errors, res.status.as_u16(), &body) {
            failures.push(format!("{} ({}): {problem}: {body}", row.name(), probe.uri));
        }
        // And a JSON body that is not JSON at all.
        let mut broken = call(&doc, &row.path, &row.method, &records, Fill::Required);
        // (A collection-style delete reads an id from a JSON body leniently,
        // and the probe gives it one in the query anyway.)
        if !matches!(broken.body, Some(Body::Json(_))) || row.method == "delete" {
            continue;
        }
        broken.body = Some(Body::NotJson("{\"broken"));
        let res = app
            .send_within(
                Caller::Bearer(&a_token).sign(broken.request()),
                BODY_DEADLINE,
            )
            .await;
        let body: Value = serde_json::from_str(&res.text()).unwrap_or(Value::Null);
        if let Some(problem) = not_json_problem(row, res.status.as_u16(), &body) {
            failures.push(format!("{} (not JSON): {problem}: {body}", row.name()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The reference scenario: a user with neither password nor invitation
    // and a bad e-mail answers shape A with an issue on each field.
    let create = actix_web::test::TestRequest::post()
        .uri("/api/auth/users")
        .set_json(json!({"email": "not-an-email", "organizationId": a.organization_id}));
    let (body, paths) = crud_issue_paths(app.send(Caller::Bearer(&a_token).sign(create)).await);
    assert_eq!(paths, vec![json!(["email"]), json!(["password"])], "{body}");

    // Not JSON at all: the CRUD route names its required fields, as the
    // reference (which reads it as `{}`) does, then the JSON problem.
    let broken = actix_web::test::TestRequest::post()
        .uri("/api/auth/users")
        .insert_header(("content-type", "application/json"))
        .set_payload("{\"email\": ");
    let (body, paths) = crud_issue_paths(app.send(Caller::Bearer(&a_token).sign(broken)).await);
    assert!(paths.contains(&json!(["email"])), "{body}");
    assert!(paths.contains(&json!(["organizationId"])), "{body}");
    assert_eq!(paths.last(), Some(&json!([])), "{body}");
    // The sidebar words it as the reference does.
    let broken = actix_web::test::TestRequest::put()
        .uri("/api/auth/sidebar/preferences")
        .insert_header(("content-type", "application/json"))
        .set_payload("not json");
    let res = app.send(Caller::Bearer(&a_token).sign(broken)).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Invalid JSON", "{}", res.text());
    // A wrong type in the profile names the field, not the body.
    let profile = actix_web::test::TestRequest::put()
        .uri("/api/auth/profile")
        .set_json(json!({"email": 5}));
    let res = app.send(Caller::Bearer(&a_token).sign(profile)).await;
    let body = res.json();
    assert_eq!(res.status, 400, "{body}");
    assert_eq!(body["error"], "Invalid profile update.");
    assert_eq!(body["issues"][0]["path"], json!(["email"]), "{body}");
    assert!(
        !body.to_string().contains("line 1"),
        "no parser leftovers: {body}"
    );
    assert!(probed > 40, "only {probed} operations probed");
    eprintln!("without input: {}", without_input.join(", "));
}
