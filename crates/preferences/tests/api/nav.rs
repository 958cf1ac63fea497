//! The admin navigation: pages filtered by features, role and user
//! preferences applied in that order, sections, granted features, the selected
//! organization, query scope, and its round trips.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_auth::testing::{token_for, user_with_features};
use uuid::Uuid;

use super::sidebar::{in_lang, role_id};
use super::support::*;

const NAV: &str = "/api/auth/admin/nav";
const PREFS: &str = "/api/auth/sidebar/preferences";

/// A group as `(id, name, [(href, title)])`.
type Group = (String, String, Vec<(String, String)>);

/// The groups of a payload.
fn groups(body: &Value) -> Vec<Group> {
    body["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["id"].as_str().unwrap().to_string(),
                g["name"].as_str().unwrap().to_string(),
                g["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| {
                        (
                            i["href"].as_str().unwrap().to_string(),
                            i["title"].as_str().unwrap().to_string(),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

fn item_count(body: &Value) -> usize {
    groups(body).iter().map(|g| g.2.len()).sum()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn pages_follow_the_callers_features() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    let lister = user_with_features(
        &app.db,
        &acme,
        "lister@acme.com",
        &["auth.users.list"],
        None,
        None,
    )
    .await;
    let lister = token_for(&app.db, lister).await;
    let root = token_for(&app.db, acme.superadmin).await;

    let res = app.send(get(NAV, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(
        groups(&body),
        vec![
            (
                "directory".into(),
                "Directory".into(),
                vec![(
                    "/backend/directory/organizations".into(),
                    "Organizations".into()
                )]
            ),
            (
                "auth".into(),
                "Users & access".into(),
                vec![
                    ("/backend/users".into(), "Users".into()),
                    ("/backend/roles".into(), "Roles".into())
                ]
            ),
        ]
    );
    let users = &body["groups"][1]["items"][0];
    assert_eq!(users["id"], "auth.users");
    assert_eq!(users["defaultTitle"], "Users");
    assert_eq!(users["enabled"], true);
    assert_eq!(body["groups"][1]["defaultName"], "Users & access");
    let granted = strings(&body["grantedFeatures"]);
    assert!(granted.contains(&"auth.users.list".to_string()));
    assert!(granted.contains(&"directory.organizations.manage".to_string()));
    assert!(!granted.contains(&"directory.tenants.view".to_string()));
    assert!(granted.iter().all(|f| !f.contains('*')), "{granted:?}");
    assert_eq!(body["roles"], json!(["admin"]));
    let settings = &body["settingsSections"][0];
    assert_eq!(settings["id"], "auth");
    let settings_hrefs: Vec<&str> = settings["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["href"].as_str().unwrap())
        .collect();
    assert_eq!(
        settings_hrefs,
        vec!["/backend/settings/sidebar", "/backend/settings/features"]
    );
    assert_eq!(
        strings(&body["settingsPathPrefixes"]),
        vec![
            "/backend/settings",
            "/backend/settings/sidebar",
            "/backend/settings/features"
        ]
    );
    assert_eq!(body["profileSections"][0]["id"], "account");
    assert!(strings(&body["profilePathPrefixes"]).contains(&"/backend/profile".to_string()));

    // An employee sees fewer pages; a user with one feature sees one page.
    let res = app.send(get(NAV, &employee)).await;
    let employee_body = res.json();
    assert!(item_count(&employee_body) < item_count(&body));
    assert_eq!(employee_body["groups"], json!([]));
    assert_eq!(employee_body["settingsSections"], json!([]));
    assert_eq!(employee_body["grantedFeatures"], json!([]));
    assert_eq!(employee_body["roles"], json!(["employee"]));
    assert_eq!(
        employee_body["profileSections"][0]["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let res = app.send(get(NAV, &lister)).await;
    assert_eq!(
        groups(&res.json()),
        vec![(
            "auth".into(),
            "Users & access".into(),
            vec![("/backend/users".into(), "Users".into())]
        )]
    );
    assert_eq!(res.json()["grantedFeatures"], json!(["auth.users.list"]));

    // A super admin sees everything and holds every registered feature.
    let res = app.send(get(NAV, &root)).await;
    let root_body = res.json();
    assert!(item_count(&root_body) > item_count(&body));
    let catalog = registry();
    let all: Vec<String> = catalog.features().map(|f| f.id.to_string()).collect();
    assert_eq!(strings(&root_body["grantedFeatures"]), all);
}

#[actix_web::test]
async fn role_preference_then_own_preference() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let admin_role = role_id(&app.db, acme.tenant_id, "admin").await;
    let employee_role = role_id(&app.db, acme.tenant_id, "employee").await;

    // The admin role's preference: renamed group and item, groups reordered.
    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"scope": {"type": "role", "roleId": admin_role}, "settings": {
                "groupOrder": ["auth"],
                "groupLabels": {"auth": "Team"},
                "itemLabels": {"/backend/users": "Members", "/backend/roles": "Permissions"},
            }}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = app.send(get(NAV, &admin)).await.json();
    assert_eq!(
        groups(&body),
        vec![
            (
                "auth".into(),
                "Team".into(),
                vec![
                    ("/backend/users".into(), "Members".into()),
                    ("/backend/roles".into(), "Permissions".into())
                ]
            ),
            (
                "directory".into(),
                "Directory".into(),
                vec![(
                    "/backend/directory/organizations".into(),
                    "Organizations".into()
                )]
            ),
        ]
    );
    // What the role made of the sidebar is the user's default.
    assert_eq!(body["groups"][0]["defaultName"], "Team");
    assert_eq!(body["groups"][0]["items"][0]["defaultTitle"], "Members");

    // The user's own preference applies on top: hides, renames, reorders.
    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"settings": {
                "hiddenItems": ["/backend/roles"],
                "itemLabels": {"auth.users": "People"},
                "groupOrder": ["directory", "auth"],
            }}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let body = app.send(get(NAV, &admin)).await.json();
    assert_eq!(
        groups(&body),
        vec![
            (
                "directory".into(),
                "Directory".into(),
                vec![(
                    "/backend/directory/organizations".into(),
                    "Organizations".into()
                )]
            ),
            (
                "auth".into(),
                "Team".into(),
                vec![("/backend/users".into(), "People".into())]
            ),
        ]
    );
    assert_eq!(body["groups"][1]["items"][0]["defaultTitle"], "Members");

    // Other locales have neither preference.
    let body = app.send(in_lang(get(NAV, &admin), "es")).await.json();
    assert_eq!(groups(&body)[1].1, "Users & access");
    assert_eq!(item_count(&body), 3);

    // With several roles, the first by name that has a preference applies.
    let both = user_with_features(&app.db, &acme, "both@acme.com", &["auth.*"], None, None).await;
    {
        use stoa_auth::schema::user_roles;
        let mut conn = app.db.conn().await.unwrap();
        diesel::insert_into(user_roles::table)
            .values(vec![
                (
                    user_roles::user_id.eq(both),
                    user_roles::role_id.eq(employee_role),
                ),
                (
                    user_roles::user_id.eq(both),
                    user_roles::role_id.eq(admin_role),
                ),
            ])
            .execute(&mut *conn)
            .await
            .unwrap();
    }
    app.send(put_json(
        PREFS,
        &admin,
        json!({"scope": {"type": "role", "roleId": employee_role},
               "settings": {"groupLabels": {"auth": "Staff"}}}),
    ))
    .await;
    let both = token_for(&app.db, both).await;
    let body = app.send(get(NAV, &both)).await.json();
    // "admin" sorts before "employee" and before "role-both@acme.com".
    assert_eq!(groups(&body)[0].1, "Team");
}

#[actix_web::test]
async fn current_organization_brand_and_query_scope() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let globex = stoa_auth::testing::seed_tenant(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let root = token_for(&app.db, acme.superadmin).await;

    let body = app.send(get(NAV, &admin)).await.json();
    assert_eq!(
        body["currentOrganization"],
        json!({"id": acme.organization_id, "name": "Acme Corp"})
    );
    assert_eq!(body["brand"], Value::Null);
    {
        use stoa_directory::schema::organizations;
        let mut conn = app.db.conn().await.unwrap();
        diesel::update(organizations::table.find(acme.organization_id))
            .set((
                organizations::logo_url.eq("https://cdn.example.com/acme.png"),
                organizations::logo_preserve_aspect_ratio.eq(true),
            ))
            .execute(&mut *conn)
            .await
            .unwrap();
    }
    let body = app.send(get(NAV, &admin)).await.json();
    assert_eq!(
        body["brand"],
        json!({"name": "Acme Corp", "logo": {"src": "https://cdn.example.com/acme.png",
               "alt": "Acme Corp", "preserveAspectRatio": true}})
    );
    let body = app
        .send(get(&format!("{NAV}?orgId=__all__"), &admin))
        .await
        .json();
    assert_eq!(body["currentOrganization"], Value::Null);
    assert_eq!(body["brand"], Value::Null);
    let body = app
        .send(get(
            &format!("{NAV}?orgId={}", acme.organization_id),
            &admin,
        ))
        .await
        .json();
    assert_eq!(
        body["currentOrganization"]["id"],
        json!(acme.organization_id)
    );

    // A super admin with nothing selected has no current organization.
    let body = app.send(get(NAV, &root)).await.json();
    assert_eq!(body["currentOrganization"], Value::Null);
    // ...and may build the navigation for another tenant.
    let res = app
        .send(get(
            &format!(
                "{NAV}?tenantId={}&orgId={}",
                globex.tenant_id, globex.organization_id
            ),
            &root,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["currentOrganization"]["name"], "Globex");

    let res = app
        .send(get(&format!("{NAV}?tenantId={}", globex.tenant_id), &admin))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(
        res.json(),
        json!({"error": "Not authorized to target this tenant."})
    );
    let res = app
        .send(get(&format!("{NAV}?tenantId={}", acme.tenant_id), &admin))
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(get(
            &format!("{NAV}?orgId={}", globex.organization_id),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 422);
    assert_eq!(res.json()["code"], "organization_selection_invalid");
    for query in ["orgId=nope", "tenantId=nope"] {
        let res = app.send(get(&format!("{NAV}?{query}"), &admin)).await;
        assert_eq!(res.status, 400, "{query}");
    }
    assert_eq!(app.get(NAV).await.status, 401);
}

#[actix_web::test]
async fn no_allowed_organization_means_no_pages() {
    let app = start().await;
    let acme = acme(&app.db).await;
    // Restricted to an organization that does not exist: nothing is allowed.
    let boxed = user_with_features(
        &app.db,
        &acme,
        "boxed@acme.com",
        &["auth.*"],
        Some(vec![Uuid::new_v4()]),
        None,
    )
    .await;
    let boxed = token_for(&app.db, boxed).await;
    let res = app.send(get(NAV, &boxed)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["groups"], json!([]));
    assert_eq!(res.json()["grantedFeatures"], json!([]));
    assert_eq!(res.json()["settingsSections"], json!([]));
}

#[actix_web::test]
async fn navigation_makes_at_most_two_round_trips_after_authentication() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    app.send(put_json(
        PREFS,
        &admin,
        json!({"hiddenItems": ["/backend/roles"]}),
    ))
    .await;
    // The first request resolves and caches the ACL.
    assert_eq!(app.send(get(NAV, &admin)).await.status, 200);
    for _ in 0..3 {
        let before = stoa_core::db::thread_queries();
        let res = app.send(get(NAV, &admin)).await;
        assert_eq!(res.status, 200);
        assert_eq!(item_count(&res.json()), 2);
        let trips = stoa_core::db::thread_queries() - before;
        assert!(trips <= 3, "{trips} round trips (1 for authentication)");
    }
}

#[actix_web::test]
async fn the_navigation_is_kept_per_locale_until_a_preference_changes() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let statements = async |req| {
        let before = stoa_core::db::thread_queries();
        let res = app.send(req).await;
        assert_eq!(res.status, 200, "{}", res.text());
        (stoa_core::db::thread_queries() - before, res.json())
    };
    let (_, first) = statements(get(NAV, &admin)).await;
    let (n, again) = statements(get(NAV, &admin)).await;
    assert_eq!((n, &again), (1, &first), "a kept navigation");
    // Another locale is an answer of its own, kept as well.
    let (n, spanish) = statements(in_lang(get(NAV, &admin), "es")).await;
    assert!(n > 1, "computed for its locale ({n} statements)");
    let (n, _) = statements(in_lang(get(NAV, &admin), "es")).await;
    assert_eq!(n, 1, "the Spanish navigation kept too");
    assert_eq!(statements(get(NAV, &admin)).await, (1, first.clone()));
    // The caller's own preference moves the read model: computed again,
    // with the page hidden.
    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"hiddenItems": ["/backend/roles"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (n, hidden) = statements(get(NAV, &admin)).await;
    assert!(n > 1, "recomputed after a preference ({n} statements)");
    assert_eq!(item_count(&hidden) + 1, item_count(&first), "{hidden}");
    // So does a role's preference, which applies to everyone holding it.
    let admin_role = role_id(&app.db, acme.tenant_id, "admin").await;
    let res = app
        .send(put_json(
            PREFS,
            &admin,
            json!({"scope": {"type": "role", "roleId": admin_role},
                   "settings": {"groupLabels": {"auth": "Team"}}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (n, relabelled) = statements(get(NAV, &admin)).await;
    assert!(n > 1, "a role preference recomputes ({n} statements)");
    assert!(
        groups(&relabelled).iter().any(|g| g.1 == "Team"),
        "{relabelled}"
    );
    assert_eq!(spanish["grantedFeatures"], first["grantedFeatures"]);
}
