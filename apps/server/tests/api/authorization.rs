//! The authorization matrix (docs/security.md): every operation of the OpenAPI
//! document is declared once (`OPERATIONS` of its module), and is called with
//! tenant A's record ids by callers who must not get them:
//!
//! | caller | expected |
//! |---|---|
//! | anonymous, tampered token, expired token, deleted API key | 401 (public operations excluded) |
//! | tenant-A user whose role grants nothing | 403 `requiredFeatures` = the declaration, where features are declared |
//! | tenant-B administrator (every feature, not a super admin) | 403/404, or a 2xx naming none of tenant A's records; tenant A's rows unchanged |
//! | tenant-A administrator restricted to a sibling organization (every feature, not a super admin), on every operation that names a record id | 400/403/404/409/422 naming no record outside its organization beyond those sent, or a 2xx naming none; tenant A's rows outside its organization unchanged |
//! | tenant-A user holding exactly the declared features | never 401, never a 403 naming a feature outside the declaration |
//!
//! An operation without a declaration, or a declaration without an
//! operation, fails the test: a new module adds its rows by construction.

mod declarations;
mod requests;
mod seed;
mod shapes;
mod widgets;

use std::collections::BTreeMap;

use actix_web::dev::ResourceDef;
use actix_web::test::TestRequest;
use serde_json::json;
use stoa_auth::AuthConfig;
use stoa_auth::testing::{token_for, user_with_features};
use stoa_core::http::Access;
use stoa_testkit::{AppService, TestApp, TestResponse};

use declarations::{Row, rows};
use requests::{Call, Fill, call};
use seed::{Seeded, outside_records, seed, seed_sibling, snapshot, snapshot_statement, take};

/// The callers and how each one signs its requests.
enum Caller<'a> {
    Anonymous,
    Bearer(&'a str),
    ApiKey(&'a str),
}

impl Caller<'_> {
    fn sign(&self, req: TestRequest) -> TestRequest {
        match self {
            Self::Anonymous => req,
            Self::Bearer(token) => req.insert_header(("authorization", format!("Bearer {token}"))),
            Self::ApiKey(key) => req.insert_header(("x-api-key", key.to_string())),
        }
    }
}

/// How long a response body is read: an event stream never ends by itself,
/// so every answer is read with this deadline and then dropped (the client
/// disconnects).
const BODY_DEADLINE: std::time::Duration = std::time::Duration::from_millis(500);

async fn send<S: AppService>(app: &TestApp<S>, caller: &Caller<'_>, call: &Call) -> TestResponse {
    app.send_within(caller.sign(call.request()), BODY_DEADLINE)
        .await
}

/// A token whose signature no longer matches its claims.
fn tampered(token: &str) -> String {
    let (head, signature) = token.rsplit_once('.').unwrap();
    let mut bytes = signature.as_bytes().to_vec();
    bytes[0] = if bytes[0] == b'A' { b'B' } else { b'A' };
    format!("{head}.{}", String::from_utf8(bytes).unwrap())
}

/// A correctly signed token of `user` that expired an hour ago.
fn expired(user: uuid::Uuid, tenant: uuid::Uuid) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = stoa_auth::tokens::Claims {
        sub: user,
        sid: uuid::Uuid::new_v4(),
        tenant_id: Some(tenant),
        org_id: None,
        email: "superadmin@alpha.test".into(),
        roles: vec!["superadmin".into()],
        iat: now - 7200,
        exp: now - 3600,
        iss: "open-mercato".into(),
        aud: "staff".into(),
    };
    let config = AuthConfig::for_tests();
    stoa_auth::tokens::TokenKeys::new(config.jwt_secret.expose())
        .sign(&claims)
        .unwrap()
}

