//! `POST /customers/pipeline-stages/reorder` (the reference's body
//! `{stages:[{id, order}]}`, answer `{ok:true}`): one transaction, one
//! undoable entry per moved stage, tenant and organization scope checked,
//! bad input 400.

use actix_web::test::TestRequest;
use serde_json::{Value, json};
use stoa_testkit::requests::bearer;

use super::support::*;

const REORDER: &str = "/api/customers/pipeline-stages/reorder";

/// `(label, order)` of the pipeline's stages, in list order.
async fn orders<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    pipeline: uuid::Uuid,
) -> Vec<(String, i64)> {
    let list = app
        .send(get(&format!("{STAGES}?pipelineId={pipeline}"), token))
        .await
        .json();
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["label"].as_str().unwrap_or_default().to_string(),
                s["order"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

fn owned(pairs: &[(&str, i64)]) -> Vec<(String, i64)> {
    pairs.iter().map(|(l, o)| (l.to_string(), *o)).collect()
}

#[actix_web::test]
async fn stages_are_reordered_in_one_undoable_write() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let sales = pipeline(&app, &admin, "Sales").await;
    let mut ids = Vec::new();
    for (i, label) in ["Lead", "Offer", "Won"].iter().enumerate() {
        let res = app
            .send(post_json(
                STAGES,
                &admin,
                json!({"pipelineId": sales, "label": label, "order": i}),
            ))
            .await;
        assert_eq!(res.status, 201, "{}", res.text());
        ids.push(id_of(&res.json()));
    }
    let body = json!({"stages": [
        {"id": ids[0], "order": 2},
        {"id": ids[1], "order": 1},
        {"id": ids[2], "order": 0},
    ]});
    let res = app.send(post_json(REORDER, &admin, body)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true}));
    let token = undo_token(&res);
    assert_eq!(
        orders(&app, &admin, sales).await,
        owned(&[("Won", 0), ("Offer", 1), ("Lead", 2)])
    );
    // One entry per stage whose order changed (Offer kept its place).
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM action_logs WHERE command_id = 'customers.pipeline_stages.reorder'"
        )
        .await,
        2
    );
    // The answer's entry is undoable like any stage write.
    let res = undo(&app, &admin, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    // (Lead 0 -> 2 and Won 2 -> 0 are two entries: undoing the answer's one
    // puts that stage back, so Lead and Won share an order again.)
    let after_undo = orders(&app, &admin, sales).await;
    let order_of = |label: &str| after_undo.iter().find(|(l, _)| l == label).map(|(_, o)| *o);
    assert_eq!(order_of("Lead"), order_of("Won"), "{after_undo:?}");
    assert_eq!(order_of("Offer"), Some(1), "{after_undo:?}");
    // Nothing to change: 200, no entry.
    let res = app
        .send(post_json(
            REORDER,
            &admin,
            json!({"stages": [{"id": ids[1], "order": 1}]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(res.operation().is_none());
}

#[actix_web::test]
async fn bad_input_and_stages_out_of_reach_are_refused_changing_nothing() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    let sales = pipeline(&app, &admin, "Sales").await;
    let lead = stage(&app, &admin, sales, "Lead").await;
    let theirs = stage(
        &app,
        &globex_admin,
        pipeline(&app, &globex_admin, "Theirs").await,
        "Their lead",
    )
    .await;

    let too_many: Vec<Value> = (0..1001)
        .map(|i| json!({"id": uuid::Uuid::new_v4(), "order": i}))
        .collect();
    let bad: [Value; 7] = [
        json!({}),
        json!({"stages": []}),
        json!({"stages": [{"id": lead, "order": -1}]}),
        json!({"stages": [{"id": lead, "order": 1}, {"id": lead, "order": 2}]}),
        json!({"stages": [{"id": "not-a-uuid", "order": 1}]}),
        json!({"stages": [{"id": lead}]}),
        json!({ "stages": too_many }),
    ];
    for body in bad {
        let res = app.send(post_json(REORDER, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        assert_eq!(res.json()["error"], "Invalid input", "{body}");
        assert!(res.json()["details"].is_array(), "{body}");
    }
    // An unknown stage, or another tenant's: 404, and the known one keeps
    // its order (one transaction).
    for other in [uuid::Uuid::new_v4(), theirs] {
        let res = app
            .send(post_json(
                REORDER,
                &admin,
                json!({"stages": [{"id": lead, "order": 7}, {"id": other, "order": 0}]}),
            ))
            .await;
        assert_eq!(res.status, 404, "{}", res.text());
        assert_eq!(res.json()["error"], "Pipeline stage not found");
    }
    assert_eq!(orders(&app, &admin, sales).await, owned(&[("Lead", 0)]));
    // Without customers.pipelines.manage: 403 naming it.
    let res = app
        .send(post_json(
            REORDER,
            &employee,
            json!({"stages": [{"id": lead, "order": 3}]}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(
        res.json()["requiredFeatures"],
        json!(["customers.pipelines.manage"])
    );
    // Anonymous: 401.
    let res = app
        .send(
            TestRequest::post()
                .uri(REORDER)
                .set_json(json!({"stages": [{"id": lead, "order": 3}]})),
        )
        .await;
    assert_eq!(res.status, 401);

    // An admin limited to North neither sees nor moves the root's stages.
    let north = child_org(&app.db, &acme, "North").await;
    let limited = user_with_features(
        &app.db,
        &acme,
        "north@acme.com",
        &["customers.*"],
        Some(vec![north]),
        Some(north),
    )
    .await;
    let limited = token_for(&app.db, limited).await;
    let res = app
        .send(post_json(
            REORDER,
            &limited,
            json!({"stages": [{"id": lead, "order": 4}]}),
        ))
        .await;
    assert_eq!(res.status, 404, "{}", res.text());
    // Its own organization's stages it reorders.
    let res = app
        .send(
            bearer(TestRequest::post(), &limited)
                .uri(PIPELINES)
                .set_json(json!({"name": "North sales"})),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let north_pipeline = id_of(&res.json());
    let north_stage = stage(&app, &limited, north_pipeline, "North lead").await;
    let res = app
        .send(post_json(
            REORDER,
            &limited,
            json!({"stages": [{"id": north_stage, "order": 4}]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        orders(&app, &limited, north_pipeline).await,
        owned(&[("North lead", 4)])
    );
    assert_eq!(orders(&app, &admin, sales).await, owned(&[("Lead", 0)]));
}
