//! The attacker's side of the organization tree: writes and undos that would
//! close a parent loop. Before the fix the rebuild made every organization on
//! the loop, and everything below it, a tenant root: whole branches fell out
//! of the tree (and out of the scope of the admins restricted to them).

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_directory::schema::organizations;
use uuid::Uuid;

use super::support::*;

const ORGS: &str = "/api/directory/organizations";
const UNDO: &str = "/api/audit_logs/audit-logs/actions/undo";

async fn create<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    body: Value,
) -> Uuid {
    let res = app.send(post_json(ORGS, token, body.clone())).await;
    assert_eq!(res.status, 201, "{body}: {}", res.text());
    res.json()["id"].as_str().unwrap().parse().unwrap()
}

/// Every live organization's parent in `tenant`.
async fn parents(db: &stoa_core::db::Db, tenant: Uuid) -> HashMap<Uuid, Option<Uuid>> {
    let mut conn = db.conn().await.unwrap();
    organizations::table
        .filter(organizations::tenant_id.eq(tenant))
        .filter(organizations::deleted_at.is_null())
        .select((organizations::id, organizations::parent_id))
        .load::<(Uuid, Option<Uuid>)>(&mut *conn)
        .await
        .unwrap()
        .into_iter()
        .collect()
}

#[actix_web::test]
async fn undoing_a_move_that_would_close_a_loop_is_refused() {
    let app = start_with_undo().await;
    let acme = seed_with_undo(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let root = acme.organization_id;
    let a = create(&app, &admin, json!({"name": "A", "parentId": root})).await;
    let b = create(&app, &admin, json!({"name": "B", "parentId": root})).await;
    let leaf = create(&app, &admin, json!({"name": "Leaf", "parentId": a})).await;
    let move_a = |parent: Uuid| put_json(ORGS, &admin, json!({"id": a, "parentId": parent}));

    // A under B, A back under the root (the entry to undo), then B under A.
    assert_eq!(app.send(move_a(b)).await.status, 200);
    let back = app.send(move_a(root)).await;
    assert_eq!(back.status, 200, "{}", back.text());
    let token = back.operation().unwrap().undo_token.unwrap();
    let res = app
        .send(put_json(ORGS, &admin, json!({"id": b, "parentId": a})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let before = parents(&app.db, acme.tenant_id).await;

    // Undoing "A back under the root" would put A under B, which is under A.
    let res = app
        .send(post_json(UNDO, &admin, json!({"undoToken": token})))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(res.json()["code"], "organization_cycle");
    assert_eq!(
        parents(&app.db, acme.tenant_id).await,
        before,
        "tree unchanged"
    );
    assert_eq!(before[&leaf], Some(a));
    assert_eq!(before[&b], Some(a));
    assert_eq!(before[&a], Some(root));

    // The legitimate path: once B is out from under A, the same undo works.
    let res = app
        .send(put_json(ORGS, &admin, json!({"id": b, "parentId": root})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(post_json(UNDO, &admin, json!({"undoToken": token})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let after = parents(&app.db, acme.tenant_id).await;
    assert_eq!((after[&a], after[&leaf]), (Some(b), Some(a)));
}

#[actix_web::test]
async fn a_write_that_would_close_a_loop_is_refused() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let root = acme.organization_id;
    let a = create(&app, &admin, json!({"name": "A", "parentId": root})).await;
    let c = create(&app, &admin, json!({"name": "C", "parentId": root})).await;
    let below = create(&app, &admin, json!({"name": "Below", "parentId": c})).await;
    let before = parents(&app.db, acme.tenant_id).await;

    // A under C and C under A in one request: each check alone passed (C was
    // not below A, A not below C), and both links were written.
    let res = app
        .send(put_json(
            ORGS,
            &admin,
            json!({"id": a, "parentId": c, "childIds": [c]}),
        ))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({
            "error": "This change would make an organization its own ancestor",
            "code": "organization_cycle"
        })
    );
    assert_eq!(
        parents(&app.db, acme.tenant_id).await,
        before,
        "tree unchanged"
    );
    assert_eq!(before[&below], Some(c));

    // The legitimate path: the same request without the loop.
    let res = app
        .send(put_json(ORGS, &admin, json!({"id": a, "childIds": [c]})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let after = parents(&app.db, acme.tenant_id).await;
    assert_eq!((after[&c], after[&below]), (Some(a), Some(c)));
}