#[actix_web::test]
async fn every_operation_answers_only_the_callers_it_declares() {
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
    let doc = app.get("/api/docs/openapi.json").await.json();
    let registry = stoa_server::registry().unwrap();
    let rows = rows(&doc, registry.operations());
    let Seeded {
        a,
        records,
        a_token,
        deleted_key,
        no_features,
        b_admin,
    } = seed(&app).await;
    // Signing out ends the caller's session: it goes last.
    let mut protected: Vec<&Row> = rows.iter().filter(|r| r.access != Access::Public).collect();
    protected.sort_by_key(|r| r.path.ends_with("/logout"));
    let probes: Vec<Call> = protected
        .iter()
        .map(|r| call(&doc, &r.path, &r.method, &records, Fill::Ids))
        .collect();
    assert_overlaps_route_to_the_literal_template(&doc, &rows, &probes, &protected);
    let sibling = seed_sibling(&app, &a, &a_token).await;

    let no_features = token_for(&app.db, no_features).await;
    let b_admin = token_for(&app.db, b_admin).await;
    let tampered = tampered(&a_token);
    let expired = expired(a.superadmin, a.tenant_id);
    let before = snapshot(&app.db, a.tenant_id, None).await;
    let mut failures = Vec::new();

    // Without valid credentials: 401, whatever the operation does.
    let strangers = [
        ("anonymous", Caller::Anonymous),
        ("tampered token", Caller::Bearer(&tampered)),
        ("expired token", Caller::Bearer(&expired)),
        ("deleted API key", Caller::ApiKey(&deleted_key)),
    ];
    for (row, probe) in protected.iter().zip(&probes) {
        for (who, caller) in &strangers {
            let res = send(&app, caller, probe).await;
            if res.status != 401 {
                failures.push(format!(
                    "{} as {who}: {} {}",
                    row.name(),
                    res.status,
                    res.text()
                ));
            }
        }
    }

    // Another tenant's administrator: refused, or answered without tenant A.
    let ids: Vec<String> = records.all.iter().map(|id| id.to_string()).collect();
    let mut answered = BTreeMap::new();
    for (row, probe) in protected.iter().zip(&probes) {
        let res = send(&app, &Caller::Bearer(&b_admin), probe).await;
        let body = res.text().to_ascii_lowercase();
        let leaked: Vec<&String> = ids.iter().filter(|id| body.contains(id.as_str())).collect();
        let status = res.status.as_u16();
        answered.insert(
            row.name(),
            format!(
                "{status} {}",
                res.text().chars().take(160).collect::<String>()
            ),
        );
        missing_data(&mut failures, row, &res, "tenant B's admin");
        let refused = matches!(status, 400 | 403 | 404 | 409 | 422);
        let answered_ok = res.status.is_success() || res.status.is_redirection();
        if !(refused || answered_ok) || (answered_ok && !leaked.is_empty()) {
            failures.push(format!(
                "{} as tenant B's admin ({}): {status} {}",
                row.name(),
                probe.uri,
                res.text()
            ));
        }
    }
    let after = snapshot(&app.db, a.tenant_id, None).await;
    for ((table, was), (_, now)) in before.iter().zip(&after) {
        if was != now {
            failures.push(format!(
                "tenant A's `{table}` rows changed during the matrix"
            ));
        }
    }

    // An administrator of tenant A restricted to a sibling organization,
    // on every operation that names one of tenant A's records (a path
    // parameter, or an id the probe puts in the query or the body):
    // refused, or answered without the records of other organizations; and
    // afterwards every row of tenant A outside its organization unchanged.
    let sibling_answered = restricted_admin(
        &app,
        &a,
        &records,
        &sibling,
        &protected,
        &probes,
        &mut failures,
    )
    .await;

    // A tenant-A user without features: 403 naming exactly the declaration.
    for (row, probe) in protected.iter().zip(&probes) {
        let res = send(&app, &Caller::Bearer(&no_features), probe).await;
        let expected = match row.access {
            Access::Features(features) => Some(json!(features)),
            _ => None,
        };
        let ok = match &expected {
            Some(features) => res.status == 403 && res.json()["requiredFeatures"] == *features,
            None => res.status != 401,
        };
        if !ok {
            failures.push(format!(
                "{} without features: {} {}",
                row.name(),
                res.status,
                res.text()
            ));
        }
    }

    // A tenant-A user holding exactly the declared features: the handler
    // asks for nothing more (conditional checks are left out by sending only
    // what the operation requires).
    for row in &protected {
        let Access::Features(features) = row.access else {
            continue;
        };
        let email = format!("holder-{}@alpha.test", uuid::Uuid::new_v4());
        let user = user_with_features(&app.db, &a, &email, features, None, None).await;
        let token = token_for(&app.db, user).await;
        let probe = call(&doc, &row.path, &row.method, &records, Fill::Required);
        let res = send(&app, &Caller::Bearer(&token), &probe).await;
        missing_data(&mut failures, row, &res, "a holder of its features");
        let extra = res.status == 403
            && res.json()["requiredFeatures"]
                .as_array()
                .is_some_and(|asked| asked.iter().any(|f| !features.iter().any(|d| f == d)));
        if res.status == 401 || extra {
            failures.push(format!(
                "{} with {features:?}: {} {}",
                row.name(),
                res.status,
                res.text()
            ));
        }
    }

    assert!(
        failures.is_empty(),
        "{} authorization failures:\n{}\n(tenant B's admin got: {answered:?})\n\
         (the sibling organization's admin got: {sibling_answered:?})",
        failures.len(),
        failures.join("\n")
    );
}

