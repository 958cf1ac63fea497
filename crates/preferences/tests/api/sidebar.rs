//! Sidebar preferences: per-locale user and role preferences, copying to and
//! clearing from roles, optimistic locking, the authorization walk of every
//! sidebar/nav/consent route (and the invitation resend beside them), tenant
//! isolation.

use std::sync::{Arc, OnceLock};

use actix_web::test::TestRequest;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::{AuthContext, Authenticator, Credentials, ResolvedAcl};
use stoa_auth::testing::{token_for, user_with_features};
use stoa_auth::{AuthConfig, AuthState};
use stoa_core::AppError;
use stoa_core::command::schema::action_logs;
use stoa_core::db::Db;
use stoa_testkit::requests::delete;
use uuid::Uuid;

use super::support::*;

const PREFS: &str = "/api/auth/sidebar/preferences";

/// The id of role `name` in `tenant`.
pub async fn role_id(db: &Db, tenant: Uuid, name: &str) -> Uuid {
    use stoa_auth::schema::roles;
    let mut conn = db.conn().await.unwrap();
    roles::table
        .filter(roles::tenant_id.eq(tenant))
        .filter(roles::name.eq(name))
        .select(roles::id)
        .first(&mut *conn)
        .await
        .unwrap()
}

/// Action-log entries of `command`: (resource id, tenant, snapshot after, context).
pub async fn logged(
    db: &Db,
    command: &str,
) -> Vec<(Option<String>, Option<Uuid>, Option<Value>, Option<Value>)> {
    let mut conn = db.conn().await.unwrap();
    action_logs::table
        .filter(action_logs::command_id.eq(command))
        .order(action_logs::created_at.asc())
        .select((
            action_logs::resource_id,
            action_logs::tenant_id,
            action_logs::snapshot_after,
            action_logs::context_json,
        ))
        .load(&mut *conn)
        .await
        .unwrap()
}

/// `req` with an `Accept-Language` header.
pub fn in_lang(req: TestRequest, lang: &str) -> TestRequest {
    req.insert_header(("accept-language", lang))
}

/// An API key that acts without a user, in the tenant set once seeded.
pub struct UserlessKey(pub Arc<OnceLock<Uuid>>);

impl Authenticator for UserlessKey {
    fn authenticate<'a>(
        &'a self,
        _: &'a Credentials,
    ) -> BoxFuture<'a, Result<AuthContext, AppError>> {
        Box::pin(async move {
            Ok(
                AuthContext::for_api_key(self.0.get().copied(), Uuid::new_v4()).with_acl(
                    ResolvedAcl {
                        features: vec!["auth.*".into()],
                        ..Default::default()
                    },
                ),
            )
        })
    }
}

/// An app whose API keys (`x-api-key: any`) act without a user.
pub async fn start_with_userless_keys(
    tenant: Arc<OnceLock<Uuid>>,
) -> stoa_testkit::TestApp<impl stoa_testkit::AppService> {
    stoa_testkit::app()
        .module_with(move |db| {
            let state = AuthState::new(db.clone(), AuthConfig::for_tests(), Arc::new(registry()))
                .unwrap()
                .with_api_keys(Arc::new(UserlessKey(tenant)));
            let auth = stoa_auth::configure(Arc::new(state));
            let preferences = stoa_preferences::configure(super::support::state(db));
            Arc::new(move |cfg: &mut stoa_core::http::ServiceConfig| {
                auth(cfg);
                preferences(cfg);
            })
        })
        .module(stoa_directory::configure)
        .start()
        .await
}

