//! A selection only narrows (docs/security.md): an administrator restricted
//! to one branch reads, updates and cancels only that branch's jobs, whatever
//! it selects, `__all__` included.

use actix_web::test::TestRequest;
use serde_json::{Value, json};
use stoa_testkit::{AppService, TestApp};

use super::support::*;

fn all(req: TestRequest) -> TestRequest {
    req.insert_header(("x-om-selected-org", "__all__"))
}

async fn create<S: AppService>(app: &TestApp<S>, req: TestRequest) -> String {
    let res = app.send(req).await;
    assert_eq!(res.status, 201, "{}", res.text());
    res.json()["id"].as_str().unwrap().to_string()
}

fn job() -> Value {
    json!({"jobType": "catalog.products.import", "name": "Import", "cancellable": true})
}

#[actix_web::test]
async fn a_restricted_admin_under_all_reaches_only_its_organizations_jobs() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let branch =
        stoa_auth::testing::organization(&app.db, acme.tenant_id, acme.organization_id, "Branch")
            .await;
    let user = stoa_auth::testing::user_with_features(
        &app.db,
        &acme,
        "branch@acme.com",
        &["progress.*"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let restricted = token_for(&app.db, user).await;
    let admin = token_for(&app.db, acme.admin).await;

    // The tenant admin's job at the root, and the branch admin's own job.
    let hq = create(&app, post_json("/api/progress/jobs", &admin, job())).await;
    let own = create(
        &app,
        all(post_json("/api/progress/jobs", &restricted, job())),
    )
    .await;

    // Lists under `__all__` hold only the branch's job (created there: the
    // home organization, not the tenant level).
    let list = app
        .send(all(get("/api/progress/jobs", &restricted)))
        .await
        .json();
    let ids: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![own.as_str()], "{list}");
    assert_eq!(list["items"][0]["organizationId"], json!(branch));
    let active = app
        .send(all(get("/api/progress/active", &restricted)))
        .await
        .json();
    assert!(!active.to_string().contains(&hq), "{active}");

    // The root's job can be neither read, updated nor cancelled (a job out of
    // reach cannot be cancelled: 400, as for an unknown one).
    let path = format!("/api/progress/jobs/{hq}");
    for (req, status) in [
        (get(&path, &restricted), 404),
        (
            put_json(&path, &restricted, json!({"processedCount": 1})),
            404,
        ),
        (delete(&path, &restricted), 400),
        (
            delete(&format!("/api/progress/jobs?id={hq}"), &restricted),
            400,
        ),
    ] {
        let res = app.send(all(req)).await;
        assert_eq!(res.status, status, "{}", res.text());
    }
    let res = app.send(get(&path, &admin)).await;
    assert_eq!(res.json()["status"], "pending");
    assert_eq!(res.json()["processedCount"], 0);

    // Its own job it still manages.
    let res = app
        .send(all(delete(
            &format!("/api/progress/jobs/{own}"),
            &restricted,
        )))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}

/// Issue 49: a job a module enqueues for a restricted caller working under
/// `__all__` (no selected organization: a bulk deal update, a catalog bulk
/// delete) belongs to the caller's home organization, as one it creates
/// through `POST /progress/jobs` does — not to the tenant level, where it
/// was a tenant-wide record its own creator could not read.
#[actix_web::test]
async fn jobs_enqueued_under_all_belong_to_the_restricted_creators_home() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let branch =
        stoa_auth::testing::organization(&app.db, acme.tenant_id, acme.organization_id, "Branch")
            .await;
    let user = stoa_auth::testing::user_with_features(
        &app.db,
        &acme,
        "branch@acme.com",
        &["progress.*"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let caller = stoa_acl::AuthContext::for_user(acme.tenant_id, branch, user).with_acl(
        stoa_acl::ResolvedAcl {
            features: vec!["progress.*".into()],
            allowed_organization_ids: Some(vec![branch]),
            visible_organization_ids: Some(vec![branch]),
            selected_organization_id: None,
            ..Default::default()
        },
    );
    let queued = {
        let mut conn = app.db.conn().await.unwrap();
        stoa_progress::enqueue_job_with(
            &mut conn,
            &caller,
            stoa_jobs::JobSpec::new("test.bulk", json!({}), 1),
        )
        .await
        .unwrap()
    };
    let mut conn = app.db.conn().await.unwrap();
    let job = stoa_progress::service::get(&mut conn, queued.progress_job_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(job.organization_id, Some(branch));
    drop(conn);
    // Its creator reads it, under `__all__` too.
    let token = token_for(&app.db, user).await;
    let path = format!("/api/progress/jobs/{}", queued.progress_job_id);
    let res = app.send(all(get(&path, &token))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    // An unrestricted caller's job under `__all__` stays at the tenant level.
    let open = stoa_acl::AuthContext::for_user(acme.tenant_id, acme.organization_id, acme.admin)
        .with_acl(stoa_acl::ResolvedAcl {
            features: vec!["progress.*".into()],
            ..Default::default()
        });
    let mut conn = app.db.conn().await.unwrap();
    let queued = stoa_progress::enqueue_job_with(
        &mut conn,
        &open,
        stoa_jobs::JobSpec::new("test.bulk", json!({}), 1),
    )
    .await
    .unwrap();
    let job = stoa_progress::service::get(&mut conn, queued.progress_job_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(job.organization_id, None);
}
