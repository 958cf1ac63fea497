//! Kept list answers (`stoa_core::http::read_cache`): a repeated list is one
//! statement, every read is still access-logged, and no write, revocation or
//! demotion ever lets a kept answer be served stale or to the wrong caller.

use actix_web::test::TestRequest;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_auth::testing::{token_for, user_with_features};
use stoa_testkit::sql;
use uuid::Uuid;

use super::support::*;

const USERS: &str = "/api/auth/users?pageSize=50";
const ROLES: &str = "/api/auth/roles?pageSize=50";

/// Reads access-logged for `actor`, once the entries kept answers queued are
/// written: a row each, and each repeated read a row holds.
async fn reads_of(db: &stoa_core::db::Db, actor: Uuid) -> i64 {
    stoa_core::command::access::settle(db).await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = db.conn().await.unwrap();
    let row: Count = diesel::sql_query(
        "SELECT coalesce(sum(1 + coalesce(cardinality(repeat_ats), 0)), 0)::bigint AS n \
             FROM access_reads WHERE actor_user_id = $1",
    )
    .bind::<diesel::sql_types::Uuid, _>(actor)
    .get_result(&mut *conn)
    .await
    .unwrap();
    row.n
}

fn item<'a>(body: &'a Value, email: &str) -> &'a Value {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["email"] == email)
        .unwrap_or_else(|| panic!("{email} not listed: {body}"))
}

#[actix_web::test]
async fn a_repeated_list_is_one_statement_and_still_logged() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    // Warms the ACL cache and a tenant connection (row-level security: a
    // connection that last served another scope costs one `set_config`).
    app.send(get("/api/auth/roles", &admin)).await;

    let (n, first) = app.statements(USERS, &admin).await;
    assert_eq!(n, 2, "first read: session check and page");
    let (n, again) = app.statements(USERS, &admin).await;
    assert_eq!(n, 1, "kept answer: one statement");
    assert_eq!(again, first);
    // Both reads wrote their entry, naming every listed user.
    assert_eq!(reads_of(&app.db, acme.admin).await, 2);
    let listed = first["items"].as_array().unwrap().len() as i64;
    let mut conn = app.db.conn().await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let entries: Count = diesel::sql_query(
        "SELECT count(*) AS n FROM access_logs WHERE actor_user_id = $1 \
         AND resource_kind = 'auth.user' AND context_json->>'path' = '/api/auth/users'",
    )
    .bind::<diesel::sql_types::Uuid, _>(acme.admin)
    .get_result(&mut *conn)
    .await
    .unwrap();
    assert_eq!(entries.n, 2 * listed);
    // The kept answer's entry is the one the page statement wrote, with
    // entry ids of its own.
    let same: Count = diesel::sql_query(
        "SELECT count(DISTINCT (access_type, fields, context_json, \
         (SELECT array_agg(x ORDER BY x) FROM unnest(resource_ids) x))) AS n \
         FROM access_reads WHERE actor_user_id = $1",
    )
    .bind::<diesel::sql_types::Uuid, _>(acme.admin)
    .get_result(&mut *conn)
    .await
    .unwrap();
    assert_eq!(same.n, 1);
    let ids: Count = diesel::sql_query(
        "SELECT count(DISTINCT id) AS n FROM access_logs WHERE actor_user_id = $1",
    )
    .bind::<diesel::sql_types::Uuid, _>(acme.admin)
    .get_result(&mut *conn)
    .await
    .unwrap();
    assert_eq!(ids.n, 2 * listed);
    drop(conn);

    // Another query string is another answer; the role list is kept too.
    let (n, _) = app.statements("/api/auth/users?pageSize=2", &admin).await;
    assert_eq!(n, 2);
    let (n, roles) = app.statements(ROLES, &admin).await;
    assert_eq!(n, 2);
    let (n, again) = app.statements(ROLES, &admin).await;
    assert_eq!((n, &again), (1, &roles));
}