#[actix_web::test]
async fn preferences_start_empty_and_are_kept_per_locale() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;

    let res = app.send(get(PREFS, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["locale"], "en");
    assert_eq!(
        body["settings"],
        json!({"version": 2, "groupOrder": [], "groupLabels": {}, "itemLabels": {},
               "hiddenItems": [], "itemOrder": {}})
    );
    assert_eq!(body["canApplyToRoles"], true);
    assert_eq!(body["scope"], json!({"type": "user"}));
    assert_eq!(body["updatedAt"], Value::Null);
    let roles: Vec<&str> = body["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(roles, vec!["admin", "employee", "superadmin"]);
    assert!(
        body["roles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["hasPreference"] == false)
    );

    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"settings": {
                "groupOrder": [" auth ", "directory", "auth", "  "],
                "groupLabels": {"auth": " Team ", "directory": "   "},
                "itemLabels": {"/backend/users": "People"},
                "hiddenItems": ["/backend/roles", "/backend/roles"],
                "itemOrder": {"auth": ["/backend/roles", "/backend/users"]},
            }}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let saved = res.json();
    let expected = json!({
        "version": 2,
        "groupOrder": ["auth", "directory"],
        "groupLabels": {"auth": "Team"},
        "itemLabels": {"/backend/users": "People"},
        "hiddenItems": ["/backend/roles"],
        "itemOrder": {"auth": ["/backend/roles", "/backend/users"]},
    });
    assert_eq!(saved["settings"], expected);
    assert_eq!(saved["appliedRoles"], json!([]));
    assert_eq!(saved["clearedRoles"], json!([]));
    assert_eq!(saved["scope"], json!({"type": "user"}));
    assert!(saved["updatedAt"].is_string());

    let res = app.send(get(PREFS, &admin)).await;
    assert_eq!(res.json()["settings"], expected);
    assert_eq!(res.json()["updatedAt"], saved["updatedAt"]);

    // Another locale (cookie or Accept-Language) has its own, still empty.
    let res = app
        .send(get(PREFS, &admin).cookie(actix_web::cookie::Cookie::new("locale", "pl")))
        .await;
    assert_eq!(res.json()["locale"], "pl");
    assert_eq!(res.json()["settings"]["hiddenItems"], json!([]));
    let res = app
        .send(in_lang(get(PREFS, &admin), "de-DE,de;q=0.9"))
        .await;
    assert_eq!(res.json()["locale"], "de");
    assert_eq!(res.json()["updatedAt"], Value::Null);

    // Clients of the reference send the settings at the top level.
    let res = app
        .send(in_lang(
            put_json(PREFS, &admin, json!({"hiddenItems": ["/backend/users"]})),
            "de",
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["locale"], "de");
    assert_eq!(
        res.json()["settings"]["hiddenItems"],
        json!(["/backend/users"])
    );
    let res = app.send(get(PREFS, &admin)).await;
    assert_eq!(
        res.json()["settings"],
        expected,
        "the en preference is untouched"
    );

    // Every write is in the action log.
    let entries = logged(&app.db, "auth.sidebar.preferences.update").await;
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].1, Some(acme.tenant_id));
    assert_eq!(entries[0].2.as_ref().unwrap()["locale"], "en");
    assert_eq!(entries[1].2.as_ref().unwrap()["locale"], "de");
}

