//! Role and user widget assignment, the catalog, the seeder and the grant
//! sync that brings dashboards to a tenant created before it.

use serde_json::json;
use uuid::Uuid;

use super::support::*;

#[actix_web::test]
async fn the_catalog_lists_the_widgets_the_caller_may_see() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(get("/api/dashboards/widgets/catalog", &admin))
        .await;
    assert_eq!(res.status, 200);
    let ids: Vec<_> = res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].clone())
        .collect();
    assert_eq!(ids, [json!(WELCOME), json!(USERS_KPI), json!(ACTIVITY)]);
    assert_eq!(
        res.json()["items"][1],
        json!({"id": USERS_KPI, "title": "Users",
               "description": "Users created in a period, compared with the previous one",
               "defaultSize": "sm", "defaultEnabled": false,
               "defaultSettings": {"dateRange": "this_month"},
               "features": ["analytics.view", "auth.users.list"], "moduleId": "dashboards",
               "icon": "users", "loaderKey": "dashboards:dashboards.analytics.usersKpi:widget",
               "supportsRefresh": true})
    );
    // Assigning widgets without seeing the users: the KPI is left out.
    let assigner = user_with_features(
        &app.db,
        &acme,
        "a@acme.com",
        &["dashboards.*", "analytics.view"],
        None,
        None,
    )
    .await;
    let assigner = token_for(&app.db, assigner).await;
    let res = app
        .send(get("/api/dashboards/widgets/catalog", &assigner))
        .await;
    assert_eq!(res.json()["items"].as_array().unwrap().len(), 1);
    let employee = token_for(&app.db, acme.employee).await;
    assert_eq!(
        app.send(get("/api/dashboards/widgets/catalog", &employee))
            .await
            .status,
        403
    );
}

