//! Undo of deal writes, and undo from the attacker's side.

use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn creates_updates_and_deletes_are_undone() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    let res = app
        .send(post_json(DEALS, &admin, json!({"title": "Undo me"})))
        .await;
    assert_eq!(res.status, 201);
    let created = id_of(&res.json());
    let res = undo(&app, &admin, &undo_token(&res)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(read(&app, &admin, created).await, Err(404));

    let id = deal(
        &app,
        &admin,
        json!({"title": "Before", "ownerUserId": acme.employee}),
    )
    .await;
    let res = app
        .send(put_json(
            &format!("{DEALS}/{id}"),
            &admin,
            json!({"title": "After", "ownerUserId": null}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let res = undo(&app, &admin, &undo_token(&res)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let d = read(&app, &admin, id).await.unwrap();
    assert_eq!(d["title"], "Before");
    assert_eq!(d["ownerUserId"], acme.employee.to_string());

    let res = app.send(delete(&format!("{DEALS}/{id}"), &admin)).await;
    assert_eq!(res.status, 200);
    let res = undo(&app, &admin, &undo_token(&res)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        read(&app, &admin, id).await.unwrap()["title"],
        "Before",
        "back with its id"
    );
}

/// A deal's entry keeps its states once, in the snapshots (the undo payload
/// names them); an entry written before that, with the states in its undo
/// payload, still undoes.
#[actix_web::test]
async fn states_live_in_the_snapshots_and_older_entries_still_undo() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = deal(&app, &admin, json!({"title": "First"})).await;
    let res = app
        .send(put_json(
            &format!("{DEALS}/{id}"),
            &admin,
            json!({"title": "Second"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let token = undo_token(&res);
    let marker = format!(
        "SELECT count(*) AS n FROM action_logs WHERE undo_token = '{token}' \
         AND command_payload = jsonb_build_object('undo', \
             jsonb_build_object('id', '{id}', 'states', 'snapshots')) \
         AND snapshot_before->>'title' = 'First' AND snapshot_after->>'title' = 'Second'"
    );
    assert_eq!(count(&app.db, &marker).await, 1);
    // The shape of earlier entries: the states in the undo payload, and
    // snapshots that (for this test) say something else.
    sql(
        &app.db,
        &format!(
            "UPDATE action_logs SET command_payload = jsonb_build_object('undo', \
                 jsonb_build_object('id', '{id}', 'before', snapshot_before, \
                     'after', snapshot_after)), \
                 snapshot_before = '{{}}'::jsonb, snapshot_after = '{{}}'::jsonb \
             WHERE undo_token = '{token}'"
        ),
    )
    .await;
    let res = undo(&app, &admin, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(read(&app, &admin, id).await.unwrap()["title"], "First");
}

#[actix_web::test]
async fn a_demoted_caller_cannot_replay_an_old_entry() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let seller = user_with_features(
        &app.db,
        &acme,
        "seller@acme.com",
        &["customers.deals.*", "audit_logs.undo_self"],
        None,
        None,
    )
    .await;
    let token = token_for(&app.db, seller).await;
    let id = deal(&app, &admin, json!({"title": "Original"})).await;
    let res = app
        .send(put_json(
            &format!("{DEALS}/{id}"),
            &token,
            json!({"title": "Seller's"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let entry = undo_token(&res);
    // Demoted: keeps undo rights, loses customers.deals.manage.
    sql(
        &app.db,
        &format!(
            "UPDATE role_acls SET features = ARRAY['customers.deals.view','audit_logs.undo_self'] \
             WHERE role_id IN (SELECT role_id FROM user_roles WHERE user_id = '{seller}')"
        ),
    )
    .await;
    let token = token_for(&app.db, seller).await;
    let res = undo(&app, &token, &entry).await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(read(&app, &admin, id).await.unwrap()["title"], "Seller's");
}
