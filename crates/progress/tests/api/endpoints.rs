use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn create_poll_update_and_cancel() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            "/api/progress/jobs",
            &admin,
            json!({"jobType": "catalog.products.import", "name": "Import", "totalCount": 200, "cancellable": true, "meta": {"file": "a.csv"}}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let id = res.json()["id"].as_str().unwrap().to_string();

    let res = app.send(get("/api/progress/active", &admin)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["active"][0]["id"], id.as_str());
    assert_eq!(res.json()["active"][0]["status"], "pending");

    let res = app
        .send(put_json(
            &format!("/api/progress/jobs/{id}"),
            &admin,
            json!({"processedCount": 50, "meta": {"step": 2}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "progressPercent": 25}));
    let res = app
        .send(get(&format!("/api/progress/jobs/{id}"), &admin))
        .await;
    let job = res.json();
    assert_eq!(
        (job["processedCount"].clone(), job["status"].clone()),
        (json!(50), json!("pending"))
    );
    assert_eq!(job["meta"], json!({"file": "a.csv", "step": 2}));
    assert_eq!(job["tenantId"], acme.tenant_id.to_string());

    let res = app
        .send(get(
            "/api/progress/jobs?jobType=catalog.products.import",
            &admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 1);
    assert_eq!(res.json()["pageSize"], 20);

    let res = app
        .send(delete(&format!("/api/progress/jobs/{id}"), &admin))
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(get(&format!("/api/progress/jobs/{id}"), &admin))
        .await;
    assert_eq!(res.json()["status"], "cancelled");
    // Cancelling again is fine; a terminal job is not changed by updates.
    assert_eq!(
        app.send(delete(&format!("/api/progress/jobs/{id}"), &admin))
            .await
            .status,
        200
    );
    let res = app
        .send(put_json(
            &format!("/api/progress/jobs/{id}"),
            &admin,
            json!({"processedCount": 10}),
        ))
        .await;
    assert_eq!(res.json()["progressPercent"], 25);
    let res = app
        .send(get("/api/progress/jobs?status=cancelled", &admin))
        .await;
    assert_eq!(res.json()["total"], 1);
    assert_eq!(
        app.send(get("/api/progress/jobs", &admin)).await.json()["total"],
        0
    );
    assert_eq!(
        app.send(get("/api/progress/jobs?includeCompleted=true", &admin))
            .await
            .json()["total"],
        1
    );
}

#[actix_web::test]
async fn validation_scope_and_features() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    for body in [
        json!({"name": "x"}),
        json!({"jobType": "", "name": "x"}),
        json!({"jobType": "a", "name": "x", "totalCount": 0}),
        json!({"jobType": "a", "name": "x", "meta": [1]}),
        json!({"jobType": "a", "name": "x", "parentJobId": uuid::Uuid::new_v4()}),
    ] {
        let res = app
            .send(post_json("/api/progress/jobs", &admin, body.clone()))
            .await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
    }
    let res = app
        .send(post_json(
            "/api/progress/jobs",
            &admin,
            json!({"jobType": "a", "name": "fixed"}),
        ))
        .await;
    let id = res.json()["id"].as_str().unwrap().to_string();
    // Not cancellable.
    let res = app
        .send(delete(&format!("/api/progress/jobs/{id}"), &admin))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json(), json!({"error": "Cannot cancel this job"}));
    for q in [
        "?pageSize=101",
        "?status=bogus",
        "?completedSince=never",
        "?sortField=name",
    ] {
        assert_eq!(
            app.send(get(&format!("/api/progress/jobs{q}"), &admin))
                .await
                .status,
            400,
            "{q}"
        );
    }
    assert_eq!(
        app.send(put_json(
            &format!("/api/progress/jobs/{id}"),
            &admin,
            json!({"progressPercent": 101})
        ))
        .await
        .status,
        400
    );
    assert_eq!(
        app.send(get("/api/progress/jobs/not-a-uuid", &admin))
            .await
            .status,
        404
    );

    // Another tenant sees nothing of it.
    let other = token_for(&app.db, globex.admin).await;
    let res = app
        .send(get(&format!("/api/progress/jobs/{id}"), &other))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), json!({"error": "Not found"}));
    assert_eq!(
        app.send(put_json(
            &format!("/api/progress/jobs/{id}"),
            &other,
            json!({"processedCount": 1})
        ))
        .await
        .status,
        404
    );
    assert_eq!(
        app.send(get("/api/progress/active", &other)).await.json()["active"],
        json!([])
    );

    // Employees may watch but not create.
    let employee = token_for(&app.db, acme.employee).await;
    assert_eq!(
        app.send(get("/api/progress/active", &employee))
            .await
            .status,
        200
    );
    let res = app
        .send(post_json(
            "/api/progress/jobs",
            &employee,
            json!({"jobType": "a", "name": "x"}),
        ))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["requiredFeatures"], json!(["progress.create"]));
    assert_eq!(app.get("/api/progress/active").await.status, 401);
}
