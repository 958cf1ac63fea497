//! Tenant isolation and organization scope, from the attacker's side.

use actix_web::test::TestRequest;
use serde_json::json;
use stoa_testkit::requests::bearer;

use super::support::*;

/// A request acting in organization `org` (`x-om-selected-org`).
fn in_org(req: TestRequest, org: uuid::Uuid) -> TestRequest {
    req.insert_header(("x-om-selected-org", org.to_string()))
}

/// Acme and Globex, with a token of each one's admin.
async fn two_tenants(db: &stoa_core::db::Db) -> (Tenant, Tenant, String, String) {
    let acme = seed(db, "Acme Corp", "acme.com").await;
    let globex = seed(db, "Globex", "globex.com").await;
    let admin = token_for(db, acme.admin).await;
    let intruder = token_for(db, globex.admin).await;
    (acme, globex, admin, intruder)
}

#[actix_web::test]
async fn another_tenants_deals_do_not_exist() {
    let app = start().await;
    let (_, _, admin, intruder) = two_tenants(&app.db).await;
    let id = deal(&app, &admin, json!({"title": "Acme's"})).await;
    assert_eq!(app.send(get(DEALS, &intruder)).await.json()["total"], 0);
    assert_eq!(
        app.send(get(&format!("{DEALS}?id={id}"), &intruder))
            .await
            .json()["total"],
        0
    );
    for req in [
        get(&format!("{DEALS}/{id}"), &intruder),
        put_json(
            &format!("{DEALS}/{id}"),
            &intruder,
            json!({"title": "Mine"}),
        ),
        put_json(DEALS, &intruder, json!({"id": id, "title": "Mine"})),
        delete(&format!("{DEALS}/{id}"), &intruder),
        delete(&format!("{DEALS}?id={id}"), &intruder),
    ] {
        let res = app.send(req).await;
        assert_eq!(res.status, 404, "{}", res.text());
    }
    assert_eq!(read(&app, &admin, id).await.unwrap()["title"], "Acme's");
}

#[actix_web::test]
async fn an_admin_limited_to_some_organizations_reaches_only_those() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let north = child_org(&app.db, &acme, "North").await;
    let south = child_org(&app.db, &acme, "South").await;
    let admin = token_for(&app.db, acme.admin).await;
    let limited = user_with_features(
        &app.db,
        &acme,
        "north@acme.com",
        &["customers.*", "progress.view"],
        Some(vec![north]),
        Some(north),
    )
    .await;
    let limited = token_for(&app.db, limited).await;

    // The unrestricted admin creates one deal in each organization.
    let create = |org, title: &str| {
        in_org(bearer(TestRequest::post(), &admin), org)
            .uri(DEALS)
            .set_json(json!({"title": title}))
    };
    let res = app.send(create(north, "North deal")).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let north_deal = id_of(&res.json());
    let res = app.send(create(south, "South deal")).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let south_deal = id_of(&res.json());

    // The limited admin sees and changes North's only.
    let list = app.send(get(DEALS, &limited)).await.json();
    assert_eq!(list["total"], 1, "{list}");
    assert_eq!(list["items"][0]["id"], north_deal.to_string());
    assert_eq!(read(&app, &limited, south_deal).await, Err(404));
    let res = app
        .send(put_json(
            &format!("{DEALS}/{south_deal}"),
            &limited,
            json!({"title": "Taken"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(
        app.send(delete(&format!("{DEALS}/{south_deal}"), &limited))
            .await
            .status,
        404
    );
    let res = app
        .send(put_json(
            &format!("{DEALS}/{north_deal}"),
            &limited,
            json!({"title": "North renamed"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    // Creating goes to its own organization; asking for another is refused.
    let res = app
        .send(post_json(DEALS, &limited, json!({"title": "Mine"})))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let mine = read(&app, &admin, id_of(&res.json())).await.unwrap();
    assert_eq!(mine["organizationId"], north.to_string());
    let res = app
        .send(
            in_org(bearer(TestRequest::post(), &limited), south)
                .uri(DEALS)
                .set_json(json!({"title": "x"})),
        )
        .await;
    assert!(
        matches!(res.status.as_u16(), 403 | 422),
        "{}: {}",
        res.status,
        res.text()
    );

    // A stage of South cannot be given to a North deal.
    let res = app
        .send(
            in_org(bearer(TestRequest::post(), &admin), south)
                .uri(PIPELINES)
                .set_json(json!({"name": "South sales"})),
        )
        .await;
    let south_pipeline = id_of(&res.json());
    let south_stage = stage(&app, &admin, south_pipeline, "Lead").await;
    let res = app
        .send(put_json(
            &format!("{DEALS}/{north_deal}"),
            &limited,
            json!({"pipelineStageId": south_stage}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());

    assert_eq!(
        read(&app, &admin, south_deal).await.unwrap()["title"],
        "South deal"
    );
}

/// Below the API's checks, the database itself keeps a deal's owner, stage
/// and pipeline in the deal's tenant (foreign keys that include tenant_id).
#[actix_web::test]
async fn the_database_refuses_another_tenants_owner_stage_and_pipeline() {
    use diesel_async::RunQueryDsl;
    let app = start().await;
    let (acme, globex, admin, intruder) = two_tenants(&app.db).await;
    let id = deal(&app, &admin, json!({"title": "Acme's"})).await;
    let pipeline = pipeline(&app, &intruder, "Globex sales").await;
    let stage = stage(&app, &intruder, pipeline, "Globex lead").await;
    for set in [
        format!("owner_user_id = '{}'", globex.admin),
        format!("pipeline_id = '{pipeline}'"),
        format!("pipeline_stage_id = '{stage}'"),
    ] {
        let mut conn = app.db.conn().await.unwrap();
        let err = diesel::sql_query(format!("UPDATE customer_deals SET {set} WHERE id = '{id}'"))
            .execute(&mut *conn)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                diesel::result::Error::DatabaseError(
                    diesel::result::DatabaseErrorKind::ForeignKeyViolation,
                    _
                )
            ),
            "{set}: {err:?}"
        );
    }
    // The tenant's own user is accepted.
    sql(
        &app.db,
        &format!(
            "UPDATE customer_deals SET owner_user_id = '{}' WHERE id = '{id}'",
            acme.admin
        ),
    )
    .await;
}
