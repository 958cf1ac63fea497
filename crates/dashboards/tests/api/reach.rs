//! Issue 49, from the attacker's side: whose widgets an administrator may
//! read and assign (the accounts' and the sidebar's reach rules), and what
//! the `auth:users` analytics source shows (what `GET /auth/users` shows).
//! Each attack ends by checking the victim's rows are unchanged.

use serde_json::{Value, json};
use uuid::Uuid;

use super::support::*;

const USER_WIDGETS: &str = "/api/dashboards/users/widgets";
const ROLE_WIDGETS: &str = "/api/dashboards/roles/widgets";

/// Users grouped by id: the ids the caller's analytics show.
async fn user_ids_in_analytics<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
) -> (i64, Vec<Uuid>) {
    let body = json!({"entityType": "auth:users", "metric": {"field": "id", "aggregate": "count"},
                      "groupBy": {"field": "id"}});
    let res = app
        .send(post_json("/api/dashboards/widgets/data", token, body))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let json = res.json();
    let ids = json["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["groupKey"].as_str().unwrap().parse().unwrap())
        .collect();
    (json["value"].as_f64().unwrap() as i64, ids)
}

fn user_path(user: Uuid) -> String {
    format!("{USER_WIDGETS}?userId={user}")
}

#[actix_web::test]
async fn a_restricted_admin_of_a_sibling_organization_cannot_read_or_override_its_users_widgets() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let a = child_org(&app.db, &acme, acme.organization_id, "Branch A").await;
    let b = child_org(&app.db, &acme, acme.organization_id, "Branch B").await;
    let features = ["dashboards.*", "analytics.view", "auth.users.list"];
    let attacker = user_with_features(
        &app.db,
        &acme,
        "ra@acme.com",
        &features,
        Some(vec![a]),
        Some(a),
    )
    .await;
    let victim = user_with_features(
        &app.db,
        &acme,
        "v@acme.com",
        &["dashboards.view"],
        None,
        Some(b),
    )
    .await;
    let colleague = user_with_features(
        &app.db,
        &acme,
        "c@acme.com",
        &["dashboards.view"],
        None,
        Some(a),
    )
    .await;
    let homeless = user_with_features(
        &app.db,
        &acme,
        "h@acme.com",
        &["dashboards.view"],
        None,
        None,
    )
    .await;

    // The tenant admin gave the victim its own widgets.
    let admin = token_for(&app.db, acme.admin).await;
    let body = json!({"userId": victim, "mode": "override", "widgetIds": [WELCOME]});
    let res = app.send(put_json(USER_WIDGETS, &admin, body)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let victim_rows = rows(&app.db, "dashboard_user_widgets", "user_id", victim).await;
    let admin_role = role_id(&app.db, &acme, "admin").await;
    let role_rows = rows(&app.db, "dashboard_role_widgets", "role_id", admin_role).await;

    let token = token_for(&app.db, attacker).await;
    // Users of another branch, or of none, do not exist for the attacker.
    for user in [victim, homeless, acme.admin] {
        let res = app.send(get(&user_path(user), &token)).await;
        assert_eq!(
            (res.status.as_u16(), res.json()["error"].clone()),
            (404, json!("User not found")),
            "{user}"
        );
        for body in [
            json!({"userId": user, "mode": "override", "widgetIds": []}),
            json!({"userId": user, "mode": "inherit"}),
        ] {
            let res = app.send(put_json(USER_WIDGETS, &token, body)).await;
            assert_eq!(res.status, 404, "{}", res.text());
        }
    }
    // A role reaching every organization is not the attacker's to assign.
    let body = json!({"roleId": admin_role, "widgetIds": []});
    let res = app.send(put_json(ROLE_WIDGETS, &token, body)).await;
    assert_eq!(res.status, 403, "{}", res.text());

    assert_eq!(
        rows(&app.db, "dashboard_user_widgets", "user_id", victim).await,
        victim_rows
    );
    assert_eq!(
        rows(&app.db, "dashboard_role_widgets", "role_id", admin_role).await,
        role_rows
    );

    // Its own branch's users stay its to manage.
    assert_eq!(
        app.send(get(&user_path(colleague), &token)).await.status,
        200
    );
    let body = json!({"userId": colleague, "mode": "override", "widgetIds": [WELCOME]});
    let res = app.send(put_json(USER_WIDGETS, &token, body)).await;
    assert_eq!(res.status, 200, "{}", res.text());

    // Analytics count only the users `GET /auth/users` lists for it.
    let (count, ids) = user_ids_in_analytics(&app, &token).await;
    let mut expected = vec![attacker, colleague];
    expected.sort();
    let mut ids = ids;
    ids.sort();
    assert_eq!(ids, expected);
    assert_eq!(count, 2);
    let listed = app.send(get("/api/auth/users", &token)).await;
    assert_eq!(listed.json()["total"], json!(count), "{}", listed.text());
}

#[actix_web::test]
async fn a_tenant_admin_cannot_touch_a_super_admins_or_the_superadmin_roles_widgets() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let superadmin = token_for(&app.db, acme.superadmin).await;
    let super_role = role_id(&app.db, &acme, "superadmin").await;

    // The super admin's own widgets and the super-admin role's (seeded).
    let body = json!({"userId": acme.superadmin, "mode": "override", "widgetIds": [WELCOME]});
    let res = app.send(put_json(USER_WIDGETS, &superadmin, body)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let user_rows = rows(
        &app.db,
        "dashboard_user_widgets",
        "user_id",
        acme.superadmin,
    )
    .await;
    let role_rows = rows(&app.db, "dashboard_role_widgets", "role_id", super_role).await;
    assert_ne!(role_rows, "[]");

    let res = app.send(get(&user_path(acme.superadmin), &admin)).await;
    assert_eq!(res.status, 404, "{}", res.text());
    for body in [
        json!({"userId": acme.superadmin, "mode": "override", "widgetIds": []}),
        json!({"userId": acme.superadmin, "mode": "inherit"}),
    ] {
        let res = app.send(put_json(USER_WIDGETS, &admin, body)).await;
        assert_eq!(res.status, 404, "{}", res.text());
    }
    let res = app
        .send(get(&format!("{ROLE_WIDGETS}?roleId={super_role}"), &admin))
        .await;
    assert_eq!(
        (res.status.as_u16(), res.json()["error"].clone()),
        (404, json!("Role not found"))
    );
    for ids in [json!([]), json!([WELCOME])] {
        let body = json!({"roleId": super_role, "widgetIds": ids});
        let res = app.send(put_json(ROLE_WIDGETS, &admin, body)).await;
        assert_eq!(res.status, 404, "{}", res.text());
    }
    assert_eq!(
        rows(
            &app.db,
            "dashboard_user_widgets",
            "user_id",
            acme.superadmin
        )
        .await,
        user_rows
    );
    assert_eq!(
        rows(&app.db, "dashboard_role_widgets", "role_id", super_role).await,
        role_rows
    );
    // The super admin still reads both.
    let res = app
        .send(get(
            &format!("{ROLE_WIDGETS}?roleId={super_role}"),
            &superadmin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    // Analytics hide the super admin from the tenant admin, as the list does.
    let (count, ids) = user_ids_in_analytics(&app, &admin).await;
    assert!(!ids.contains(&acme.superadmin), "{ids:?}");
    assert!(ids.contains(&acme.admin) && ids.contains(&acme.employee));
    let listed = app.send(get("/api/auth/users", &admin)).await;
    assert_eq!(listed.json()["total"], json!(count), "{}", listed.text());
    let (_, ids) = user_ids_in_analytics(&app, &superadmin).await;
    assert!(ids.contains(&acme.superadmin), "{ids:?}");

    // A user promoted since the admin's write: its undo no longer reaches
    // them, and a kept analytics answer does not show them either.
    let body = json!({"userId": acme.employee, "mode": "override", "widgetIds": [WELCOME]});
    let res = app.send(put_json(USER_WIDGETS, &admin, body)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let op = operation(&res);
    let (before, _) = user_ids_in_analytics(&app, &admin).await;
    set_user_acl(&app.db, acme.employee, acme.tenant_id, &[], true).await;
    let employee_rows = rows(&app.db, "dashboard_user_widgets", "user_id", acme.employee).await;
    let res = undo(&app, &admin, &op).await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(
        rows(&app.db, "dashboard_user_widgets", "user_id", acme.employee).await,
        employee_rows
    );
    let (after, ids) = user_ids_in_analytics(&app, &admin).await;
    assert_eq!(after, before - 1);
    assert!(!ids.contains(&acme.employee), "{ids:?}");
}

/// The rows of `table` whose `column` is `owner`, as JSON text (every column).
async fn rows(db: &stoa_core::db::Db, table: &str, column: &str, owner: Uuid) -> String {
    #[derive(diesel::QueryableByName)]
    struct Rows {
        #[diesel(sql_type = diesel::sql_types::Text)]
        v: String,
    }
    use diesel_async::RunQueryDsl;
    let mut conn = db.conn().await.unwrap();
    let found: Vec<Rows> = diesel::sql_query(format!(
        "SELECT coalesce(json_agg(t ORDER BY t.id)::text, '[]') AS v \
         FROM (SELECT * FROM {table} WHERE {column} = '{owner}') t"
    ))
    .load(&mut *conn)
    .await
    .unwrap();
    let value: Value = serde_json::from_str(&found[0].v).unwrap();
    value.to_string()
}

/// The sixth attacker of the authorization matrix (issue 49): a role the
/// tenant's administrator made for every organization, granting nothing
/// yet, is a tenant-wide record: an administrator restricted to one branch
/// may not assign its widgets (as it may not relabel its navigation).
#[actix_web::test]
async fn a_restricted_admin_cannot_assign_widgets_to_a_tenant_wide_role_granting_nothing() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let a = child_org(&app.db, &acme, acme.organization_id, "Branch A").await;
    let attacker = user_with_features(
        &app.db,
        &acme,
        "ra@acme.com",
        &["dashboards.*", "auth.*"],
        Some(vec![a]),
        Some(a),
    )
    .await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &admin,
            json!({"name": "everyone"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let everyone: Uuid = res.json()["id"].as_str().unwrap().parse().unwrap();
    let before = rows(&app.db, "dashboard_role_widgets", "role_id", everyone).await;
    let token = token_for(&app.db, attacker).await;
    let body = json!({"roleId": everyone, "widgetIds": [WELCOME]});
    let res = app.send(put_json(ROLE_WIDGETS, &token, body)).await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(
        res.json()["code"],
        "organization_out_of_scope",
        "{}",
        res.text()
    );
    assert_eq!(
        rows(&app.db, "dashboard_role_widgets", "role_id", everyone).await,
        before
    );
    // The tenant's administrator still may.
    let body = json!({"roleId": everyone, "widgetIds": [WELCOME]});
    let res = app.send(put_json(ROLE_WIDGETS, &admin, body)).await;
    assert_eq!(res.status, 200, "{}", res.text());
}
