use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn undo_then_redo_of_an_update_restores_the_exact_states() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (sales, created) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    assert_eq!(created["commandId"], "directory.organizations.create");
    assert_eq!(created["resourceKind"], "directory.organization");
    assert_eq!(created["resourceId"], sales.to_string());
    let before = org(&app, &admin, sales).await.unwrap();

    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": sales, "name": "Sales EMEA", "slug": "emea", "parentId": null, "isActive": false}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let update = operation(&res);
    let after = org(&app, &admin, sales).await.unwrap();
    assert_eq!(after["name"], "Sales EMEA");
    assert_eq!(after["parentId"], json!(null));

    let res = undo(&app, &admin, &update["undoToken"]).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "logId": update["id"]}));
    let restored = org(&app, &admin, sales).await.unwrap();
    for key in [
        "name",
        "slug",
        "parentId",
        "isActive",
        "depth",
        "ancestorIds",
        "treePath",
    ] {
        assert_eq!(restored[key], before[key], "{key} after undo");
    }

    // The same token cannot be used twice.
    assert_eq!(undo(&app, &admin, &update["undoToken"]).await.status, 400);

    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/redo",
            &admin,
            json!({"logId": update["id"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ok"], true);
    let redone = operation(&res);
    assert_eq!(body["undoToken"], redone["undoToken"]);
    let again = org(&app, &admin, sales).await.unwrap();
    for key in ["name", "slug", "parentId", "isActive"] {
        assert_eq!(again[key], after[key], "{key} after redo");
    }
    // A redone entry cannot be redone again; the new one can be undone.
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/redo",
            &admin,
            json!({"logId": update["id"]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(undo(&app, &admin, &redone["undoToken"]).await.status, 200);
    assert_eq!(org(&app, &admin, sales).await.unwrap()["name"], "Sales");
}

#[actix_web::test]
async fn undo_of_create_and_delete() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (sales, created) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    let (emea, child) = create_org(&app, &admin, json!({"name": "EMEA", "parentId": sales})).await;
    // Newest first: the child's creation, then Sales'.
    assert_eq!(undo(&app, &admin, &child["undoToken"]).await.status, 200);
    assert!(org(&app, &admin, emea).await.is_none());
    assert_eq!(undo(&app, &admin, &created["undoToken"]).await.status, 200);
    assert!(org(&app, &admin, sales).await.is_none());
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/redo",
            &admin,
            json!({"logId": created["id"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(org(&app, &admin, sales).await.unwrap()["slug"], "sales");

    let (ops, _) = create_org(&app, &admin, json!({"name": "Ops", "parentId": sales})).await;
    let res = app
        .send(delete(
            &format!("/api/directory/organizations?id={sales}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200);
    let deleted = operation(&res);
    assert_eq!(
        org(&app, &admin, ops).await.unwrap()["parentId"],
        acme.organization_id.to_string()
    );
    assert_eq!(undo(&app, &admin, &deleted["undoToken"]).await.status, 200);
    let revived = org(&app, &admin, sales).await.unwrap();
    assert_eq!(revived["childIds"], json!([ops]));
    assert_eq!(
        org(&app, &admin, ops).await.unwrap()["parentId"],
        sales.to_string()
    );
}

#[actix_web::test]
async fn stale_foreign_and_malformed_tokens_are_400() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (sales, first) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": sales, "name": "Sales 2"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let second = operation(&res);
    // Only the latest action on a resource can be undone.
    let res = undo(&app, &admin, &first["undoToken"]).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json(), json!({"error": "Undo token not available"}));

    // Another tenant's admin cannot use the token.
    let other = token_for(&app.db, globex.admin).await;
    assert_eq!(undo(&app, &other, &second["undoToken"]).await.status, 400);
    // Neither can a colleague without audit_logs.undo_tenant.
    let colleague = user_with_features(
        &app.db,
        &acme,
        "c@acme.com",
        &["audit_logs.undo_self"],
        None,
        None,
    )
    .await;
    let colleague = token_for(&app.db, colleague).await;
    assert_eq!(
        undo(&app, &colleague, &second["undoToken"]).await.status,
        400
    );

    for body in [
        json!({}),
        json!({"undoToken": ""}),
        json!({"undoToken": 5}),
        json!({"undoToken": "nope"}),
    ] {
        let res = app
            .send(post_json(
                "/api/audit_logs/audit-logs/actions/undo",
                &admin,
                body.clone(),
            ))
            .await;
        assert_eq!(res.status, 400, "{body}");
    }
    for body in [
        json!({}),
        json!({"logId": "x"}),
        json!({"logId": uuid::Uuid::new_v4()}),
    ] {
        let res = app
            .send(post_json(
                "/api/audit_logs/audit-logs/actions/redo",
                &admin,
                body.clone(),
            ))
            .await;
        assert_eq!(res.status, 400, "{body}");
    }
    // The token still works for its owner.
    assert_eq!(undo(&app, &admin, &second["undoToken"]).await.status, 200);
}

#[actix_web::test]
async fn an_interceptor_can_block_an_undo_with_422() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (_, op) = create_org(
        &app,
        &admin,
        json!({"name": "Locked Vault", "parentId": acme.organization_id}),
    )
    .await;
    let res = undo(&app, &admin, &op["undoToken"]).await;
    assert_eq!(res.status, 422);
    assert_eq!(
        res.json(),
        json!({"error": "This organization is locked", "code": "undo_blocked"})
    );
    // Nothing changed: the entry is still undoable and the organization exists.
    let res = app
        .send(get(
            "/api/audit_logs/audit-logs/actions?undoableOnly=true",
            &admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 1);
}

#[actix_web::test]
async fn undo_and_redo_need_their_features() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let nobody = user_with_features(
        &app.db,
        &acme,
        "n@acme.com",
        &["directory.organizations.*"],
        None,
        None,
    )
    .await;
    let nobody = token_for(&app.db, nobody).await;
    let (_, op) = create_org(
        &app,
        &nobody,
        json!({"name": "Mine", "parentId": acme.organization_id}),
    )
    .await;
    let res = undo(&app, &nobody, &op["undoToken"]).await;
    assert_eq!(res.status, 403);
    assert_eq!(
        res.json()["requiredFeatures"],
        json!(["audit_logs.undo_self"])
    );
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/redo",
            &nobody,
            json!({"logId": op["id"]}),
        ))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(
        app.post_json("/api/audit_logs/audit-logs/actions/undo", &json!({}))
            .await
            .status,
        401
    );
}

#[actix_web::test]
async fn a_profile_change_is_logged_but_not_undoable() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(put_json(
            "/api/auth/profile",
            &admin,
            json!({"email": "boss@acme.com", "currentPassword": "secret", "password": "N3w!passw0rd"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    // Undo never writes credentials back, so there is nothing to undo.
    assert!(res.header("x-om-operation").is_none());
    // The entry shows the e-mail change but never the password hash.
    let res = app
        .send(get(
            "/api/audit_logs/audit-logs/actions?resourceKind=auth.user",
            &admin,
        ))
        .await;
    let text = res.text();
    assert!(
        text.contains("boss@acme.com") && !text.contains("argon2"),
        "{text}"
    );
}

/// An organization created with `childIds` took them from their parents:
/// undoing the creation gives them back, redoing takes them again (the shared
/// state handler restores the recorded `childParents`).
#[actix_web::test]
async fn undo_of_a_create_with_children_gives_them_back_and_redo_takes_them_again() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (west, _) = create_org(
        &app,
        &admin,
        json!({"name": "West", "parentId": acme.organization_id}),
    )
    .await;
    let (shop, _) = create_org(&app, &admin, json!({"name": "Shop", "parentId": west})).await;
    let (hub, created) = create_org(
        &app,
        &admin,
        json!({"name": "Hub", "parentId": acme.organization_id, "childIds": [shop]}),
    )
    .await;
    assert_eq!(
        org(&app, &admin, shop).await.unwrap()["parentId"],
        hub.to_string()
    );

    let res = undo(&app, &admin, &created["undoToken"]).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(org(&app, &admin, hub).await.is_none());
    assert_eq!(
        org(&app, &admin, shop).await.unwrap()["parentId"],
        west.to_string(),
        "back under its previous parent"
    );

    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/redo",
            &admin,
            json!({"logId": created["id"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        org(&app, &admin, hub).await.unwrap()["childIds"],
        json!([shop])
    );
    assert_eq!(
        org(&app, &admin, shop).await.unwrap()["parentId"],
        hub.to_string()
    );
    // The log shows no previous state for a creation, and no `childParents`.
    let res = app
        .send(get(
            &format!("/api/audit_logs/audit-logs/actions?resourceId={hub}&sortDir=asc"),
            &admin,
        ))
        .await;
    let items = res.json()["items"].as_array().unwrap().clone();
    assert!(items[0]["snapshotBefore"].is_null(), "{}", items[0]);
    assert!(items[0]["snapshotAfter"].get("childParents").is_none());
}