#[actix_web::test]
async fn bad_settings_are_refused_and_change_nothing() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee_role = role_id(&app.db, acme.tenant_id, "employee").await;
    let many = |n: usize| -> Vec<String> { (0..n).map(|i| format!("/x{i}")).collect() };
    for (body, field) in [
        (
            json!({"settings": {"groupOrder": many(201)}}),
            "settings.groupOrder",
        ),
        (json!({"groupOrder": many(201)}), "groupOrder"),
        (
            json!({"settings": {"hiddenItems": many(501)}}),
            "settings.hiddenItems",
        ),
        (
            json!({"settings": {"itemOrder": {"g": many(501)}}}),
            "settings.itemOrder.g",
        ),
        (
            json!({"settings": {"groupLabels": {"g": "x".repeat(121)}}}),
            "settings.groupLabels.g",
        ),
        (
            json!({"settings": {"itemLabels": {"/a": ""}}}),
            "settings.itemLabels./a",
        ),
        (
            json!({"settings": {"hiddenItems": [""]}}),
            "settings.hiddenItems.0",
        ),
        (json!({"settings": {"version": 0}}), "settings.version"),
        (json!({"settings": {"version": "2"}}), "settings.version"),
        (
            json!({"settings": {"groupOrder": "auth"}}),
            "settings.groupOrder",
        ),
        (json!({"applyToRoles": ["nope"]}), "applyToRoles"),
        (json!({"scope": {"type": "team"}}), "scope"),
        (json!({"scope": {"type": "role"}}), "scope"),
        (
            json!({"scope": {"type": "role", "roleId": employee_role}, "applyToRoles": [employee_role]}),
            "applyToRoles",
        ),
        (
            json!({"scope": {"type": "role", "roleId": employee_role}, "clearRoleIds": [employee_role]}),
            "clearRoleIds",
        ),
        (json!({"settings": {}, "hiddenItems": ["/a"]}), "settings"),
    ] {
        let res = app.send(put_json(PREFS, &admin, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        // Body errors say `Invalid input` and name the field in `issues`.
        let body = res.json();
        let paths: Vec<String> = body["issues"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                let segments: Vec<String> = i["path"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| s.as_str().map_or_else(|| s.to_string(), String::from))
                    .collect();
                format!("{} {}", segments.join("."), i["message"])
            })
            .collect();
        let error = body["error"].as_str().unwrap().to_string();
        assert!(
            error.contains(field) || paths.iter().any(|p| p.contains(field)),
            "{body}"
        );
    }
    let res = app
        .send(bearer(
            TestRequest::put()
                .uri(PREFS)
                .insert_header(("content-type", "application/json"))
                .set_payload("{"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 400);
    let res = app.send(get(&format!("{PREFS}?roleId=nope"), &admin)).await;
    assert_eq!(res.status, 400);

    let res = app.send(get(PREFS, &admin)).await;
    assert_eq!(res.json()["updatedAt"], Value::Null);
    let res = app
        .send(get(&format!("{PREFS}?roleId={employee_role}"), &admin))
        .await;
    assert_eq!(res.json()["updatedAt"], Value::Null);
    assert!(
        logged(&app.db, "auth.sidebar.preferences.update")
            .await
            .is_empty()
    );
}

#[actix_web::test]
async fn role_preferences_are_written_copied_cleared_and_deleted() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = role_id(&app.db, acme.tenant_id, "employee").await;
    let admin_role = role_id(&app.db, acme.tenant_id, "admin").await;
    let settings = json!({"hiddenItems": ["/backend/roles"]});

    // Copy the caller's settings to a role.
    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"settings": settings, "applyToRoles": [employee, employee]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["appliedRoles"], json!([employee]));
    let roles = res.json()["roles"].as_array().unwrap().clone();
    let with_pref: Vec<&Value> = roles
        .iter()
        .filter(|r| r["hasPreference"] == true)
        .collect();
    assert_eq!(with_pref.len(), 1);
    assert_eq!(with_pref[0]["id"], json!(employee));

    let res = app
        .send(get(&format!("{PREFS}?roleId={employee}"), &admin))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(
        res.json()["scope"],
        json!({"type": "role", "roleId": employee})
    );
    assert_eq!(
        res.json()["settings"]["hiddenItems"],
        json!(["/backend/roles"])
    );
    assert!(res.json()["updatedAt"].is_string());

    // Write a role's preference directly; other locales stay empty.
    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"scope": {"type": "role", "roleId": admin_role},
                   "settings": {"groupLabels": {"auth": "Access"}}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json()["scope"],
        json!({"type": "role", "roleId": admin_role})
    );
    assert_eq!(res.json()["appliedRoles"], json!([]));
    let res = app
        .send(get(&format!("{PREFS}?roleId={admin_role}"), &admin))
        .await;
    assert_eq!(
        res.json()["settings"]["groupLabels"],
        json!({"auth": "Access"})
    );
    let res = app
        .send(in_lang(
            get(&format!("{PREFS}?roleId={admin_role}"), &admin),
            "ko",
        ))
        .await;
    assert_eq!(res.json()["settings"]["groupLabels"], json!({}));
    // The caller's own preference was not touched by the role write.
    let res = app.send(get(PREFS, &admin)).await;
    assert_eq!(res.json()["settings"]["groupLabels"], json!({}));

    // Clearing removes a role's preference; applying wins over clearing.
    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"settings": settings, "applyToRoles": [admin_role],
                   "clearRoleIds": [employee, admin_role]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["appliedRoles"], json!([admin_role]));
    assert_eq!(res.json()["clearedRoles"], json!([employee]));
    let res = app
        .send(get(&format!("{PREFS}?roleId={employee}"), &admin))
        .await;
    assert_eq!(res.json()["updatedAt"], Value::Null);

    // Unknown roles are named.
    let ghost = Uuid::new_v4();
    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"settings": settings, "applyToRoles": [employee, ghost]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.json(),
        json!({"error": "Invalid roles", "missing": [ghost]})
    );

    // Delete: idempotent, only the current locale.
    app.send(in_lang(
        put_json(
            PREFS,
            &admin,
            json!({"scope": {"type": "role", "roleId": admin_role}, "settings": settings}),
        ),
        "pl",
    ))
    .await;
    for _ in 0..2 {
        let res = app
            .send(delete(&format!("{PREFS}?roleId={admin_role}"), &admin))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
        assert_eq!(
            res.json(),
            json!({"ok": true, "scope": {"type": "role", "roleId": admin_role}})
        );
    }
    assert_eq!(
        logged(&app.db, "auth.sidebar.preferences.delete")
            .await
            .len(),
        1
    );
    let res = app
        .send(get(&format!("{PREFS}?roleId={admin_role}"), &admin))
        .await;
    assert_eq!(res.json()["updatedAt"], Value::Null);
    let res = app
        .send(in_lang(
            get(&format!("{PREFS}?roleId={admin_role}"), &admin),
            "pl",
        ))
        .await;
    assert_eq!(
        res.json()["settings"]["hiddenItems"],
        json!(["/backend/roles"])
    );

    let res = app.send(delete(PREFS, &admin)).await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.json(),
        json!({"error": "roleId query parameter is required"})
    );
    let res = app
        .send(delete(&format!("{PREFS}?roleId={ghost}"), &admin))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), json!({"error": "Role not found"}));
    let res = app
        .send(get(&format!("{PREFS}?roleId={ghost}"), &admin))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), json!({"error": "Role not found"}));
    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"scope": {"type": "role", "roleId": ghost}, "settings": settings}),
        ))
        .await;
    assert_eq!(res.status, 404);
}

