//! `GET/PUT /dashboards/layout`, `PATCH /dashboards/layout/{itemId}`, their
//! undo, and the statement count of the read.

use serde_json::{Value, json};
use uuid::Uuid;

use super::support::*;

#[actix_web::test]
async fn a_first_read_stores_the_default_layout_of_the_allowed_widgets() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;

    // The employee role was seeded with the widgets enabled by default;
    // its grants do not reach the users KPI either.
    let employee = token_for(&app.db, acme.employee).await;
    let body = layout(&app, &employee).await;
    assert_eq!(body["allowedWidgetIds"], json!([WELCOME]));
    assert_eq!(widget_ids(&body), [WELCOME]);
    let item = &body["layout"]["items"][0];
    assert_eq!(
        (
            item["order"].clone(),
            item["priority"].clone(),
            item["size"].clone()
        ),
        (json!(0), json!(0), json!("md"))
    );
    assert_eq!(body["canConfigure"], true);
    assert_eq!(body["context"]["userId"], json!(acme.employee));
    assert_eq!(body["context"]["tenantId"], json!(acme.tenant_id));
    assert_eq!(
        body["context"]["organizationId"],
        json!(acme.organization_id)
    );
    assert!(body["context"]["userLabel"].as_str().unwrap().contains('@'));
    assert_eq!(body["widgets"][0]["id"], WELCOME);
    assert_eq!(
        body["widgets"][0]["loaderKey"],
        "dashboards:dashboards.welcome:widget"
    );
    // Stored: the same item id comes back.
    let again = layout(&app, &employee).await;
    assert_eq!(again["layout"], body["layout"]);

    // Admins' role rows hold every widget; the default layout still holds
    // only those enabled by default.
    let admin = token_for(&app.db, acme.admin).await;
    let body = layout(&app, &admin).await;
    assert_eq!(
        body["allowedWidgetIds"],
        json!([WELCOME, USERS_KPI, ACTIVITY])
    );
    assert_eq!(widget_ids(&body), [WELCOME]);
    assert_eq!(body["widgets"].as_array().unwrap().len(), 3);
}