/// Whether a probe names one of tenant A's records: a path parameter, or a
/// record's id (or undo token, or device key) in its query or body.
fn names_a_record(row: &Row, probe: &Call, records: &seed::Records) -> bool {
    if row.path.contains('{') {
        return true;
    }
    let sent = format!("{} {:?}", probe.uri, probe.body).to_ascii_lowercase();
    records
        .all
        .iter()
        .map(|id| id.to_string())
        .chain([records.undo_token.clone(), records.device_key.clone()])
        .any(|id| sent.contains(&id.to_ascii_lowercase()))
}

/// The sixth caller (docs/security.md, "Authorization matrix"): tenant A's
/// administrator restricted to a sibling organization. Returns what each
/// probed operation answered, for the failure message.
async fn restricted_admin<S: AppService>(
    app: &TestApp<S>,
    a: &stoa_auth::testing::Tenant,
    records: &seed::Records,
    sibling: &seed::Sibling,
    protected: &[&Row],
    probes: &[Call],
    failures: &mut Vec<String>,
) -> BTreeMap<String, String> {
    let token = token_for(&app.db, sibling.user).await;
    let outside = outside_records(&app.db, a.tenant_id, sibling).await;
    let statement = snapshot_statement(&app.db, Some(sibling)).await;
    let mut before = take(&app.db, &statement, a.tenant_id).await;
    let mut answered = BTreeMap::new();
    for (row, probe) in protected.iter().zip(probes) {
        if !names_a_record(row, probe, records) {
            continue;
        }
        let res = send(app, &Caller::Bearer(&token), probe).await;
        let text = res.text();
        let body = text.to_ascii_lowercase();
        let leaked: Vec<String> = outside
            .iter()
            .filter(|(id, _)| body.contains(&id.to_string()))
            .map(|(id, table)| format!("{table} {id}"))
            .collect();
        // A refusal may repeat what the probe sent, nothing more: naming
        // another record (the organization a record lives in) confirms what
        // a 404 would hide.
        let sent = format!("{} {:?}", probe.uri, probe.body).to_ascii_lowercase();
        let told: Vec<&String> = leaked
            .iter()
            .filter(|named| {
                named
                    .rsplit(' ')
                    .next()
                    .is_some_and(|id| !sent.contains(id))
            })
            .collect();
        let status = res.status.as_u16();
        answered.insert(
            row.name(),
            format!("{status} {}", text.chars().take(160).collect::<String>()),
        );
        missing_data(failures, row, &res, "the sibling organization's admin");
        let refused = matches!(status, 400 | 403 | 404 | 409 | 422);
        let answered_ok = res.status.is_success() || res.status.is_redirection();
        if !(refused || answered_ok) {
            failures.push(format!(
                "{} as the sibling organization's admin ({}): {status} {text}",
                row.name(),
                probe.uri,
            ));
        } else if answered_ok && !leaked.is_empty() {
            failures.push(format!(
                "{} as the sibling organization's admin ({}): {status} names {}",
                row.name(),
                probe.uri,
                leaked.join(", ")
            ));
        } else if refused && !told.is_empty() {
            failures.push(format!(
                "{} as the sibling organization's admin ({}): {status} refusal names {:?}: {text}",
                row.name(),
                probe.uri,
                told
            ));
        }
        // Compared after each operation, so a change names its operation.
        let after = take(&app.db, &statement, a.tenant_id).await;
        for ((table, was), (_, now)) in before.iter().zip(&after) {
            if was != now {
                failures.push(format!(
                    "{} as the sibling organization's admin ({}): {status}, changed tenant A's \
                     `{table}` rows outside its organization",
                    row.name(),
                    probe.uri,
                ));
            }
        }
        before = after;
    }
    answered
}