#[actix_web::test]
async fn stale_writes_are_refused_with_409() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let lock = "x-om-ext-optimistic-lock-expected-updated-at";
    let first = app
        .send(put_json(PREFS, &admin, json!({"hiddenItems": ["/a"]})))
        .await;
    let first_version = first.json()["updatedAt"].as_str().unwrap().to_string();
    // A matching version passes.
    let second = app
        .send(
            put_json(PREFS, &admin, json!({"hiddenItems": ["/b"]}))
                .insert_header((lock, first_version.clone())),
        )
        .await;
    assert_eq!(second.status, 200, "{}", second.text());
    let current = second.json()["updatedAt"].as_str().unwrap().to_string();
    assert_ne!(current, first_version);
    // The old version is stale now.
    let res = app
        .send(
            put_json(PREFS, &admin, json!({"hiddenItems": ["/c"]}))
                .insert_header((lock, first_version.clone())),
        )
        .await;
    assert_eq!(res.status, 409);
    assert_eq!(
        res.json(),
        json!({"error": "record_modified", "code": "optimistic_lock_conflict",
               "currentUpdatedAt": current, "expectedUpdatedAt": first_version})
    );
    let res = app
        .send(
            put_json(PREFS, &admin, json!({"hiddenItems": ["/c"]}))
                .insert_header((lock, "yesterday")),
        )
        .await;
    assert_eq!(res.status, 400);
    let res = app.send(get(PREFS, &admin)).await;
    assert_eq!(res.json()["settings"]["hiddenItems"], json!(["/b"]));

    // Role preferences too.
    let role = role_id(&app.db, acme.tenant_id, "employee").await;
    let body = json!({"scope": {"type": "role", "roleId": role}, "hiddenItems": ["/a"]});
    let v1 = app.send(put_json(PREFS, &admin, body.clone())).await.json()["updatedAt"].clone();
    // Writing the same settings again changes nothing, not even the version.
    let same = app.send(put_json(PREFS, &admin, body.clone())).await;
    assert_eq!(same.json()["updatedAt"], v1);
    app.send(put_json(
        PREFS,
        &admin,
        json!({"scope": {"type": "role", "roleId": role}, "hiddenItems": ["/b"]}),
    ))
    .await;
    let res = app
        .send(
            put_json(
                PREFS,
                &admin,
                json!({"scope": {"type": "role", "roleId": role}, "hiddenItems": ["/z"]}),
            )
            .insert_header((lock, v1.as_str().unwrap())),
        )
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
}