#[actix_web::test]
async fn put_orders_by_the_array_drops_widgets_not_allowed_and_checks_the_items() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    let items = json!([
        {"id": a, "widgetId": ACTIVITY, "order": 7, "size": "lg", "settings": {"days": 3}},
        {"id": Uuid::new_v4(), "widgetId": "nope.widget", "order": 0},
        {"id": b, "widgetId": WELCOME, "order": 1},
    ]);
    let res = app
        .send(put_json(
            "/api/dashboards/layout",
            &admin,
            json!({"items": items}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true}));
    assert_eq!(operation(&res)["commandId"], "dashboards.layout.save");
    let body = layout(&app, &admin).await;
    assert_eq!(
        body["layout"]["items"],
        json!([
            {"id": a, "widgetId": ACTIVITY, "order": 0, "priority": 0, "size": "lg", "settings": {"days": 3}},
            {"id": b, "widgetId": WELCOME, "order": 1, "priority": 1, "size": "md"},
        ])
    );

    // Duplicate ids among the kept items: 400, nothing saved.
    let dup = json!({"items": [
        {"id": a, "widgetId": WELCOME, "order": 0},
        {"id": a, "widgetId": ACTIVITY, "order": 1},
    ]});
    let res = app
        .send(put_json("/api/dashboards/layout", &admin, dup))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Layout item IDs must be unique");
    // Schema problems name the field.
    for (bad, field) in [
        (
            json!({"items": [{"id": a, "widgetId": WELCOME, "order": -1}]}),
            "order",
        ),
        (
            json!({"items": [{"id": "x", "widgetId": WELCOME, "order": 0}]}),
            "id",
        ),
        (
            json!({"items": [{"id": a, "widgetId": WELCOME, "order": 0, "size": "xl"}]}),
            "size",
        ),
        (json!({}), "items"),
    ] {
        let res = app
            .send(put_json("/api/dashboards/layout", &admin, bad.clone()))
            .await;
        assert_eq!(res.status, 400, "{bad}");
        assert!(res.text().contains(field), "{bad}: {}", res.text());
    }
    let many: Vec<Value> = (0..101)
        .map(|n| json!({"id": Uuid::new_v4(), "widgetId": WELCOME, "order": n}))
        .collect();
    let res = app
        .send(put_json(
            "/api/dashboards/layout",
            &admin,
            json!({"items": many}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(layout(&app, &admin).await["layout"], body["layout"]);

    // An employee cannot place a widget its grants do not reach.
    let employee = token_for(&app.db, acme.employee).await;
    let items = json!([{"id": a, "widgetId": USERS_KPI, "order": 0}, {"id": b, "widgetId": WELCOME, "order": 1}]);
    let res = app
        .send(put_json(
            "/api/dashboards/layout",
            &employee,
            json!({"items": items}),
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(widget_ids(&layout(&app, &employee).await), [WELCOME]);
}

#[actix_web::test]
async fn patch_merges_size_and_settings_of_one_item() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let item = Uuid::new_v4();
    let path = format!("/api/dashboards/layout/{item}");
    // No layout yet.
    let res = app
        .send(patch_json(&path, &admin, json!({"size": "lg"})))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], json!("Layout not found"));
    let items = json!([{"id": item, "widgetId": WELCOME, "order": 0, "settings": {"a": 1}}]);
    assert_eq!(
        app.send(put_json(
            "/api/dashboards/layout",
            &admin,
            json!({"items": items})
        ))
        .await
        .status,
        200
    );

    let res = app
        .send(patch_json(&path, &admin, json!({"size": "lg"})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(patch_json(
            &path,
            &admin,
            json!({"settings": {"b": 2}, "size": null}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let body = layout(&app, &admin).await;
    assert_eq!(body["layout"]["items"][0]["size"], "lg");
    assert_eq!(body["layout"]["items"][0]["settings"], json!({"b": 2}));

    let other = format!("/api/dashboards/layout/{}", Uuid::new_v4());
    let res = app
        .send(patch_json(&other, &admin, json!({"size": "sm"})))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], json!("Layout item not found"));
    let res = app
        .send(patch_json(
            "/api/dashboards/layout/not-a-uuid",
            &admin,
            json!({"size": "sm"}),
        ))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .send(patch_json(&path, &admin, json!({"size": "huge"})))
        .await;
    assert_eq!(res.status, 400);
    assert!(res.text().contains("size"));
    let res = app.send(patch_json(&path, &admin, json!(["lg"]))).await;
    assert_eq!(res.status, 400);
    assert_eq!(
        layout(&app, &admin).await["layout"]["items"][0]["size"],
        "lg"
    );
}

#[actix_web::test]
async fn callers_without_the_features_are_refused() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let viewer = user_with_features(
        &app.db,
        &acme,
        "viewer@acme.com",
        &["dashboards.view"],
        None,
        None,
    )
    .await;
    let viewer = token_for(&app.db, viewer).await;
    assert_eq!(
        app.send(get("/api/dashboards/layout", &viewer))
            .await
            .status,
        200
    );
    let body = layout(&app, &viewer).await;
    assert_eq!(body["canConfigure"], false);
    let items = json!({"items": []});
    assert_eq!(
        app.send(put_json("/api/dashboards/layout", &viewer, items))
            .await
            .status,
        403
    );
    let path = format!("/api/dashboards/layout/{}", Uuid::new_v4());
    assert_eq!(
        app.send(patch_json(&path, &viewer, json!({}))).await.status,
        403
    );
    assert_eq!(
        app.send(get("/api/dashboards/widgets/catalog", &viewer))
            .await
            .status,
        403
    );

    let nobody = user_with_features(
        &app.db,
        &acme,
        "nobody@acme.com",
        &["auth.users.list"],
        None,
        None,
    )
    .await;
    let nobody = token_for(&app.db, nobody).await;
    assert_eq!(
        app.send(get("/api/dashboards/layout", &nobody))
            .await
            .status,
        403
    );
    assert_eq!(
        app.send(get("/api/dashboards/layout", "bad-token"))
            .await
            .status,
        401
    );
}

#[actix_web::test]
async fn undo_puts_the_previous_layout_back_for_its_owner_only() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let before = layout(&app, &admin).await;
    let items = json!([{"id": Uuid::new_v4(), "widgetId": ACTIVITY, "order": 0}]);
    let res = app
        .send(put_json(
            "/api/dashboards/layout",
            &admin,
            json!({"items": items}),
        ))
        .await;
    let op = operation(&res);
    assert_eq!(widget_ids(&layout(&app, &admin).await), [ACTIVITY]);
    let res = undo(&app, &admin, &op).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(layout(&app, &admin).await["layout"], before["layout"]);
    // The token is spent.
    assert_eq!(undo(&app, &admin, &op).await.status, 400);
}

#[actix_web::test]
async fn a_cached_caller_reads_its_layout_in_one_statement() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    // The first read stores the layout and fills the ACL cache. (Kept
    // answers need the server's read cache: apps/server's
    // `a_repeated_layout_read_is_kept_until_what_it_shows_changes`.)
    layout(&app, &admin).await;
    for _ in 0..3 {
        let (n, body) = app.statements("/api/dashboards/layout", &admin).await;
        assert_eq!(widget_ids(&body), [WELCOME]);
        assert_eq!(n, 2, "the session check and one statement");
    }
}

/// The modules' features without a single widget (a broken deploy).
fn without_widgets() -> stoa_acl::Registry {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_audit_logs::register(&mut registry).unwrap();
    registry
        .register(stoa_dashboards::MODULE, stoa_dashboards::FEATURES)
        .unwrap();
    registry
        .register(
            stoa_dashboards::ANALYTICS_MODULE,
            stoa_dashboards::ANALYTICS_FEATURES,
        )
        .unwrap();
    for role in ["superadmin", "admin"] {
        registry.add_role_defaults(role, &["dashboards.*"]);
    }
    registry
}

#[actix_web::test]
async fn without_a_widget_registry_nothing_is_saved() {
    let app = start_with(without_widgets).await;
    let acme =
        stoa_auth::testing::seed_tenant_with(&app.db, &without_widgets(), "Acme", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let items = json!([{"id": Uuid::new_v4(), "widgetId": WELCOME, "order": 0}]);
    let res = app
        .send(put_json(
            "/api/dashboards/layout",
            &admin,
            json!({"items": items}),
        ))
        .await;
    assert_eq!(res.status, 503);
    assert_eq!(res.json()["error"], "Widget registry unavailable");
    let body = layout(&app, &admin).await;
    assert!(widget_ids(&body).is_empty());
    // Nothing was stored: a later PATCH finds no layout.
    let path = format!("/api/dashboards/layout/{}", Uuid::new_v4());
    assert_eq!(
        app.send(patch_json(&path, &admin, json!({"size": "sm"})))
            .await
            .status,
        404
    );
}

#[actix_web::test]
async fn a_caller_who_lost_the_feature_cannot_undo() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let assigner = user_with_features(
        &app.db,
        &acme,
        "assigner@acme.com",
        // What the employee role grants (the grant boundary of a role's widgets).
        &["dashboards.*", "audit_logs.*", "analytics.view"],
        None,
        None,
    )
    .await;
    let token = token_for(&app.db, assigner).await;
    let role = role_id(&app.db, &acme, "employee").await;
    let body = json!({"roleId": role, "widgetIds": [ACTIVITY]});
    let res = app
        .send(put_json("/api/dashboards/roles/widgets", &token, body))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let op = operation(&res);
    // Demoted: the role keeps only the audit-log grants.
    exec(
        &app.db,
        &format!(
            "UPDATE role_acls SET features = ARRAY['audit_logs.*'] WHERE role_id IN \
         (SELECT role_id FROM user_roles WHERE user_id = '{assigner}')"
        ),
    )
    .await;
    let token = token_for(&app.db, assigner).await;
    let res = undo(&app, &token, &op).await;
    assert_eq!(res.status, 403, "{}", res.text());
    // The assignment stands.
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(get(
            &format!("/api/dashboards/roles/widgets?roleId={role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["widgetIds"], json!([ACTIVITY]));
}
