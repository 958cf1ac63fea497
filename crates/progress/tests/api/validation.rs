//! The reference's validation scenarios for `POST /progress/jobs` (shape B:
//! `{error:"Invalid input", details:{formErrors, fieldErrors}}`): every
//! failing field is named under its own key, unknown fields are ignored.

use serde_json::{Value, json};

use super::support::*;

fn field_errors(body: &Value) -> Vec<String> {
    let mut keys: Vec<String> = body["details"]["fieldErrors"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

#[actix_web::test]
async fn job_bodies_are_checked_field_by_field() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let cases = [
        (json!({"name": "Import"}), vec!["jobType"]),
        (
            json!({"jobType": "x".repeat(101), "name": "Import"}),
            vec!["jobType"],
        ),
        (json!({"jobType": "catalog.import"}), vec!["name"]),
        (
            json!({"jobType": "catalog.import", "name": "Import", "totalCount": -1}),
            vec!["totalCount"],
        ),
        // Every problem at once, not only the first.
        (
            json!({"totalCount": -1}),
            vec!["jobType", "name", "totalCount"],
        ),
    ];
    for (body, fields) in cases {
        let res = app
            .send(post_json("/api/progress/jobs", &admin, body.clone()))
            .await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        let answer = res.json();
        assert_eq!(answer["error"], "Invalid input", "{body}");
        assert_eq!(
            answer["details"]["formErrors"],
            json!([]),
            "{body}: {answer}"
        );
        assert_eq!(field_errors(&answer), fields, "{body}: {answer}");
        // No parser leftovers in the messages.
        assert!(!answer.to_string().contains("at line"), "{answer}");
        assert!(!answer.to_string().contains("missing field"), "{answer}");
    }
    let res = app
        .send(post_json(
            "/api/progress/jobs",
            &admin,
            json!({"jobType": "catalog.import", "name": "Import", "somethingElse": 1}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
}