#[actix_web::test]
async fn tenants_never_see_each_others_roles() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let globex = stoa_auth::testing::seed_tenant(&app.db, "Globex", "globex.com").await;
    let acme_admin = token_for(&app.db, acme.admin).await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    let acme_role = role_id(&app.db, acme.tenant_id, "employee").await;
    app.send(put_json(
        PREFS,
        &acme_admin,
        json!({"scope": {"type": "role", "roleId": acme_role}, "hiddenItems": ["/secret"]}),
    ))
    .await;
    app.send(put_json(
        PREFS,
        &acme_admin,
        json!({"hiddenItems": ["/mine"]}),
    ))
    .await;

    let res = app
        .send(get(&format!("{PREFS}?roleId={acme_role}"), &globex_admin))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(put_json(
            PREFS,
            &globex_admin,
            json!({"scope": {"type": "role", "roleId": acme_role}, "hiddenItems": []}),
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(put_json(
            PREFS,
            &globex_admin,
            json!({"hiddenItems": [], "applyToRoles": [acme_role]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["missing"], json!([acme_role]));
    let res = app
        .send(delete(
            &format!("{PREFS}?roleId={acme_role}"),
            &globex_admin,
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = app.send(get(PREFS, &globex_admin)).await;
    assert_eq!(res.json()["settings"]["hiddenItems"], json!([]));
    let names: Vec<Value> = res.json()["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert!(!names.contains(&json!(acme_role)));
    // Acme's role preference is intact.
    let res = app
        .send(get(&format!("{PREFS}?roleId={acme_role}"), &acme_admin))
        .await;
    assert_eq!(res.json()["settings"]["hiddenItems"], json!(["/secret"]));
}

/// Every route of this feature set: anonymous 401, and 403 without its feature.
#[actix_web::test]
async fn every_route_needs_a_caller_and_its_feature() {
    let app = start().await;
    let acme = acme(&app.db).await;
    // Holds none of the features below.
    let nobody = user_with_features(&app.db, &acme, "nobody@acme.com", &[], None, None).await;
    let nobody = token_for(&app.db, nobody).await;
    let role = role_id(&app.db, acme.tenant_id, "employee").await;
    let variant = Uuid::new_v4();
    let routes: Vec<(&str, String, Option<Value>, Option<&str>)> = vec![
        ("GET", PREFS.into(), None, None),
        (
            "GET",
            format!("{PREFS}?roleId={role}"),
            None,
            Some("auth.sidebar.manage"),
        ),
        (
            "PUT",
            PREFS.into(),
            Some(json!({"hiddenItems": []})),
            Some("auth.sidebar.manage"),
        ),
        (
            "DELETE",
            format!("{PREFS}?roleId={role}"),
            None,
            Some("auth.sidebar.manage"),
        ),
        ("GET", "/api/auth/sidebar/variants".into(), None, None),
        (
            "POST",
            "/api/auth/sidebar/variants".into(),
            Some(json!({})),
            Some("auth.sidebar.manage"),
        ),
        (
            "GET",
            format!("/api/auth/sidebar/variants/{variant}"),
            None,
            None,
        ),
        (
            "PUT",
            format!("/api/auth/sidebar/variants/{variant}"),
            Some(json!({"name": "x"})),
            Some("auth.sidebar.manage"),
        ),
        (
            "DELETE",
            format!("/api/auth/sidebar/variants/{variant}"),
            None,
            Some("auth.sidebar.manage"),
        ),
        ("GET", "/api/auth/admin/nav".into(), None, None),
        (
            "GET",
            format!("/api/auth/users/consents?userId={}", acme.employee),
            None,
            Some("auth.users.edit"),
        ),
        (
            "POST",
            "/api/auth/users/resend-invite".into(),
            Some(json!({"id": acme.employee})),
            Some("auth.users.create"),
        ),
    ];
    for (method, path, body, feature) in routes {
        let build = || {
            let req = match method {
                "GET" => TestRequest::get(),
                "POST" => TestRequest::post(),
                "PUT" => TestRequest::put(),
                _ => TestRequest::delete(),
            }
            .uri(&path);
            match &body {
                Some(b) => req.set_json(b),
                None => req,
            }
        };
        let res = app.send(build()).await;
        assert_eq!(res.status, 401, "{method} {path} anonymous");
        assert_eq!(
            res.json(),
            json!({"error": "Unauthorized"}),
            "{method} {path}"
        );
        let res = app.send(bearer(build(), &nobody)).await;
        match feature {
            Some(feature) => {
                assert_eq!(res.status, 403, "{method} {path}: {}", res.text());
                assert_eq!(
                    res.json(),
                    json!({"error": "Forbidden", "requiredFeatures": [feature]}),
                    "{method} {path}"
                );
            }
            None => assert_ne!(res.status, 403, "{method} {path}: {}", res.text()),
        }
    }
    // A caller without the feature still reads its own preference.
    let res = app.send(get(PREFS, &nobody)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["canApplyToRoles"], false);
    assert_eq!(res.json()["roles"], json!([]));
}

#[actix_web::test]
async fn api_keys_without_a_user_cannot_keep_preferences() {
    let tenant = Arc::new(OnceLock::new());
    let app = start_with_userless_keys(tenant.clone()).await;
    let acme = acme(&app.db).await;
    tenant.set(acme.tenant_id).unwrap();
    let key = |req: TestRequest| req.insert_header(("x-api-key", "omk_test.key"));
    let res = app.send(key(TestRequest::get().uri(PREFS))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["updatedAt"], Value::Null);
    let res = app
        .send(key(TestRequest::put()
            .uri(PREFS)
            .set_json(json!({"hiddenItems": ["/a"]}))))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(
        res.json()["error"],
        "Cannot save preferences: no user associated with this API key"
    );
    for req in [
        TestRequest::get().uri("/api/auth/sidebar/variants"),
        TestRequest::post()
            .uri("/api/auth/sidebar/variants")
            .set_json(json!({})),
        TestRequest::get().uri(&format!("/api/auth/sidebar/variants/{}", Uuid::new_v4())),
    ] {
        let res = app.send(key(req)).await;
        assert_eq!(res.status, 403, "{}", res.text());
        assert_eq!(res.json(), json!({"error": "No user context"}));
    }
    // The navigation still answers.
    let res = app
        .send(key(TestRequest::get().uri("/api/auth/admin/nav")))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}
