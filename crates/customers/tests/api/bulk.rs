//! The bulk jobs end to end: validation up front, progress by deals, one
//! undoable entry per changed deal, per-deal failures, guards, scope, and a
//! worker killed mid-job.

use std::sync::Arc;
use std::time::Duration;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::accounts::{Creator, CreatorResolver};
use stoa_core::AppError;
use stoa_core::command::{GuardInput, Verdict, WriteGuard};
use stoa_customers::jobs::{Change, UNIT_SIZE, run_unit, unit_key};
use stoa_jobs::{JobContext, UnitReport};
use uuid::Uuid;

use super::support::*;

const OWNER: &str = "/api/customers/deals/bulk-update-owner";
const STAGE: &str = "/api/customers/deals/bulk-update-stage";

/// Seeds `n` demo deals in the root organization; the demo stage ids.
async fn seeded(db: &stoa_core::db::Db, acme: &Tenant, n: i64) -> Vec<Uuid> {
    demo_deals(db, acme, n).await;
    let mut conn = db.conn().await.unwrap();
    stoa_customers::seed::demo_pipeline(&mut conn, acme.tenant_id, acme.organization_id)
        .await
        .unwrap()
        .1
}

#[derive(diesel::QueryableByName)]
struct IdRow {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    id: Uuid,
}

/// The tenant's deal ids, by title.
pub(super) async fn deal_ids(db: &stoa_core::db::Db, tenant: Uuid) -> Vec<Uuid> {
    use diesel_async::RunQueryDsl;
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(format!(
        "SELECT id FROM customer_deals WHERE tenant_id = '{tenant}' ORDER BY title"
    ))
    .load::<IdRow>(&mut *conn)
    .await
    .unwrap()
    .into_iter()
    .map(|r| r.id)
    .collect()
}

#[derive(diesel::QueryableByName)]
struct TokenRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    undo_token: String,
}

/// The undo token of the job's entry for `deal`.
async fn entry_token(db: &stoa_core::db::Db, command: &str, deal: Uuid) -> String {
    use diesel_async::RunQueryDsl;
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(format!(
        "SELECT undo_token FROM action_logs WHERE command_id = '{command}' AND resource_id = '{deal}'"
    ))
    .get_result::<TokenRow>(&mut *conn)
    .await
    .unwrap()
    .undo_token
}

