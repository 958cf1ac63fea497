//! Pipelines and stages: CRUD in both styles, lists, in-use refusals.

use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn pipelines_and_stages_are_managed_and_refuse_deletion_while_used() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    let sales = pipeline(&app, &admin, "Sales").await;
    let spare = pipeline(&app, &admin, "Spare").await;
    let lead = stage(&app, &admin, sales, "Lead").await;
    let res = app
        .send(post_json(
            STAGES,
            &admin,
            json!({"pipelineId": sales, "label": "Won", "order": 5, "color": "#0a0"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let won = id_of(&res.json());

    // Lists (the employee may view, not manage).
    let list = app.send(get(PIPELINES, &employee)).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.json()["total"], 2);
    assert_eq!(list.json()["items"][0]["name"], "Sales");
    let stages = app
        .send(get(&format!("{STAGES}?pipelineId={sales}"), &employee))
        .await
        .json();
    assert_eq!(stages["total"], 2);
    assert_eq!(stages["items"][0]["label"], "Lead");
    assert_eq!(stages["items"][1]["order"], 5);
    assert_eq!(
        app.send(post_json(PIPELINES, &employee, json!({"name": "x"})))
            .await
            .status,
        403
    );

    // Updates in both styles.
    let res = app
        .send(put_json(
            &format!("{PIPELINES}/{sales}"),
            &admin,
            json!({"isDefault": true}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(put_json(
            PIPELINES,
            &admin,
            json!({"id": spare, "name": "Renewals"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let defaults = app
        .send(get(&format!("{PIPELINES}?isDefault=true"), &admin))
        .await
        .json();
    assert_eq!(defaults["total"], 1);
    let res = app
        .send(put_json(
            &format!("{STAGES}/{lead}"),
            &admin,
            json!({"label": "New lead", "order": 1}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(put_json(STAGES, &admin, json!({"id": won, "color": null})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    // Bad input.
    assert_eq!(
        app.send(post_json(PIPELINES, &admin, json!({"name": ""})))
            .await
            .status,
        400
    );
    assert_eq!(
        app.send(post_json(
            STAGES,
            &admin,
            json!({"pipelineId": sales, "label": "x", "order": -1})
        ))
        .await
        .status,
        400
    );
    let res = app
        .send(post_json(
            STAGES,
            &admin,
            json!({"pipelineId": uuid::Uuid::new_v4(), "label": "x"}),
        ))
        .await;
    assert_eq!(res.status, 404, "{}", res.text());

    // In use: a stage with deals, a pipeline with stages.
    let id = deal(
        &app,
        &admin,
        json!({"title": "Uses lead", "pipelineStageId": lead}),
    )
    .await;
    let res = app.send(delete(&format!("{STAGES}/{lead}"), &admin)).await;
    assert_eq!(res.status, 409, "{}", res.text());
    let res = app
        .send(delete(&format!("{PIPELINES}/{sales}"), &admin))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(
        read(&app, &admin, id).await.unwrap()["pipelineStage"],
        "New lead"
    );

    // Free: deleted, in both styles.
    assert_eq!(
        app.send(delete(&format!("{STAGES}?id={won}"), &admin))
            .await
            .status,
        200
    );
    assert_eq!(
        app.send(delete(&format!("{PIPELINES}?id={spare}"), &admin))
            .await
            .status,
        200
    );
    assert_eq!(
        app.send(delete(&format!("{PIPELINES}/{spare}"), &admin))
            .await
            .status,
        404
    );
    assert_eq!(app.send(get(PIPELINES, &admin)).await.json()["total"], 1);
}

#[actix_web::test]
async fn another_tenants_pipelines_and_stages_do_not_exist() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let intruder = token_for(&app.db, globex.admin).await;
    let sales = pipeline(&app, &admin, "Sales").await;
    let lead = stage(&app, &admin, sales, "Lead").await;
    assert_eq!(app.send(get(PIPELINES, &intruder)).await.json()["total"], 0);
    assert_eq!(app.send(get(STAGES, &intruder)).await.json()["total"], 0);
    for req in [
        put_json(
            &format!("{PIPELINES}/{sales}"),
            &intruder,
            json!({"name": "Mine"}),
        ),
        delete(&format!("{PIPELINES}/{sales}"), &intruder),
        put_json(
            &format!("{STAGES}/{lead}"),
            &intruder,
            json!({"label": "Mine"}),
        ),
        delete(&format!("{STAGES}/{lead}"), &intruder),
        post_json(
            STAGES,
            &intruder,
            json!({"pipelineId": sales, "label": "Mine"}),
        ),
    ] {
        assert_eq!(app.send(req).await.status, 404);
    }
    let res = app
        .send(post_json(
            DEALS,
            &intruder,
            json!({"title": "x", "pipelineStageId": lead}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(
        app.send(get(PIPELINES, &admin)).await.json()["items"][0]["name"],
        "Sales"
    );
}

#[actix_web::test]
async fn the_pipeline_and_stage_lists_are_kept_until_either_changes() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    // Seeded first: a new tenant's roles move every caller's ACL version.
    let other = seed(&app.db, "Other Corp", "other.com").await;
    let theirs = token_for(&app.db, other.admin).await;
    let sales = pipeline(&app, &admin, "Sales").await;
    stage(&app, &admin, sales, "Lead").await;
    for path in [PIPELINES, STAGES] {
        let (_, first) = app.statements(path, &admin).await;
        let (n, again) = app.statements(path, &admin).await;
        assert_eq!((n, &again), (1, &first), "{path}: a kept list");
    }
    // A new stage moves the tenant's version: both lists are read again,
    // and the stage list shows it.
    stage(&app, &admin, sales, "Won").await;
    let (n, stages) = app.statements(STAGES, &admin).await;
    assert!(n > 1, "the stages recomputed ({n} statements)");
    assert_eq!(stages["total"], 2, "{stages}");
    let (n, _) = app.statements(PIPELINES, &admin).await;
    assert!(n > 1, "the pipelines recomputed ({n} statements)");
    // Another tenant's writes leave them kept.
    pipeline(&app, &theirs, "Theirs").await;
    let (n, _) = app.statements(PIPELINES, &admin).await;
    assert_eq!(n, 1, "another tenant's pipeline leaves the list kept");
}
