//! `POST /catalog/bulk-delete` end to end: validation in the bulk envelope,
//! the job acting as its creator unit by unit, the action log and undo of
//! one item, the first failure ending the job, a guard refusing, and a
//! worker killed mid-job completing exactly once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_catalog::bulk::UNIT_SIZE;
use stoa_core::AppError;
use stoa_core::command::{GuardInput, Verdict, WriteGuard};
use stoa_core::db::Db;
use tokio::sync::Notify;
use uuid::Uuid;

use super::support::*;

#[derive(diesel::QueryableByName)]
struct Entry {
    #[diesel(sql_type = diesel::sql_types::Text)]
    resource_id: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Uuid>)]
    actor_user_id: Option<Uuid>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Uuid>)]
    organization_id: Option<Uuid>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    undo_token: Option<String>,
}

/// The action log's product deletions.
async fn deletions(db: &Db) -> Vec<Entry> {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(
        "SELECT resource_id, actor_user_id, organization_id, undo_token FROM action_logs \
         WHERE command_id = 'catalog.products.delete' ORDER BY resource_id",
    )
    .load(&mut *conn)
    .await
    .unwrap()
}

#[actix_web::test]
async fn a_bulk_delete_runs_as_a_job_logs_each_product_and_undoes_one() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let branch = child_org(&app.db, &acme, "Branch").await;
    let mut ids = insert_products(&app.db, &acme, acme.organization_id, "Root", 1000).await;
    ids.extend(insert_products(&app.db, &acme, branch, "Branch", 200).await);
    let kept = insert_products(&app.db, &acme, acme.organization_id, "Kept", 3).await;
    // Duplicates are dropped.
    let mut sent = ids.clone();
    sent.extend_from_slice(&ids[..10]);
    let job_id = bulk_delete(&app, &admin, &sent).await;

    let queued = job(&app, &admin, job_id).await;
    assert_eq!(queued["status"], "pending");
    assert_eq!(queued["jobType"], "catalog.products.bulk_delete");
    assert_eq!(queued["name"], "Delete selected products");
    assert_eq!(queued["totalCount"], 1200);
    assert_eq!(
        queued["description"],
        "1200 catalog products queued for deletion"
    );
    assert_eq!(queued["meta"]["scope"], "selected");
    run_jobs(&app.db).await;
    let done = job(&app, &admin, job_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["processedCount"], 1200);
    assert_eq!(done["progressPercent"], 100);
    assert_eq!(done["resultSummary"]["affectedCount"], 1200);
    assert_eq!(done["resultSummary"]["failedCount"], 0);

    // Every named product is gone; the others stay.
    assert_eq!(product_count(&app.db).await, 3);
    for id in &kept {
        assert!(product(&app, &admin, *id).await.is_some());
    }
    // One entry per product, by the creator, in the product's organization.
    let entries = deletions(&app.db).await;
    assert_eq!(entries.len(), 1200);
    // By the creator, in the job's organization (where its undo looks).
    assert!(
        entries.iter().all(|e| e.actor_user_id == Some(acme.admin)
            && e.organization_id == Some(acme.organization_id))
    );
    let entry_of = |id: Uuid| {
        entries
            .iter()
            .find(|e| e.resource_id == id.to_string())
            .unwrap()
    };
    let branch_id = ids[1100];
    let branch_entry = entry_of(branch_id);
    let events = stoa_testkit::outbox_events_named(&app.db, "catalog.product.deleted").await;
    assert_eq!(events.len(), 1200);
    assert!(
        events
            .iter()
            .all(|e| e["tenantId"] == acme.tenant_id.to_string())
    );
    let branch_event = events
        .iter()
        .find(|e| e["payload"]["id"] == branch_id.to_string())
        .unwrap();
    assert_eq!(
        branch_event["payload"]["organizationId"],
        branch.to_string()
    );

    // Undo of one item puts that product back, as it was.
    let res = undo(&app, &admin, branch_entry.undo_token.as_deref().unwrap()).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let back = product(&app, &admin, branch_id).await.unwrap();
    assert_eq!(back["organization_id"], branch.to_string());
    assert_eq!(back["title"], "Branch-000101");
    assert_eq!(product_count(&app.db).await, 4);
}