fn failed_ids(job: &Value) -> Vec<(String, String)> {
    job["resultSummary"]["failedItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[actix_web::test]
async fn the_owner_job_reassigns_lists_failures_and_each_deal_undoes_alone() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let a = deal(&app, &admin, json!({"title": "A"})).await;
    let b = deal(
        &app,
        &admin,
        json!({"title": "B", "ownerUserId": acme.admin}),
    )
    .await;
    let c = deal(&app, &admin, json!({"title": "C"})).await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    let foreign = deal(&app, &globex_admin, json!({"title": "Globex's"})).await;
    let missing = Uuid::new_v4();

    let res = app
        .send(post_json(
            OWNER,
            &admin,
            json!({"ids": [a, b, c, a, foreign, missing], "ownerUserId": acme.employee}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ok"], true);
    assert_eq!(
        body["message"], "Bulk owner update started (5 deals).",
        "duplicates dropped"
    );
    let progress = body["progressJobId"].clone();
    let pending = job(&app, &admin, &progress).await;
    assert_eq!(pending["status"], "pending");
    assert_eq!(pending["totalCount"], 5);
    assert_eq!(pending["jobType"], "customers.deals.bulk_update_owner");

    assert!(workers(&app.db, None).run_one().await.unwrap());
    let done = job(&app, &admin, &progress).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["processedCount"], 5);
    assert_eq!(done["resultSummary"]["affectedCount"], 3);
    assert_eq!(done["resultSummary"]["failedCount"], 2);
    let failed = failed_ids(&done);
    assert!(
        failed.contains(&(foreign.to_string(), "Deal not found".into())),
        "{failed:?}"
    );
    assert!(
        failed.contains(&(missing.to_string(), "Deal not found".into())),
        "{failed:?}"
    );

    for id in [a, b, c] {
        assert_eq!(
            read(&app, &admin, id).await.unwrap()["ownerUserId"],
            acme.employee.to_string()
        );
    }
    assert!(read(&app, &globex_admin, foreign).await.unwrap()["ownerUserId"].is_null());
    let entries = count(
        &app.db,
        "SELECT count(*) AS n FROM action_logs WHERE command_id = 'customers.deals.bulk_update_owner' \
         AND actor_user_id IS NOT NULL",
    )
    .await;
    assert_eq!(entries, 3, "one entry per changed deal, naming the creator");
    assert_eq!(
        stoa_testkit::outbox_events_named(&app.db, "customers.deal.updated")
            .await
            .len(),
        3,
        "one updated event per changed deal"
    );

    // Undo of one item puts back that deal's owner only.
    let token = entry_token(&app.db, "customers.deals.bulk_update_owner", b).await;
    let res = undo(&app, &admin, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        read(&app, &admin, b).await.unwrap()["ownerUserId"],
        acme.admin.to_string()
    );
    assert_eq!(
        read(&app, &admin, a).await.unwrap()["ownerUserId"],
        acme.employee.to_string()
    );

    // `null` clears owners.
    let res = app
        .send(post_json(
            OWNER,
            &admin,
            json!({"ids": [a], "ownerUserId": null}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert!(workers(&app.db, None).run_one().await.unwrap());
    assert!(read(&app, &admin, a).await.unwrap()["ownerUserId"].is_null());
}

#[actix_web::test]
async fn the_stage_job_moves_units_of_deals_with_progress_by_deals() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let stages = seeded(&app.db, &acme, 1_200).await;
    let admin = token_for(&app.db, acme.admin).await;
    let ids = deal_ids(&app.db, acme.tenant_id).await;
    let won = stages[4];
    let already = count(
        &app.db,
        &format!("SELECT count(*) AS n FROM customer_deals WHERE pipeline_stage_id = '{won}'"),
    )
    .await;
    // An old stamp on every deal: the job sets updated_at itself (the
    // trigger only runs when a write leaves it as it was).
    sql(
        &app.db,
        "UPDATE customer_deals SET updated_at = '2020-01-01T00:00:00Z'",
    )
    .await;
    let res = app
        .send(post_json(
            STAGE,
            &admin,
            json!({"ids": ids, "pipelineStageId": won}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(
        res.json()["message"],
        "Bulk stage update started (1200 deals)."
    );
    let progress = res.json()["progressJobId"].clone();
    assert!(workers(&app.db, None).run_one().await.unwrap());
    let done = job(&app, &admin, &progress).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        (&done["processedCount"], &done["progressPercent"]),
        (&json!(1200), &json!(100))
    );
    assert_eq!(done["resultSummary"]["affectedCount"], 1200);
    assert_eq!(done["resultSummary"]["failedCount"], 0);
    assert_eq!(
        count(&app.db, &format!("SELECT count(*) AS n FROM customer_deals WHERE pipeline_stage_id = '{won}' AND pipeline_stage = 'Won'")).await,
        1200
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM action_logs WHERE command_id = 'customers.deals.bulk_update_stage'").await,
        1200 - already,
        "deals already in the stage are not logged"
    );
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM customer_deals WHERE updated_at > '2020-01-01T00:00:00Z'"
        )
        .await,
        1200 - already,
        "moved deals are stamped, the others are not"
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM job_units").await,
        (1200 + UNIT_SIZE as i64 - 1) / UNIT_SIZE as i64
    );
    assert_eq!(
        stoa_testkit::outbox_events_named(&app.db, "customers.deal.stage_changed")
            .await
            .len() as i64,
        1200 - already
    );

    // Undo of one item: `Deal 0000001` goes back to its stage (Qualified) alone.
    let first = ids[0];
    let token = entry_token(&app.db, "customers.deals.bulk_update_stage", first).await;
    let res = undo(&app, &admin, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let back = read(&app, &admin, first).await.unwrap();
    assert_eq!(back["pipelineStageId"], stages[1].to_string());
    assert_eq!(back["pipelineStage"], "Qualified");
    let still =
        format!("SELECT count(*) AS n FROM customer_deals WHERE pipeline_stage_id = '{won}'");
    assert_eq!(count(&app.db, &still).await, 1199);
}

/// Refuses moving deals whose title ends in `3` (a business rule).
struct NoThrees;

impl WriteGuard for NoThrees {
    fn id(&self) -> &str {
        "test.no_threes"
    }
    fn applies_to(&self, command_id: &str, _: Option<Uuid>) -> bool {
        command_id.starts_with("customers.deals.")
    }
    fn check<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        input: &'a GuardInput<'a>,
    ) -> BoxFuture<'a, Result<Verdict, AppError>> {
        let refused = input
            .after()
            .and_then(|a| a["title"].as_str())
            .is_some_and(|t| t.ends_with('3'));
        Box::pin(async move {
            Ok(if refused {
                Verdict::Refuse("threes stay put".into())
            } else {
                Verdict::Allow
            })
        })
    }
}

#[actix_web::test]
async fn a_guard_refuses_some_deals_which_stay_as_they_were() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let stages = seeded(&app.db, &acme, 40).await;
    let admin = token_for(&app.db, acme.admin).await;
    let ids = deal_ids(&app.db, acme.tenant_id).await;
    let lost = stages[5];
    let res = app
        .send(post_json(
            STAGE,
            &admin,
            json!({"ids": ids, "pipelineStageId": lost}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let progress = res.json()["progressJobId"].clone();
    assert!(
        workers(&app.db, Some(Arc::new(NoThrees)))
            .run_one()
            .await
            .unwrap()
    );
    let done = job(&app, &admin, &progress).await;
    assert_eq!(done["status"], "completed", "{done}");
    // Titles Deal 0000003, ...13, ...23, ...33 end in 3; deal 0000023
    // (i % 6 == 5) was already Lost, so it is not changed nor asked about.
    let threes = count(
        &app.db,
        &format!("SELECT count(*) AS n FROM customer_deals WHERE title LIKE '%3' AND pipeline_stage_id <> '{lost}'"),
    )
    .await;
    assert_eq!(threes, 3, "the refused deals keep their stage");
    assert_eq!(done["resultSummary"]["failedCount"], 3);
    for (_, message) in failed_ids(&done) {
        assert!(
            message.contains("test.no_threes") && message.contains("threes stay put"),
            "{message}"
        );
    }
    assert_eq!(
        count(&app.db, &format!("SELECT count(*) AS n FROM customer_deals WHERE title NOT LIKE '%3' AND pipeline_stage_id <> '{lost}'")).await,
        0
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM action_logs WHERE command_id = 'customers.deals.bulk_update_stage' \
                         AND snapshot_after->>'title' LIKE '%3'").await,
        0,
        "no entry for a refused deal"
    );
}

#[actix_web::test]
async fn a_worker_killed_mid_job_leaves_whole_units_and_the_job_completes_once() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let stages = seeded(&app.db, &acme, 1_300).await;
    let admin = token_for(&app.db, acme.admin).await;
    let ids = deal_ids(&app.db, acme.tenant_id).await;
    let target = stages[2];
    let already = count(
        &app.db,
        &format!("SELECT count(*) AS n FROM customer_deals WHERE pipeline_stage_id = '{target}'"),
    )
    .await;
    let res = app
        .send(post_json(
            STAGE,
            &admin,
            json!({"ids": ids, "pipelineStageId": target}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let progress = res.json()["progressJobId"].clone();

    // A first worker claims the job, finishes its first unit and dies.
    let crashed = workers(&app.db, None);
    let claimed = crashed.claim().await.unwrap().unwrap();
    let scope = claimed.scope().unwrap();
    let first: Vec<Uuid> = ids[..UNIT_SIZE].to_vec();
    let ctx = JobContext::new(app.db.clone(), claimed).with_records(stoa_progress::records());
    let ran = ctx
        .unit(
            &unit_key(0),
            first.len(),
            Box::new(move |conn| {
                Box::pin(async move {
                    let creator = stoa_auth::PgCreators::new()
                        .resolve_creator(
                            conn,
                            Creator {
                                tenant_id: scope.tenant_id,
                                organization_id: scope.organization_id,
                                user_id: scope.user_id,
                                api_key_id: scope.api_key_id,
                            },
                        )
                        .await
                        .unwrap()
                        .unwrap();
                    let report: UnitReport = run_unit(
                        conn,
                        &creator,
                        users().as_ref(),
                        Change::Stage(target),
                        first,
                    )
                    .await?;
                    Ok(report)
                })
            }),
        )
        .await
        .unwrap();
    assert!(ran.ran);
    drop(ctx);
    drop(crashed);
    let halfway = job(&app, &admin, &progress).await;
    assert_eq!(
        halfway["processedCount"], UNIT_SIZE,
        "progress by deals: {halfway}"
    );
    assert_ne!(halfway["status"], "completed");

    // Its lease lapses; another worker takes the job over and skips unit 0.
    let rescuer = workers(&app.db, None);
    assert!(!rescuer.run_one().await.unwrap(), "the lease still holds");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(rescuer.run_one().await.unwrap());
    let done = job(&app, &admin, &progress).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["processedCount"], 1_300);
    assert_eq!(
        count(
            &app.db,
            &format!(
                "SELECT count(*) AS n FROM customer_deals WHERE pipeline_stage_id = '{target}'"
            )
        )
        .await,
        1_300
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM action_logs WHERE command_id = 'customers.deals.bulk_update_stage'").await,
        1_300 - already,
        "each deal changed and logged exactly once"
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM job_units").await,
        (1_300 + UNIT_SIZE as i64 - 1) / UNIT_SIZE as i64
    );
    assert!(!rescuer.run_one().await.unwrap(), "nothing left to run");
}

#[actix_web::test]
async fn an_admin_limited_to_some_organizations_moves_only_their_deals() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let north = child_org(&app.db, &acme, "North").await;
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
    let root_deal = deal(&app, &admin, json!({"title": "Root"})).await;
    let north_deal = deal(&app, &limited, json!({"title": "North"})).await;
    let res = app
        .send(post_json(
            OWNER,
            &limited,
            json!({"ids": [root_deal, north_deal], "ownerUserId": acme.employee}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let progress = res.json()["progressJobId"].clone();
    assert!(workers(&app.db, None).run_one().await.unwrap());
    let done = job(&app, &limited, &progress).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        failed_ids(&done),
        vec![(root_deal.to_string(), "Deal not found".to_string())]
    );
    assert!(read(&app, &admin, root_deal).await.unwrap()["ownerUserId"].is_null());
    assert_eq!(
        read(&app, &admin, north_deal).await.unwrap()["ownerUserId"],
        acme.employee.to_string()
    );
}

#[actix_web::test]
async fn the_creator_demoted_before_the_job_runs_changes_nothing() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let seller = user_with_features(
        &app.db,
        &acme,
        "seller@acme.com",
        &["customers.*", "progress.view"],
        None,
        None,
    )
    .await;
    let token = token_for(&app.db, seller).await;
    let id = deal(&app, &admin, json!({"title": "Kept"})).await;
    let res = app
        .send(post_json(
            OWNER,
            &token,
            json!({"ids": [id], "ownerUserId": acme.employee}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let progress = res.json()["progressJobId"].clone();
    sql(
        &app.db,
        &format!(
            "UPDATE role_acls SET features = ARRAY['progress.view'] \
             WHERE role_id IN (SELECT role_id FROM user_roles WHERE user_id = '{seller}')"
        ),
    )
    .await;
    assert!(workers(&app.db, None).run_one().await.unwrap());
    let done = job(&app, &admin, &progress).await;
    assert_eq!(done["resultSummary"]["failedCount"], 1, "{done}");
    assert!(read(&app, &admin, id).await.unwrap()["ownerUserId"].is_null());
}

#[actix_web::test]
async fn bad_bulk_requests_are_refused_up_front_and_queue_nothing() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = deal(&app, &admin, json!({"title": "x"})).await;
    let sales = pipeline(&app, &admin, "Sales").await;
    let lead = stage(&app, &admin, sales, "Lead").await;
    let globex_token = token_for(&app.db, globex.admin).await;
    let globex_pipeline = pipeline(&app, &globex_token, "Theirs").await;
    let globex_stage = stage(&app, &globex_token, globex_pipeline, "Lead").await;
    let too_many: Vec<Uuid> = (0..10_001).map(|_| Uuid::new_v4()).collect();
    let cases = [
        (OWNER, json!({"ids": [], "ownerUserId": null}), None),
        (OWNER, json!({"ids": ["nope"], "ownerUserId": null}), None),
        (OWNER, json!({"ids": too_many, "ownerUserId": null}), None),
        (OWNER, json!({"ids": [id]}), None),
        (OWNER, json!({"ids": [id], "ownerUserId": "nope"}), None),
        (
            OWNER,
            json!({"ids": [id], "ownerUserId": Uuid::new_v4()}),
            Some("Owner not found in this tenant"),
        ),
        (
            OWNER,
            json!({"ids": [id], "ownerUserId": globex.admin}),
            Some("Owner not found in this tenant"),
        ),
        (STAGE, json!({"ids": [], "pipelineStageId": lead}), None),
        (
            STAGE,
            json!({"ids": ["nope"], "pipelineStageId": lead}),
            None,
        ),
        (STAGE, json!({"ids": [id], "pipelineStageId": "nope"}), None),
        (
            STAGE,
            json!({"ids": [id], "pipelineStageId": Uuid::new_v4()}),
            Some("Pipeline stage not found"),
        ),
        (
            STAGE,
            json!({"ids": [id], "pipelineStageId": globex_stage}),
            Some("Pipeline stage not found"),
        ),
    ];
    for (path, body, message) in cases {
        let res = app.send(post_json(path, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{path} {body}: {}", res.text());
        if let Some(message) = message {
            let got = res.json();
            assert_eq!(got["message"], message, "{got}");
            assert_eq!(got["ok"], false);
            assert!(got["progressJobId"].is_null());
        }
    }
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
    let res = app
        .send(post_json(
            OWNER,
            &viewer,
            json!({"ids": [id], "ownerUserId": null}),
        ))
        .await;
    // The access matrix's 403 and 401 come in the bulk envelope too, with
    // the declared features.
    assert_eq!(res.status, 403);
    let got = res.json();
    assert_eq!(
        (
            &got["ok"],
            &got["progressJobId"],
            &got["message"],
            &got["error"]
        ),
        (
            &json!(false),
            &json!(null),
            &json!("Forbidden"),
            &json!("Forbidden")
        ),
        "{got}"
    );
    assert_eq!(got["requiredFeatures"], json!(["customers.deals.manage"]));
    let res = app
        .send(post_json(
            STAGE,
            &viewer,
            json!({"ids": [id], "pipelineStageId": lead}),
        ))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["progressJobId"], json!(null));
    assert_eq!(
        res.json()["requiredFeatures"],
        json!(["customers.deals.manage"])
    );
    for path in [OWNER, STAGE] {
        let res = app
            .send(
                actix_web::test::TestRequest::post()
                    .uri(path)
                    .set_json(json!({"ids": [id], "ownerUserId": null, "pipelineStageId": lead})),
            )
            .await;
        assert_eq!(res.status, 401, "{path}");
        let got = res.json();
        assert_eq!(
            (
                &got["ok"],
                &got["progressJobId"],
                &got["message"],
                &got["error"]
            ),
            (
                &json!(false),
                &json!(null),
                &json!("Unauthorized"),
                &json!("Unauthorized")
            ),
            "{path}: {got}"
        );
    }
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM progress_jobs").await,
        0
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM job_queue").await,
        0
    );
}
