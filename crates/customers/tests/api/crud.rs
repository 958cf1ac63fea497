//! Deal CRUD through HTTP: both styles, every documented status.

use actix_web::test::TestRequest;
use serde_json::json;
use stoa_testkit::requests::bearer;

use super::support::*;

#[actix_web::test]
async fn a_deal_is_created_read_updated_and_deleted_in_both_styles() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let sales = pipeline(&app, &admin, "Sales").await;
    let lead = stage(&app, &admin, sales, "Lead").await;
    let won = stage(&app, &admin, sales, "Won").await;

    let id = deal(
        &app,
        &admin,
        json!({"title": "  Big order ", "pipelineStageId": lead, "valueAmount": "1250.50",
               "valueCurrency": "EUR", "probability": 40, "expectedCloseAt": "2026-12-31",
               "ownerUserId": acme.employee, "source": "web", "unknownKey": 1}),
    )
    .await;
    let detail = app.send(get(&format!("{DEALS}/{id}"), &admin)).await;
    assert_eq!(detail.status, 200, "{}", detail.text());
    let body = detail.json();
    let d = &body["deal"];
    assert_eq!(d["title"], "Big order");
    assert_eq!(d["status"], "open");
    assert_eq!(d["pipelineId"], sales.to_string());
    assert_eq!(d["pipelineStage"], "Lead", "the stage's label is copied");
    assert_eq!(d["valueAmount"], "1250.5");
    assert_eq!(d["valueCurrency"], "EUR");
    assert_eq!(d["expectedCloseAt"], "2026-12-31T00:00:00.000Z");
    assert_eq!(d["organizationId"], acme.organization_id.to_string());
    assert_eq!(body["pipelineName"], "Sales");
    assert_eq!(body["pipelineStages"].as_array().unwrap().len(), 2);
    assert_eq!(body["owner"]["id"], acme.employee.to_string());

    // PUT /{id}: partial; `null` clears.
    let res = app
        .send(put_json(
            &format!("{DEALS}/{id}"),
            &admin,
            json!({"pipelineStageId": won, "status": "won", "probability": null}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true}));
    assert!(res.operation().unwrap().undo_token.is_some());
    let d = read(&app, &admin, id).await.unwrap();
    assert_eq!(
        (d["pipelineStage"].as_str(), d["status"].as_str()),
        (Some("Won"), Some("won"))
    );
    assert!(d["probability"].is_null());
    assert_eq!(d["title"], "Big order", "absent fields keep");

    // The collection style: PUT {id, ...} and DELETE ?id=.
    let res = app
        .send(put_json(
            DEALS,
            &admin,
            json!({"id": id, "title": "Renamed"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(read(&app, &admin, id).await.unwrap()["title"], "Renamed");
    let res = app.send(delete(&format!("{DEALS}?id={id}"), &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(read(&app, &admin, id).await, Err(404));
    assert_eq!(
        count(
            &app.db,
            &format!("SELECT count(*) AS n FROM customer_deals WHERE id = '{id}'")
        )
        .await,
        0,
        "deleted for good"
    );

    // DELETE /{id} on a second deal.
    let other = deal(&app, &admin, json!({"title": "Second"})).await;
    let res = app.send(delete(&format!("{DEALS}/{other}"), &admin)).await;
    assert_eq!(res.status, 200);
    assert_eq!(
        app.send(delete(&format!("{DEALS}/{other}"), &admin))
            .await
            .status,
        404
    );
}

#[actix_web::test]
async fn bad_input_is_a_clear_400_and_changes_nothing() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let sales = pipeline(&app, &admin, "Sales").await;
    let other = pipeline(&app, &admin, "Other").await;
    let lead = stage(&app, &admin, sales, "Lead").await;
    let cases = [
        (json!({"title": ""}), "title"),
        (
            json!({"title": "x", "valueAmount": "12.345678", "valueCurrency": "EUR"}),
            "valueAmount",
        ),
        (
            json!({"title": "x", "valueAmount": "abc", "valueCurrency": "EUR"}),
            "valueAmount",
        ),
        (
            json!({"title": "x", "valueAmount": "-5", "valueCurrency": "EUR"}),
            "valueAmount",
        ),
        (
            json!({"title": "x", "valueCurrency": "euro"}),
            "valueCurrency",
        ),
        (json!({"title": "x", "probability": 101}), "probability"),
        (
            json!({"title": "x", "closureOutcome": "maybe"}),
            "closureOutcome",
        ),
        (
            json!({"title": "x", "expectedCloseAt": "soon"}),
            "expectedCloseAt",
        ),
        (
            json!({"title": "x", "pipelineStageId": "not-a-uuid"}),
            "pipelineStageId",
        ),
    ];
    for (body, field) in cases {
        let res = app.send(post_json(DEALS, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        let text = res.text();
        assert!(text.contains(field), "{body}: names {field}: {text}");
    }
    let refused = [
        (
            json!({"title": "x", "valueAmount": "10"}),
            "valueCurrency is required with valueAmount",
        ),
        (
            json!({"title": "x", "pipelineStageId": uuid::Uuid::new_v4()}),
            "Pipeline stage not found",
        ),
        (
            json!({"title": "x", "pipelineStageId": lead, "pipelineId": other}),
            "Pipeline stage does not belong to the selected pipeline",
        ),
        (
            json!({"title": "x", "ownerUserId": globex.admin}),
            "Owner not found in this tenant",
        ),
        (
            json!({"title": "x", "ownerUserId": uuid::Uuid::new_v4()}),
            "Owner not found in this tenant",
        ),
    ];
    for (body, message) in refused {
        let res = app.send(post_json(DEALS, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        assert_eq!(res.json()["error"], message, "{body}");
    }
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM customer_deals").await,
        0
    );

    // Ids: malformed in the path, missing in the collection form.
    let id = deal(&app, &admin, json!({"title": "Kept"})).await;
    assert_eq!(
        app.send(get(&format!("{DEALS}/nope"), &admin)).await.status,
        400
    );
    assert_eq!(app.send(delete(DEALS, &admin)).await.status, 400);
    assert_eq!(
        app.send(put_json(DEALS, &admin, json!({"title": "y"})))
            .await
            .status,
        400
    );
    let res = app
        .send(put_json(
            &format!("{DEALS}/{id}"),
            &admin,
            json!({"valueAmount": "1e99"}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(read(&app, &admin, id).await.unwrap()["title"], "Kept");
}

#[actix_web::test]
async fn the_optimistic_lock_header_is_honoured() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = deal(&app, &admin, json!({"title": "Locked"})).await;
    let current = read(&app, &admin, id).await.unwrap()["updatedAt"]
        .as_str()
        .unwrap()
        .to_string();
    let header = "x-om-ext-optimistic-lock-expected-updated-at";
    let stale = "2020-01-01T00:00:00Z";
    let put = |at: &str| {
        bearer(TestRequest::put(), &admin)
            .uri(&format!("{DEALS}/{id}"))
            .insert_header((header, at.to_string()))
            .set_json(json!({"title": "Changed"}))
    };
    let res = app.send(put(stale)).await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(res.json()["code"], "optimistic_lock_conflict");
    assert_eq!(app.send(put("yesterday")).await.status, 400);
    let gone = bearer(TestRequest::delete(), &admin)
        .uri(&format!("{DEALS}/{id}"))
        .insert_header((header, stale));
    assert_eq!(app.send(gone).await.status, 409);
    assert_eq!(read(&app, &admin, id).await.unwrap()["title"], "Locked");
    let res = app.send(put(&current)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(read(&app, &admin, id).await.unwrap()["title"], "Changed");
}

#[actix_web::test]
async fn callers_without_the_feature_or_a_token_are_refused() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = deal(&app, &admin, json!({"title": "Guarded"})).await;
    let viewer = user_with_features(
        &app.db,
        &acme,
        "viewer@acme.com",
        &["customers.deals.view"],
        None,
        None,
    )
    .await;
    let viewer = token_for(&app.db, viewer).await;
    let nobody = user_with_features(&app.db, &acme, "nobody@acme.com", &[], None, None).await;
    let nobody = token_for(&app.db, nobody).await;

    assert_eq!(app.send(get(DEALS, &viewer)).await.status, 200);
    assert_eq!(
        app.send(get(&format!("{DEALS}/{id}"), &viewer))
            .await
            .status,
        200
    );
    for req in [
        post_json(DEALS, &viewer, json!({"title": "x"})),
        put_json(&format!("{DEALS}/{id}"), &viewer, json!({"title": "x"})),
        put_json(DEALS, &viewer, json!({"id": id, "title": "x"})),
        delete(&format!("{DEALS}/{id}"), &viewer),
        delete(&format!("{DEALS}?id={id}"), &viewer),
        post_json(PIPELINES, &viewer, json!({"name": "x"})),
    ] {
        assert_eq!(app.send(req).await.status, 403);
    }
    assert_eq!(app.send(get(DEALS, &nobody)).await.status, 403);
    assert_eq!(
        app.send(get(&format!("{DEALS}/{id}"), &nobody))
            .await
            .status,
        403
    );
    assert_eq!(app.get(DEALS).await.status, 401);
    assert_eq!(read(&app, &admin, id).await.unwrap()["title"], "Guarded");
}

/// Issue 50: a form saved with what it read comes back unchanged, and the
/// `updatedAt` it was given (milliseconds) passes the optimistic lock; the
/// microseconds an older client kept pass too, an older time does not.
#[actix_web::test]
async fn an_edit_with_the_updated_at_it_was_given_passes_the_lock() {
    use time::format_description::well_known::Rfc3339;
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = deal(
        &app,
        &admin,
        json!({"title": "Form", "expectedCloseAt": "2026-12-31T10:20:30.456Z", "probability": 10}),
    )
    .await;
    let header = "x-om-ext-optimistic-lock-expected-updated-at";
    let put = |at: &str, body: serde_json::Value| {
        bearer(TestRequest::put(), &admin)
            .uri(&format!("{DEALS}/{id}"))
            .insert_header((header, at.to_string()))
            .set_json(body)
    };
    let form = read(&app, &admin, id).await.unwrap();
    let given = form["updatedAt"].as_str().unwrap().to_string();
    assert!(stoa_testkit::is_canonical_timestamp(&given), "{given}");
    assert_eq!(form["expectedCloseAt"], "2026-12-31T10:20:30.456Z");
    let res = app
        .send(put(
            &given,
            json!({"title": form["title"], "expectedCloseAt": form["expectedCloseAt"],
                   "probability": 20}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let saved = read(&app, &admin, id).await.unwrap();
    assert_eq!(
        saved["expectedCloseAt"], form["expectedCloseAt"],
        "no change"
    );
    assert_eq!(saved["createdAt"], form["createdAt"]);
    assert_eq!(saved["probability"], 20);

    // The stored version carries microseconds; an older client sends them.
    let micros = count(
        &app.db,
        &format!(
            "SELECT (extract(epoch FROM updated_at) * 1000000)::bigint AS n \
             FROM customer_deals WHERE id = '{id}'"
        ),
    )
    .await;
    let stored =
        time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1000).unwrap();
    let given = saved["updatedAt"].as_str().unwrap().to_string();
    assert_eq!(given, stoa_core::serde_util::timestamp::format(stored));
    let older = stoa_core::serde_util::timestamp::format(stored - time::Duration::MILLISECOND);
    let res = app.send(put(&older, json!({"probability": 30}))).await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(res.json()["code"], "optimistic_lock_conflict");
    assert_eq!(res.json()["currentUpdatedAt"], given.as_str());
    assert_eq!(res.json()["expectedUpdatedAt"], older.as_str());
    let old_style = stored.format(&Rfc3339).unwrap();
    // The next version falls in a later millisecond.
    std::thread::sleep(std::time::Duration::from_millis(2));
    let res = app.send(put(&old_style, json!({"probability": 30}))).await;
    assert_eq!(res.status, 200, "{old_style}: {}", res.text());
    assert_eq!(read(&app, &admin, id).await.unwrap()["probability"], 30);
    // Now stale, in either precision.
    let res = app.send(put(&old_style, json!({"probability": 40}))).await;
    assert_eq!(res.status, 409, "{}", res.text());
    let res = app.send(put(&given, json!({"probability": 40}))).await;
    assert_eq!(res.status, 409, "{}", res.text());
}