/// A handler that reached an extractor of app data nobody registered (a
/// shared service missing from the module context).
fn missing_data(failures: &mut Vec<String>, row: &Row, res: &TestResponse, who: &str) {
    if res.status == 500 && res.json()["code"] == stoa_core::http::APP_DATA_MISSING {
        failures.push(format!(
            "{} as {who}: extracts app data the modules do not register",
            row.name()
        ));
    }
}

/// Overlapping templates under one method (`/attachments/library` beside
/// `/attachments/{id}`) are allowed only as the guide's rule says: the router
/// runs the first registered route that matches, and the matrix holds a
/// request to that route's declaration, so every template that a probe of
/// another operation also matches must be registered after it (the document
/// keeps registration order). A parametric template registered first would
/// swallow the literal one's requests.
fn assert_overlaps_route_to_the_literal_template(
    doc: &serde_json::Value,
    rows: &[Row],
    probes: &[Call],
    protected: &[&Row],
) {
    let order: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    let position = |path: &str| order.iter().position(|p| p.as_str() == path);
    for (row, probe) in protected.iter().zip(probes) {
        let path = probe.uri.split('?').next().unwrap_or_default();
        let before: Vec<String> = rows
            .iter()
            .filter(|o| o.method == row.method && o.path != row.path)
            .filter(|o| ResourceDef::new(o.path.as_str()).is_match(path))
            .filter(|o| position(&o.path) < position(&row.path))
            .map(Row::name)
            .collect();
        assert!(
            before.is_empty(),
            "{} is reached by {before:?}, registered before it: register the literal \
             route first (docs/adding-a-module.md, \"Overlapping paths\")",
            row.name()
        );
    }
}

/// The matrix builds multipart bodies for operations that take them: binary
/// properties as file parts, the rest as text fields.
#[test]
fn multipart_operations_get_a_multipart_body() {
    let doc = json!({
        "paths": {"/api/things/upload": {"post": {"requestBody": {"content": {
            "multipart/form-data": {"schema": {
                "type": "object",
                "required": ["file", "title"],
                "properties": {
                    "file": {"type": "string", "format": "binary"},
                    "title": {"type": "string"}
                }
            }}
        }}}}}
    });
    let records = seed::Records::default();
    let probe = call(&doc, "/api/things/upload", "post", &records, Fill::Required);
    match &probe.body {
        Some(requests::Body::Multipart(parts)) => {
            assert!(parts.contains(&("file".to_string(), None)), "{parts:?}");
            assert!(parts.contains(&("title".to_string(), Some("matrix".to_string()))));
        }
        other => panic!("not a multipart body: {other:?}"),
    }
    let req = probe.request().to_http_request();
    let content_type = req.headers().get("content-type").unwrap().to_str().unwrap();
    assert!(
        content_type.starts_with("multipart/form-data; boundary="),
        "{content_type}"
    );
}