#[actix_web::test]
async fn bad_bulk_requests_are_400_in_the_bulk_envelope_and_queue_nothing() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = Uuid::new_v4();
    let too_many: Vec<Uuid> = (0..10_001).map(|_| Uuid::new_v4()).collect();
    let cases = [
        (json!({"ids": [id], "scope": "selected"}), "confirm"),
        (
            json!({"confirm": false, "ids": [id], "scope": "selected"}),
            "confirm",
        ),
        (
            json!({"confirm": "yes", "ids": [id], "scope": "selected"}),
            "confirm",
        ),
        (
            json!({"confirm": true, "ids": [], "scope": "selected"}),
            "ids",
        ),
        (
            json!({"confirm": true, "ids": too_many, "scope": "selected"}),
            "ids",
        ),
        (
            json!({"confirm": true, "ids": ["nope"], "scope": "selected"}),
            "ids",
        ),
        (json!({"confirm": true, "scope": "selected"}), "ids"),
        (
            json!({"confirm": true, "ids": [id], "scope": "all"}),
            "scope",
        ),
        (json!({"confirm": true, "ids": [id]}), "scope"),
    ];
    for (body, field) in cases {
        let res = app.send(post_json(BULK, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{field}: {}", res.text());
        let json = res.json();
        assert_eq!(
            (&json["ok"], &json["progressJobId"], &json["message"]),
            (&json!(false), &json!(null), &json!("Invalid payload")),
            "{field}: {json}"
        );
        let named = json["issues"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["path"][0] == field);
        assert!(named, "{field} not named: {json}");
    }
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM progress_jobs").await,
        0
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM job_queue").await,
        0
    );
    // `filtered` is accepted and named in the job.
    let res = app
        .send(post_json(
            BULK,
            &admin,
            json!({"confirm": true, "ids": [id], "scope": "filtered"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let job_id: Uuid = res.json()["progressJobId"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        job(&app, &admin, job_id).await["name"],
        "Delete filtered products"
    );
}

#[actix_web::test]
async fn the_first_product_that_cannot_be_deleted_ends_the_job_keeping_earlier_units() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let ids = insert_products(&app.db, &acme, acme.organization_id, "P", 1200).await;
    let missing = Uuid::new_v4();
    // Unit 0: ids 0..500; unit 1: ids 500..999 then the missing one; unit 2: the rest.
    let mut sent = ids[..999].to_vec();
    sent.push(missing);
    sent.extend_from_slice(&ids[999..]);
    let job_id = bulk_delete(&app, &admin, &sent).await;
    run_jobs(&app.db).await;
    let failed = job(&app, &admin, job_id).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(
        failed["errorMessage"],
        format!("Product {missing} not found"),
        "{failed}"
    );
    assert_eq!(failed["processedCount"], UNIT_SIZE);
    // Unit 0 stays deleted; unit 1 rolled back whole; unit 2 never ran.
    assert_eq!(product_count(&app.db).await, 1200 - UNIT_SIZE as i64);
    assert!(product(&app, &admin, ids[0]).await.is_none());
    assert!(product(&app, &admin, ids[500]).await.is_some());
    assert!(product(&app, &admin, ids[1199]).await.is_some());
    assert_eq!(deletions(&app.db).await.len(), UNIT_SIZE);
    // Failed for good: no retry is queued.
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM job_queue WHERE status = 'dead'"
        )
        .await,
        1
    );
}

#[actix_web::test]
async fn a_guard_refusing_one_product_ends_the_job_with_its_message() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let ids = insert_products(&app.db, &acme, acme.organization_id, "P", 600).await;
    sql(
        &app.db,
        &format!(
            "UPDATE catalog_products SET title = 'Protected urn' WHERE id = '{}'",
            ids[550]
        ),
    )
    .await;
    let job_id = bulk_delete(&app, &admin, &ids).await;
    run_jobs(&app.db).await;
    let failed = job(&app, &admin, job_id).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed["errorMessage"]
            .as_str()
            .unwrap()
            .contains("Protected products stay"),
        "{failed}"
    );
    assert_eq!(product_count(&app.db).await, 100);
    assert!(product(&app, &admin, ids[550]).await.is_some());
}

/// Blocks forever on the first product of the second unit while `armed`:
/// the worker running the job is killed there.
struct Stall {
    calls: AtomicUsize,
    armed: AtomicBool,
    reached: Arc<Notify>,
}