#[actix_web::test]
async fn role_widgets_are_read_by_specificity_written_in_the_callers_scope_and_undone() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee_role = role_id(&app.db, &acme, "employee").await;
    let admin_role = role_id(&app.db, &acme, "admin").await;

    let res = app.send(get("/api/dashboards/roles/widgets", &admin)).await;
    assert_eq!(
        (res.status.as_u16(), res.json()),
        (400, json!({"error": "roleId is required"}))
    );
    let res = app
        .send(get("/api/dashboards/roles/widgets?roleId=nope", &admin))
        .await;
    assert_eq!(res.status, 400);

    // The seeder's tenant-wide rows.
    let path = format!("/api/dashboards/roles/widgets?roleId={employee_role}");
    let res = app.send(get(&path, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({"widgetIds": [WELCOME], "hasCustom": true,
               "scope": {"tenantId": acme.tenant_id, "organizationId": acme.organization_id}})
    );

    // The admin role narrowed in the caller's organization wins over the tenant-wide row.
    let body = json!({"roleId": admin_role, "widgetIds": [ACTIVITY, WELCOME, ACTIVITY]});
    let res = app
        .send(put_json("/api/dashboards/roles/widgets", &admin, body))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({"ok": true, "widgetIds": [ACTIVITY, WELCOME]})
    );
    let op = operation(&res);
    assert_eq!(op["commandId"], "dashboards.role_widgets.save");
    let body = layout(&app, &admin).await;
    assert_eq!(body["allowedWidgetIds"], json!([WELCOME, ACTIVITY]));

    // Undo: the tenant-wide row decides again.
    assert_eq!(undo(&app, &admin, &op).await.status, 200);
    assert_eq!(
        layout(&app, &admin).await["allowedWidgetIds"],
        json!([WELCOME, USERS_KPI, ACTIVITY])
    );

    // Unknown widget ids: 400 naming them, nothing saved.
    let body = json!({"roleId": admin_role, "widgetIds": [WELCOME, "x.unknown"]});
    let res = app
        .send(put_json("/api/dashboards/roles/widgets", &admin, body))
        .await;
    assert_eq!(res.status, 400);
    assert!(
        res.text().contains("x.unknown") && res.text().contains("widgetIds"),
        "{}",
        res.text()
    );
    // Schema problems.
    for bad in [
        json!({"widgetIds": []}),
        json!({"roleId": admin_role, "widgetIds": [""]}),
        json!({"roleId": admin_role, "widgetIds": "x"}),
    ] {
        let res = app
            .send(put_json(
                "/api/dashboards/roles/widgets",
                &admin,
                bad.clone(),
            ))
            .await;
        assert_eq!(res.status, 400, "{bad}");
    }
    // An empty list removes the caller-scope row (none here: still the tenant-wide one).
    let body = json!({"roleId": admin_role, "widgetIds": []});
    let res = app
        .send(put_json("/api/dashboards/roles/widgets", &admin, body))
        .await;
    assert_eq!(res.json(), json!({"ok": true, "widgetIds": []}));
    let res = app
        .send(get(
            &format!("/api/dashboards/roles/widgets?roleId={admin_role}"),
            &admin,
        ))
        .await;
    assert_eq!(
        res.json()["widgetIds"],
        json!([WELCOME, USERS_KPI, ACTIVITY])
    );

    // Another tenant's role does not exist for the caller.
    let foreign = role_id(&app.db, &globex, "admin").await;
    let res = app
        .send(get(
            &format!("/api/dashboards/roles/widgets?roleId={foreign}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "Role not found");
    let body = json!({"roleId": foreign, "widgetIds": [WELCOME]});
    assert_eq!(
        app.send(put_json("/api/dashboards/roles/widgets", &admin, body))
            .await
            .status,
        404
    );
    let body = json!({"roleId": Uuid::new_v4(), "widgetIds": [WELCOME]});
    assert_eq!(
        app.send(put_json("/api/dashboards/roles/widgets", &admin, body))
            .await
            .status,
        404
    );
    // A caller without the feature.
    let employee = token_for(&app.db, acme.employee).await;
    assert_eq!(app.send(get(&path, &employee)).await.status, 403);
    let body = json!({"roleId": employee_role, "widgetIds": [WELCOME]});
    assert_eq!(
        app.send(put_json("/api/dashboards/roles/widgets", &employee, body))
            .await
            .status,
        403
    );
}

#[actix_web::test]
async fn user_overrides_replace_the_roles_widgets_until_inherit() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    let path = format!("/api/dashboards/users/widgets?userId={}", acme.employee);

    let res = app.send(get("/api/dashboards/users/widgets", &admin)).await;
    assert_eq!(
        (res.status.as_u16(), res.json()),
        (400, json!({"error": "userId is required"}))
    );
    let res = app.send(get(&path, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({"mode": "inherit", "widgetIds": [], "hasCustom": false, "effectiveWidgetIds": [WELCOME],
               "scope": {"tenantId": acme.tenant_id, "organizationId": acme.organization_id}})
    );

    // Override: the employee's own grants still filter (no users KPI).
    let body =
        json!({"userId": acme.employee, "mode": "override", "widgetIds": [USERS_KPI, WELCOME]});
    let res = app
        .send(put_json("/api/dashboards/users/widgets", &admin, body))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({"ok": true, "mode": "override", "widgetIds": [USERS_KPI, WELCOME]})
    );
    let res = app.send(get(&path, &admin)).await;
    assert_eq!(res.json()["hasCustom"], true);
    assert_eq!(res.json()["effectiveWidgetIds"], json!([WELCOME]));

    // An empty override shows nothing, and the stored layout loses its items.
    layout(&app, &employee).await;
    let body = json!({"userId": acme.employee, "mode": "override", "widgetIds": []});
    let op = operation(
        &app.send(put_json("/api/dashboards/users/widgets", &admin, body))
            .await,
    );
    let body = layout(&app, &employee).await;
    assert_eq!(body["allowedWidgetIds"], json!([]));
    assert!(widget_ids(&body).is_empty());
    // Undo brings the previous override back.
    assert_eq!(undo(&app, &admin, &op).await.status, 200);
    assert_eq!(
        layout(&app, &employee).await["allowedWidgetIds"],
        json!([WELCOME])
    );

    // Inherit removes the row.
    let body = json!({"userId": acme.employee, "mode": "inherit", "widgetIds": [ACTIVITY]});
    let res = app
        .send(put_json("/api/dashboards/users/widgets", &admin, body))
        .await;
    assert_eq!(
        res.json(),
        json!({"ok": true, "mode": "inherit", "widgetIds": []})
    );
    assert_eq!(app.send(get(&path, &admin)).await.json()["mode"], "inherit");

    // Bad input.
    let body = json!({"userId": acme.employee, "mode": "override", "widgetIds": ["nope"]});
    assert_eq!(
        app.send(put_json("/api/dashboards/users/widgets", &admin, body))
            .await
            .status,
        400
    );
    let body = json!({"userId": acme.employee, "mode": "sometimes"});
    let res = app
        .send(put_json("/api/dashboards/users/widgets", &admin, body))
        .await;
    assert_eq!(res.status, 400);
    assert!(res.text().contains("mode"));
    // Another tenant's user.
    let res = app
        .send(get(
            &format!("/api/dashboards/users/widgets?userId={}", globex.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "User not found");
    let body = json!({"userId": globex.employee, "mode": "override", "widgetIds": []});
    assert_eq!(
        app.send(put_json("/api/dashboards/users/widgets", &admin, body))
            .await
            .status,
        404
    );
    assert_eq!(app.send(get(&path, &employee)).await.status, 403);
}

#[actix_web::test]
async fn grant_and_seed_sync_bring_dashboards_to_a_tenant_created_before_it() {
    let app = start().await;
    // Provisioned with the registry of the modules before dashboards.
    let old = stoa_auth::testing::seed_tenant(&app.db, "Old Co", "old.com").await;
    let employee = token_for(&app.db, old.employee).await;
    assert_eq!(
        app.send(get("/api/dashboards/layout", &employee))
            .await
            .status,
        403
    );

    let mut conn = app.db.conn().await.unwrap();
    stoa_auth::grant_sync::sync(&mut conn, &registry())
        .await
        .unwrap();
    stoa_directory::seed_sync::sync(&mut conn, &registry())
        .await
        .unwrap();
    drop(conn);

    let employee = token_for(&app.db, old.employee).await;
    let body = layout(&app, &employee).await;
    assert_eq!(body["allowedWidgetIds"], json!([WELCOME]));
    assert_eq!(body["canConfigure"], true);
    let admin = token_for(&app.db, old.admin).await;
    let role = role_id(&app.db, &old, "employee").await;
    let res = app
        .send(get(
            &format!("/api/dashboards/roles/widgets?roleId={role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["widgetIds"], json!([WELCOME]));
}