#[actix_web::test]
async fn every_write_the_page_shows_makes_the_next_read_fresh() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    app.statements(USERS, &admin).await;
    app.statements(ROLES, &admin).await;

    // A user's own row (name).
    let res = app
        .send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "name": "Renamed Person"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (n, body) = app.statements(USERS, &admin).await;
    assert_eq!(item(&body, "employee@acme.com")["name"], "Renamed Person");
    assert_eq!(
        n, 3,
        "a stale answer costs one check before the normal path"
    );
    let (n, _) = app.statements(USERS, &admin).await;
    assert_eq!(n, 1, "kept again");

    // A role name (roles: the ACL version).
    let role: Uuid = {
        let (_, roles) = app.statements(ROLES, &admin).await;
        let employee = roles["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "employee")
            .unwrap()
            .clone();
        employee["id"].as_str().unwrap().parse().unwrap()
    };
    let res = app
        .send(put_json(
            "/api/auth/roles",
            &admin,
            json!({"id": role, "name": "Field staff"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (_, body) = app.statements(USERS, &admin).await;
    assert_eq!(
        item(&body, "employee@acme.com")["roles"],
        json!(["Field staff"])
    );

    // Organization and tenant names.
    sql(
        &app.db,
        &format!(
            "UPDATE organizations SET name = 'Acme HQ' WHERE id = '{}'",
            acme.organization_id
        ),
    )
    .await;
    sql(
        &app.db,
        &format!(
            "UPDATE tenants SET name = 'Acme Group' WHERE id = '{}'",
            acme.tenant_id
        ),
    )
    .await;
    let (_, body) = app.statements(USERS, &admin).await;
    let employee = item(&body, "employee@acme.com");
    assert_eq!(employee["organizationName"], "Acme HQ");
    assert_eq!(employee["tenantName"], "Acme Group");
    let (_, roles) = app.statements(ROLES, &admin).await;
    assert_eq!(roles["items"][0]["tenantName"], "Acme Group");

    // A deleted user leaves the list and the role's count.
    let count_of = |roles: &Value| {
        roles["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "Field staff")
            .unwrap()["usersCount"]
            .clone()
    };
    assert_eq!(count_of(&roles), 1);
    let res = app
        .send(delete(
            &format!("/api/auth/users?id={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (_, body) = app.statements(USERS, &admin).await;
    assert!(
        body["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["email"] != "employee@acme.com")
    );
    let (_, roles) = app.statements(ROLES, &admin).await;
    assert_eq!(count_of(&roles), 0);

    // A login (last_login_at, and with it updatedAt) is a write too.
    let (_, before) = app.statements(USERS, &admin).await;
    let res = app.send(login_form("admin@acme.com", PASSWORD)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (n, after) = app.statements(USERS, &admin).await;
    assert_eq!(n, 3);
    assert_ne!(
        item(&before, "admin@acme.com")["updatedAt"],
        item(&after, "admin@acme.com")["updatedAt"]
    );
}

#[actix_web::test]
async fn a_kept_answer_never_outlives_the_callers_rights() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    app.statements(USERS, &admin).await;
    app.statements(USERS, &admin).await;

    // Another user asking the same thing gets their own answer: 403.
    assert_eq!(app.send(get(USERS, &employee)).await.status, 403);

    // Demoted: the admin role loses the feature.
    let admin_role: Uuid = {
        let (_, roles) = app.statements(ROLES, &admin).await;
        roles["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "admin")
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    sql(
        &app.db,
        &format!(
            "UPDATE role_acls SET features = ARRAY['auth.roles.list'] \
             WHERE role_id = '{admin_role}'"
        ),
    )
    .await;
    let res = app.send(get(USERS, &admin)).await;
    assert_eq!(res.status, 403, "{}", res.text());

    // Moved to another organization, deactivated, signed out: never served.
    let second = token_for(&app.db, acme.superadmin).await;
    app.statements(USERS, &second).await;
    let (n, _) = app.statements(USERS, &second).await;
    assert_eq!(n, 1);
    sql(
        &app.db,
        &format!(
            "UPDATE users SET is_active = false WHERE id = '{}'",
            acme.superadmin
        ),
    )
    .await;
    assert_eq!(app.send(get(USERS, &second)).await.status, 401);
    sql(
        &app.db,
        &format!(
            "UPDATE users SET is_active = true WHERE id = '{}'",
            acme.superadmin
        ),
    )
    .await;
    app.statements(USERS, &second).await;
    let (n, _) = app.statements(USERS, &second).await;
    assert_eq!(n, 1);
    let res = app
        .send(bearer(TestRequest::post().uri("/api/auth/logout"), &second))
        .await;
    assert_eq!(res.status, 302);
    assert_eq!(app.send(get(USERS, &second)).await.status, 401);
}

#[actix_web::test]
async fn each_organization_selection_has_its_own_answer() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    let branch = branch(&app, &root, acme.organization_id).await;
    let manager = user_with_features(
        &app.db,
        &acme,
        "manager@acme.com",
        &["auth.users.list"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let manager = token_for(&app.db, manager).await;
    let admin = token_for(&app.db, acme.admin).await;
    let everyone = app.statements(USERS, &admin).await.1;
    // Warm the manager's ACL: the counts below are of a cached caller.
    app.send(get("/api/auth/profile", &manager)).await;
    assert!(everyone["items"].as_array().unwrap().len() > 1);
    // The restricted manager sees only the branch, kept or not.
    for expected_statements in [2, 1] {
        let (n, body) = app.statements(USERS, &manager).await;
        assert_eq!(n, expected_statements);
        assert_eq!(body["items"].as_array().unwrap().len(), 1);
        assert_eq!(body["items"][0]["email"], "manager@acme.com");
    }
    // A selection is part of the key: the admin selecting the branch is
    // answered by the normal path first (the user list shows the caller's
    // allowed organizations whatever is selected), then from the cache.
    let selected = |token: &str| {
        get(USERS, token).insert_header((stoa_acl::SELECTED_ORG_HEADER, branch.to_string()))
    };
    let warm = get("/api/auth/profile", &admin)
        .insert_header((stoa_acl::SELECTED_ORG_HEADER, branch.to_string()));
    assert_eq!(app.send(warm).await.status, 200);
    for expected_statements in [2, 1] {
        let before = stoa_core::db::thread_queries();
        let res = app.send(selected(&admin)).await;
        assert_eq!(res.status, 200, "{}", res.text());
        assert_eq!(
            stoa_core::db::thread_queries() - before,
            expected_statements
        );
        assert_eq!(res.json(), everyone);
    }
    let (n, again) = app.statements(USERS, &admin).await;
    assert_eq!((n, again), (1, everyone));
}

#[actix_web::test]
async fn another_tenants_writes_leave_a_tenants_lists_kept_but_not_every_tenants() {
    let app = start_admin().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let superadmin = token_for(&app.db, acme.superadmin).await;
    app.statements(USERS, &admin).await;
    app.statements(ROLES, &admin).await;
    let (_, every) = app.statements(USERS, &superadmin).await;
    item(&every, "admin@globex.com");

    // A login in Globex writes a Globex user (last_login_at).
    let res = app.send(login_form("admin@globex.com", PASSWORD)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (n, _) = app.statements(USERS, &admin).await;
    assert_eq!(n, 1, "Acme's user list is still the answer");
    let (n, _) = app.statements(ROLES, &admin).await;
    assert_eq!(n, 1, "Acme's role list too");
    let (n, after) = app.statements(USERS, &superadmin).await;
    assert_eq!(n, 3, "a list of every tenant is read again");
    assert_ne!(
        item(&every, "admin@globex.com")["updatedAt"],
        item(&after, "admin@globex.com")["updatedAt"]
    );

    // A user moved from Globex into Acme changes both tenants' pages.
    sql(
        &app.db,
        &format!(
            "UPDATE users SET tenant_id = '{}', organization_id = '{}' WHERE id = '{}'",
            acme.tenant_id, acme.organization_id, globex.employee
        ),
    )
    .await;
    let (n, body) = app.statements(USERS, &admin).await;
    assert_eq!(n, 3);
    item(&body, "employee@globex.com");
    // Rows of no tenant bump the name every page sums.
    sql(
        &app.db,
        &format!(
            "UPDATE users SET tenant_id = NULL, organization_id = NULL WHERE id = '{}'",
            globex.employee
        ),
    )
    .await;
    let (n, body) = app.statements(USERS, &admin).await;
    assert_eq!(n, 3);
    assert!(
        body["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["email"] != "employee@globex.com")
    );
    let (n, _) = app.statements(USERS, &admin).await;
    assert_eq!(n, 1);
    sql(
        &app.db,
        &format!(
            "UPDATE users SET name = 'Nobody' WHERE id = '{}'",
            globex.employee
        ),
    )
    .await;
    let (n, _) = app.statements(USERS, &admin).await;
    assert_eq!(
        n, 3,
        "a write of a user without a tenant reaches every list"
    );
}
