//! One default pipeline per organization: creating or updating a pipeline
//! with `isDefault: true` unsets the previous default (recorded, undoable),
//! concurrent writes included.

use actix_web::test::TestRequest;
use serde_json::json;
use stoa_testkit::requests::bearer;

use super::support::*;

/// The ids of the default pipelines the caller sees.
async fn defaults<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
) -> Vec<String> {
    let list = app
        .send(get(&format!("{PIPELINES}?isDefault=true"), token))
        .await
        .json();
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["id"].as_str().map(String::from))
        .collect()
}

#[actix_web::test]
async fn a_new_default_unsets_the_previous_one() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let create = |name: &str, is_default: bool| {
        post_json(
            PIPELINES,
            &admin,
            json!({"name": name, "isDefault": is_default}),
        )
    };
    let res = app.send(create("Sales", true)).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let sales = id_of(&res.json());
    assert_eq!(defaults(&app, &admin).await, [sales.to_string()]);

    // Created as the default: the previous one is not any more.
    let res = app.send(create("Renewals", true)).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let renewals = id_of(&res.json());
    assert_eq!(defaults(&app, &admin).await, [renewals.to_string()]);
    // The unset is its own entry of the action log, in the same request.
    assert_eq!(
        count(
            &app.db,
            &format!(
                "SELECT count(*) AS n FROM action_logs WHERE resource_id = '{sales}' \
                 AND command_id = 'customers.pipelines.update' AND action_label = 'Unset default pipeline'"
            )
        )
        .await,
        1
    );
    // A pipeline that is not the default changes nothing of the others.
    let res = app.send(create("Spare", false)).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let spare = id_of(&res.json());
    assert_eq!(defaults(&app, &admin).await, [renewals.to_string()]);

    // Updated to be the default, in both styles.
    let res = app
        .send(put_json(
            &format!("{PIPELINES}/{sales}"),
            &admin,
            json!({"isDefault": true}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(defaults(&app, &admin).await, [sales.to_string()]);
    let res = app
        .send(put_json(
            PIPELINES,
            &admin,
            json!({"id": spare, "isDefault": true}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let update = undo_token(&res);
    assert_eq!(defaults(&app, &admin).await, [spare.to_string()]);
    // The default made the default again changes nothing.
    let res = app
        .send(put_json(
            &format!("{PIPELINES}/{spare}"),
            &admin,
            json!({"isDefault": true, "name": "Spare pipeline"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(defaults(&app, &admin).await, [spare.to_string()]);

    // Undo of that update makes Spare a plain pipeline again... after the
    // rename is undone first (undo refuses a record changed since).
    let rename = undo_token(&res);
    assert_eq!(undo(&app, &admin, &rename).await.status, 200);
    let res = undo(&app, &admin, &update).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(defaults(&app, &admin).await.is_empty());

    // Another organization keeps its own default.
    let north = child_org(&app.db, &acme, "North").await;
    let res = app
        .send(
            bearer(TestRequest::post(), &admin)
                .insert_header(("x-om-selected-org", north.to_string()))
                .uri(PIPELINES)
                .set_json(json!({"name": "North sales", "isDefault": true})),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let north_sales = id_of(&res.json());
    let res = app.send(create("Main", true)).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let main = id_of(&res.json());
    let mut both = defaults(&app, &admin).await;
    both.sort();
    let mut expected = vec![north_sales.to_string(), main.to_string()];
    expected.sort();
    assert_eq!(both, expected);
}

#[actix_web::test]
async fn concurrent_defaults_leave_one() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let creates = (0..6).map(|i| {
        app.send(post_json(
            PIPELINES,
            &admin,
            json!({"name": format!("Pipeline {i}"), "isDefault": true}),
        ))
    });
    let answers = futures_util::future::join_all(creates).await;
    for res in &answers {
        assert_eq!(res.status, 201, "{}", res.text());
    }
    assert_eq!(defaults(&app, &admin).await.len(), 1);
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM customer_pipelines WHERE is_default"
        )
        .await,
        1
    );
    // And concurrent updates of existing pipelines.
    let ids: Vec<_> = answers.iter().map(|r| id_of(&r.json())).collect();
    let updates = ids.iter().map(|id| {
        app.send(put_json(
            &format!("{PIPELINES}/{id}"),
            &admin,
            json!({"isDefault": true}),
        ))
    });
    for res in futures_util::future::join_all(updates).await {
        assert_eq!(res.status, 200, "{}", res.text());
    }
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM customer_pipelines WHERE is_default"
        )
        .await,
        1
    );
    // The database refuses a second default whatever the path.
    let mut conn = app.db.conn().await.unwrap();
    let res = diesel_async::RunQueryDsl::execute(
        diesel::sql_query(format!(
            "UPDATE customer_pipelines SET is_default = true WHERE id IN ('{}', '{}')",
            ids[0], ids[1]
        )),
        &mut *conn,
    )
    .await;
    assert!(res.is_err(), "a second default was stored");
}
