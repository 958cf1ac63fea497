//! `/auth/roles`: list, create, rename, move, delete, undo, visibility.

use serde_json::{Value, json};
use stoa_auth::testing::token_for;
use uuid::Uuid;

use super::support::*;

fn names(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn list_hides_super_admin_roles_and_counts_users() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    let res = app.send(get("/api/auth/roles", &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(names(&body), ["admin", "employee"]);
    assert_eq!(body["items"][1]["usersCount"], 1);
    assert_eq!(body["items"][1]["tenantName"], "Acme Corp");
    assert_eq!(body["total"], 2);
    assert_eq!(body["isSuperAdmin"], false);
    let res = app.send(get("/api/auth/roles?search=EMP", &admin)).await;
    assert_eq!(names(&res.json()), ["employee"]);
    let res = app
        .send(get("/api/auth/roles?pageSize=1&page=2", &admin))
        .await;
    assert_eq!(names(&res.json()), ["employee"]);
    assert_eq!(res.json()["totalPages"], 2);
    assert_eq!(
        app.send(get("/api/auth/roles?pageSize=101", &admin))
            .await
            .status,
        400
    );
    // Another tenant: 403 for a tenant admin.
    let res = app
        .send(get(
            &format!("/api/auth/roles?tenantId={}", globex.tenant_id),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["error"], "Not authorized to target this tenant.");

    // Super admins see every tenant, or the one they name.
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app.send(get("/api/auth/roles", &root)).await;
    assert_eq!(res.json()["total"], 6);
    let res = app
        .send(get(
            &format!("/api/auth/roles?tenantId={}", globex.tenant_id),
            &root,
        ))
        .await;
    assert_eq!(names(&res.json()), ["admin", "employee", "superadmin"]);
}

#[actix_web::test]
async fn create_rename_and_delete() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    let res = app
        .send(post_json(
            "/api/auth/roles",
            &admin,
            json!({"name": " Sales "}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert!(res.header("x-om-operation").is_some());
    let id = res.json()["id"].as_str().unwrap().to_string();

    let refusals = [
        (json!({"name": "sales"}), 409),
        (json!({"name": "Admin"}), 400),
        (json!({"name": "SUPERADMIN"}), 400),
        (json!({"name": "x"}), 400),
        (json!({"name": "a".repeat(101)}), 400),
        (json!({"name": "Ops", "tenantId": null}), 400),
        (json!({"name": "Ops", "tenantId": globex.tenant_id}), 403),
        (json!({"name": "Ops", "cf_color": "red"}), 400),
        (json!({}), 400),
    ];
    for (body, status) in refusals {
        let res = app
            .send(post_json("/api/auth/roles", &admin, body.clone()))
            .await;
        assert_eq!(res.status, status, "{body}: {}", res.text());
    }
    assert_eq!(
        app.send(post_json(
            "/api/auth/roles",
            &admin,
            json!({"name": "Admin"})
        ))
        .await
        .json()["error"],
        "Role name is reserved"
    );

    // Rename (also undoable), duplicates and reserved names refused.
    let res = app
        .send(put_json(
            "/api/auth/roles",
            &admin,
            json!({"id": id, "name": "Field sales"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let rename = undo_token(&res);
    let res = app
        .send(put_json(
            "/api/auth/roles",
            &admin,
            json!({"id": id, "name": "employee"}),
        ))
        .await;
    assert_eq!(res.status, 409);
    let res = app
        .send(put_json(
            "/api/auth/roles",
            &admin,
            json!({"id": id, "name": "admin"}),
        ))
        .await;
    assert_eq!(res.status, 400);
    let res = undo(&app, &admin, &rename).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(get(&format!("/api/auth/roles?id={id}"), &admin))
        .await;
    assert_eq!(names(&res.json()), ["Sales"]);

    // Moving to another tenant: super admins only.
    let res = app
        .send(put_json(
            "/api/auth/roles",
            &admin,
            json!({"id": id, "tenantId": globex.tenant_id}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(put_json(
            "/api/auth/roles",
            &root,
            json!({"id": id, "tenantId": globex.tenant_id}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    // Now it is Globex's: invisible to the acme admin.
    let res = app
        .send(put_json(
            "/api/auth/roles",
            &admin,
            json!({"id": id, "name": "Back"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "Role not found");

    // Delete: refused while users hold the role, 404 when gone.
    let employee_role = app
        .send(get("/api/auth/roles?search=employee", &admin))
        .await
        .json()["items"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let res = app
        .send(delete(
            &format!("/api/auth/roles?id={employee_role}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Role has assigned users");
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &admin,
            json!({"name": "Temp"}),
        ))
        .await;
    let temp = res.json()["id"].as_str().unwrap().to_string();
    let res = app
        .send(delete(&format!("/api/auth/roles?id={temp}"), &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let token = undo_token(&res);
    let res = app
        .send(delete(&format!("/api/auth/roles?id={temp}"), &admin))
        .await;
    assert_eq!(res.status, 404);
    // The body form of the id works too.
    let res = app
        .send(
            actix_web::test::TestRequest::delete()
                .uri("/api/auth/roles")
                .insert_header(("authorization", format!("Bearer {admin}")))
                .set_json(json!({"id": Uuid::new_v4()})),
        )
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(
        app.send(delete("/api/auth/roles", &admin)).await.status,
        400
    );
    // Undo of the delete brings it back.
    assert_eq!(undo(&app, &admin, &token).await.status, 200);
    let res = app
        .send(get(&format!("/api/auth/roles?id={temp}"), &admin))
        .await;
    assert_eq!(names(&res.json()), ["Temp"]);
}

#[actix_web::test]
async fn super_admin_roles_are_off_limits_for_tenant_admins() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(get("/api/auth/roles?search=superadmin", &root))
        .await;
    let id = res.json()["items"][0]["id"].as_str().unwrap().to_string();
    let res = app
        .send(put_json(
            "/api/auth/roles",
            &admin,
            json!({"id": id, "name": "Boss"}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app
        .send(delete(&format!("/api/auth/roles?id={id}"), &admin))
        .await;
    assert_eq!(res.status, 403);
}

#[actix_web::test]
async fn every_route_needs_its_feature() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let id = Uuid::new_v4();
    let routes = [
        (get("/api/auth/roles", &employee), "auth.roles.list"),
        (
            post_json("/api/auth/roles", &employee, json!({"name": "x1"})),
            "auth.roles.manage",
        ),
        (
            put_json(
                "/api/auth/roles",
                &employee,
                json!({"id": id, "name": "x1"}),
            ),
            "auth.roles.manage",
        ),
        (
            delete(&format!("/api/auth/roles?id={id}"), &employee),
            "auth.roles.manage",
        ),
    ];
    for (req, feature) in routes {
        let res = app.send(req).await;
        assert_eq!(res.status, 403, "{feature}");
        assert_eq!(res.json()["requiredFeatures"], json!([feature]));
    }
    let res = app
        .send(actix_web::test::TestRequest::get().uri("/api/auth/roles"))
        .await;
    assert_eq!(res.status, 401);
}

#[actix_web::test]
async fn list_is_two_round_trips_with_cursors() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    let admin = token_for(&app.db, acme.admin).await;
    for token in [&root, &admin] {
        // Warms the ACL cache and a connection of the caller's scope
        // (row-level security: a scope change costs one `set_config`).
        app.send(get("/api/auth/roles?pageSize=1", token)).await;
        let before = stoa_core::db::thread_queries();
        let res = app.send(get("/api/auth/roles?pageSize=2", token)).await;
        assert_eq!(res.status, 200, "{}", res.text());
        assert_eq!(
            stoa_core::db::thread_queries() - before,
            2,
            "roles list statements"
        );
        let body = res.json();
        assert_eq!(body["totalCapped"], false);
        assert_eq!(body["items"][0]["usersCount"], 1);
        assert_eq!(body["items"][0]["tenantName"], "Acme Corp");
    }
    // The super admin sees 3 roles: the cursor walks them 2 by 2.
    let res = app.send(get("/api/auth/roles?pageSize=2", &root)).await;
    let first = res.json();
    assert_eq!(names(&first), ["admin", "employee"]);
    assert_eq!(first["total"], 3);
    let cursor = first["nextCursor"].as_str().unwrap().to_string();
    let before = stoa_core::db::thread_queries();
    let res = app
        .send(get(
            &format!("/api/auth/roles?pageSize=2&cursor={cursor}"),
            &root,
        ))
        .await;
    assert_eq!(stoa_core::db::thread_queries() - before, 2);
    let second = res.json();
    assert_eq!(names(&second), ["superadmin"]);
    assert_eq!(
        (second["page"].clone(), second["total"].clone()),
        (2.into(), 3.into())
    );
    assert!(second.get("nextCursor").is_none());
    // A users cursor is not a roles cursor.
    let users = app
        .send(get("/api/auth/users?pageSize=1", &root))
        .await
        .json();
    let foreign = users["nextCursor"].as_str().unwrap().to_string();
    let res = app
        .send(get(&format!("/api/auth/roles?cursor={foreign}"), &root))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    let res = app
        .send(get("/api/auth/roles?includeTotal=false", &root))
        .await;
    assert_eq!(res.json()["total"], 3);
}

/// `usersCount` comes from a trigger-maintained counter: it must follow
/// memberships added and removed, and users soft-deleted, restored and
/// hard-deleted, in statements the handlers do not make.
#[actix_web::test]
async fn users_count_follows_memberships_and_user_deletes() {
    use diesel_async::RunQueryDsl;
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee_count = || async {
        let res = app
            .send(get("/api/auth/roles?search=employee", &admin))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
        res.json()["items"][0]["usersCount"].as_i64().unwrap()
    };
    let run = |sql: String| async {
        let mut conn = app.db.conn().await.unwrap();
        diesel::sql_query(sql).execute(&mut *conn).await.unwrap();
    };
    assert_eq!(employee_count().await, 1);
    let (employee, admin_id) = (acme.employee, acme.admin);
    run(format!(
        "UPDATE users SET deleted_at = now() WHERE id = '{employee}'"
    ))
    .await;
    assert_eq!(employee_count().await, 0);
    run(format!(
        "UPDATE users SET deleted_at = NULL WHERE id = '{employee}'"
    ))
    .await;
    assert_eq!(employee_count().await, 1);
    run(format!(
        "INSERT INTO user_roles (user_id, role_id) SELECT '{admin_id}', id FROM roles \
         WHERE name = 'employee' AND tenant_id = (SELECT tenant_id FROM users WHERE id = '{admin_id}')"
    ))
    .await;
    assert_eq!(employee_count().await, 2);
    run(format!("DELETE FROM users WHERE id = '{employee}'")).await;
    assert_eq!(employee_count().await, 1);
    run(format!(
        "DELETE FROM user_roles WHERE user_id = '{admin_id}' AND role_id IN \
         (SELECT id FROM roles WHERE name = 'employee')"
    ))
    .await;
    assert_eq!(employee_count().await, 0);
}

/// Unknown keys are ignored, as the reference strips them; its custom-field
/// keys (`cf_*`, which stoa does not have) are refused naming the key, so no
/// client data is dropped silently (issue 25).
#[actix_web::test]
async fn unknown_keys_are_ignored_and_custom_fields_refused_by_name() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &admin,
            json!({"name": "Ops", "color": "red"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &admin,
            json!({"name": "Ops 2", "cf_color": "red", "cf_size": 3}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    let text = res.text();
    assert!(
        text.contains("cf_color") && text.contains("cf_size"),
        "{text}"
    );
    let res = app
        .send(get("/api/auth/roles?search=Ops%202", &admin))
        .await;
    assert_eq!(res.json()["total"], 0, "nothing stored");
}

/// Issue 49: a role the tenant's administrator made for the whole tenant
/// (its ACL reaches every organization, and grants nothing yet) is a
/// tenant-wide record: an administrator restricted to one branch reads it,
/// but neither renames, deletes nor gives it an ACL (403
/// `organization_out_of_scope`), and the role is unchanged after. Its own
/// roles (reaching its branch) stay its own to change.
#[actix_web::test]
async fn restricted_admins_do_not_change_tenant_wide_roles() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    let branch = branch(&app, &root, acme.organization_id).await;
    let manager = stoa_auth::testing::user_with_features(
        &app.db,
        &acme,
        "branch-admin@acme.com",
        &["*"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let manager = token_for(&app.db, manager).await;
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &root,
            json!({"name": "Tenant clerks"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let tenant_role = res.json()["id"].as_str().unwrap().to_string();
    let acl = |token: &str| {
        let app = &app;
        let tenant_role = tenant_role.clone();
        let token = token.to_string();
        async move {
            app.send(get(
                &format!("/api/auth/roles/acl?roleId={tenant_role}"),
                &token,
            ))
            .await
        }
    };
    // Readable to it.
    let before = acl(&manager).await;
    assert_eq!(before.status, 200, "{}", before.text());
    for (what, res) in [
        (
            "rename",
            app.send(put_json(
                "/api/auth/roles",
                &manager,
                json!({"id": tenant_role, "name": "Branch clerks"}),
            ))
            .await,
        ),
        (
            "acl",
            app.send(put_json(
                "/api/auth/roles/acl",
                &manager,
                json!({"roleId": tenant_role, "features": ["auth.users.list"], "organizations": [branch]}),
            ))
            .await,
        ),
        (
            "delete",
            app.send(delete(
                &format!("/api/auth/roles?id={tenant_role}"),
                &manager,
            ))
            .await,
        ),
    ] {
        assert_eq!(res.status, 403, "{what}: {}", res.text());
        assert_eq!(res.json()["code"], "organization_out_of_scope", "{what}");
    }
    let after = acl(&root).await;
    assert_eq!(after.status, 200, "{}", after.text());
    assert_eq!(after.json(), before.json());
    let res = app
        .send(get(&format!("/api/auth/roles?id={tenant_role}"), &root))
        .await;
    assert_eq!(names(&res.json()), vec!["Tenant clerks".to_string()]);

    // Its own role reaches its branch: renamed and deleted as before.
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &manager,
            json!({"name": "Branch staff"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let own = res.json()["id"].as_str().unwrap().to_string();
    let res = app
        .send(put_json(
            "/api/auth/roles",
            &manager,
            json!({"id": own, "name": "Branch team"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(delete(&format!("/api/auth/roles?id={own}"), &manager))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}
