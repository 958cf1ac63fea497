//! The collection forms Open Mercato clients use: `PUT /progress/jobs {id, ...}`
//! and `DELETE /progress/jobs?id=` behave like the `/{id}` forms.

use serde_json::json;

use super::support::*;

async fn new_job<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
) -> String {
    let res = app
        .send(post_json(
            "/api/progress/jobs",
            token,
            json!({"jobType": "catalog.products.import", "name": "Import", "totalCount": 200, "cancellable": true}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    res.json()["id"].as_str().unwrap().to_string()
}

#[actix_web::test]
async fn jobs_update_and_cancel_at_the_collection_path() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = new_job(&app, &admin).await;

    let res = app
        .send(put_json(
            "/api/progress/jobs",
            &admin,
            json!({"id": id, "processedCount": 50, "meta": {"step": 2}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "progressPercent": 25}));
    let job = app
        .send(get(&format!("/api/progress/jobs/{id}"), &admin))
        .await
        .json();
    assert_eq!(job["processedCount"], 50);
    assert_eq!(job["meta"], json!({"step": 2}));

    // The id may also come as ?id= on the PUT.
    let res = app
        .send(put_json(
            &format!("/api/progress/jobs?id={id}"),
            &admin,
            json!({"processedCount": 100}),
        ))
        .await;
    assert_eq!(res.json(), json!({"ok": true, "progressPercent": 50}));

    let res = app
        .send(delete(&format!("/api/progress/jobs?id={id}"), &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true}));
    let job = app
        .send(get(&format!("/api/progress/jobs/{id}"), &admin))
        .await
        .json();
    assert_eq!(job["status"], "cancelled");

    // The body form of the delete.
    let other = new_job(&app, &admin).await;
    let res = app
        .send(
            actix_web::test::TestRequest::delete()
                .uri("/api/progress/jobs")
                .insert_header(("authorization", format!("Bearer {admin}")))
                .set_json(json!({"id": other})),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}

#[actix_web::test]
async fn collection_writes_check_like_the_path_forms() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let foreign = token_for(&app.db, globex.admin).await;
    let id = new_job(&app, &admin).await;

    // No id: 400; another tenant's job: 404 (update) / 400 (cancel), as on /{id}.
    let res = app
        .send(put_json(
            "/api/progress/jobs",
            &admin,
            json!({"processedCount": 1}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(
        app.send(delete("/api/progress/jobs", &admin)).await.status,
        400
    );
    let res = app
        .send(put_json(
            "/api/progress/jobs",
            &foreign,
            json!({"id": id, "processedCount": 1}),
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(delete(&format!("/api/progress/jobs?id={id}"), &foreign))
        .await;
    assert_eq!(res.status, 400);
    // Body validation is the path form's.
    let res = app
        .send(put_json(
            "/api/progress/jobs",
            &admin,
            json!({"id": id, "progressPercent": 101}),
        ))
        .await;
    assert_eq!(res.status, 400);
    // Anonymous: 401.
    let res = app
        .send(
            actix_web::test::TestRequest::put()
                .uri("/api/progress/jobs")
                .set_json(json!({"id": id})),
        )
        .await;
    assert_eq!(res.status, 401);
}