impl WriteGuard for Stall {
    fn id(&self) -> &str {
        "test.stall"
    }
    fn applies_to(&self, command_id: &str, _: Option<Uuid>) -> bool {
        command_id == "catalog.products.delete"
    }
    fn check<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: &'a GuardInput<'a>,
    ) -> BoxFuture<'a, Result<Verdict, AppError>> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call == UNIT_SIZE + 1 && self.armed.swap(false, Ordering::SeqCst) {
            self.reached.notify_one();
            return Box::pin(std::future::pending());
        }
        Box::pin(async { Ok(Verdict::Allow) })
    }
}

#[actix_web::test]
async fn a_worker_killed_mid_job_is_replaced_and_every_product_is_deleted_once() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let ids = insert_products(&app.db, &acme, acme.organization_id, "P", 1200).await;
    let job_id = bulk_delete(&app, &admin, &ids).await;

    // The first worker finishes unit 0, then dies inside unit 1.
    let reached = Arc::new(Notify::new());
    let stall = Arc::new(Stall {
        calls: AtomicUsize::new(0),
        armed: AtomicBool::new(true),
        reached: reached.clone(),
    });
    let first = Arc::new(workers(&app.db, registry_with(vec![stall])));
    let running = actix_web::rt::spawn({
        let first = first.clone();
        async move { first.run_one().await }
    });
    reached.notified().await;
    running.abort();
    assert!(running.await.is_err(), "the worker was killed");
    let midway = job(&app, &admin, job_id).await;
    assert_eq!(midway["status"], "running", "{midway}");
    assert_eq!(midway["processedCount"], UNIT_SIZE, "unit 0 committed");
    assert_eq!(product_count(&app.db).await, 1200 - UNIT_SIZE as i64);

    // Its lease lapses; another worker takes the job over.
    sql(
        &app.db,
        "UPDATE job_queue SET locked_until = now() - interval '1 second'",
    )
    .await;
    run_jobs(&app.db).await;
    let done = job(&app, &admin, job_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["processedCount"], 1200, "each unit counted once");
    assert_eq!(done["resultSummary"]["affectedCount"], 1200);
    assert_eq!(product_count(&app.db).await, 0);
    let entries = deletions(&app.db).await;
    let unique: std::collections::HashSet<_> = entries.iter().map(|e| &e.resource_id).collect();
    assert_eq!(
        (entries.len(), unique.len()),
        (1200, 1200),
        "one entry per product"
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM job_units").await,
        3
    );
    assert_eq!(
        count(&app.db, "SELECT attempts::bigint AS n FROM job_queue").await,
        2
    );
}

#[actix_web::test]
async fn unauthenticated_and_forbidden_callers_get_the_bulk_envelope() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let body = json!({"confirm": true, "ids": [Uuid::new_v4()], "scope": "selected"});
    let envelope = |json: &serde_json::Value| {
        (
            json["ok"].clone(),
            json["progressJobId"].clone(),
            json["message"].clone(),
        )
    };
    // No credentials: the access matrix's 401, in the route's envelope.
    let res = app
        .send(
            actix_web::test::TestRequest::post()
                .uri(BULK)
                .set_json(body.clone()),
        )
        .await;
    assert_eq!(res.status, 401, "{}", res.text());
    let json = res.json();
    assert_eq!(
        envelope(&json),
        (json!(false), json!(null), json!("Unauthorized"))
    );
    assert_eq!(json["error"], "Unauthorized");
    // A caller without catalog.products.manage: 403 naming it, enveloped.
    let viewer = user_with_features(
        &app.db,
        &acme,
        "viewer@acme.com",
        &["catalog.products.view"],
        None,
        None,
    )
    .await;
    let viewer = token_for(&app.db, viewer).await;
    let res = app.send(post_json(BULK, &viewer, body)).await;
    assert_eq!(res.status, 403, "{}", res.text());
    let json = res.json();
    assert_eq!(
        envelope(&json),
        (json!(false), json!(null), json!("Forbidden"))
    );
    assert_eq!(json["error"], "Forbidden");
    assert_eq!(json["requiredFeatures"], json!(["catalog.products.manage"]));
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM job_queue").await,
        0
    );
}
