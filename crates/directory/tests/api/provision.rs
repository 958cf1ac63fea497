//! Tenants are provisioned: one made through the API starts like one made by
//! `stoa init`, with its root organization, default roles and grants, and
//! every module's seed data.

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::{NewTenant, Registry, TenantSeeder};
use stoa_core::AppError;
use stoa_directory::dto::CreateOrganization;
use stoa_directory::{DirectoryService, PgDirectory};

use super::support::*;

/// A module seeder: every new tenant gets a "Seeded" organization.
struct SeedsAnOrganization;

impl TenantSeeder for SeedsAnOrganization {
    fn id(&self) -> &'static str {
        "test.organization"
    }

    fn seed<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Registry,
        tenant: &'a NewTenant,
    ) -> BoxFuture<'a, Result<(), AppError>> {
        Box::pin(async move {
            let input = CreateOrganization {
                tenant_id: Some(tenant.tenant_id),
                name: "Seeded".into(),
                slug: None,
                logo_url: None,
                logo_preserve_aspect_ratio: None,
                is_active: Some(true),
                parent_id: Some(tenant.organization_id),
                child_ids: None,
            };
            PgDirectory
                .create_organization(conn, tenant.tenant_id, input)
                .await?;
            Ok(())
        })
    }
}

fn registry() -> Registry {
    let mut registry = stoa_auth::base_registry().unwrap();
    registry.add_seeder(Arc::new(SeedsAnOrganization));
    registry
}

#[actix_web::test]
async fn a_tenant_created_by_api_has_roles_grants_and_seed_data() {
    let app = stoa_testkit::app()
        .module_with(|db| {
            Arc::new(stoa_auth::configure(
                stoa_auth::testing::state_with_registry(db, registry(), |_| {}),
            ))
        })
        .module(stoa_directory::configure)
        .start()
        .await;
    let acme = seed_tenant(&app.db, "Acme Corp", "acme.com").await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(post_json(
            "/api/directory/tenants",
            &sa,
            json!({"name": "Initech"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let tenant = res.json()["id"].as_str().unwrap().to_string();

    let roles = app
        .send(get(&format!("/api/auth/roles?tenantId={tenant}"), &sa))
        .await;
    assert_eq!(roles.status, 200, "{}", roles.text());
    let roles = roles.json();
    let mut names: Vec<&str> = roles["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["admin", "employee", "superadmin"], "{roles}");
    let admin_role = roles["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "admin")
        .unwrap()["id"]
        .clone();
    let acl = app
        .send(get(
            &format!(
                "/api/auth/roles/acl?roleId={}&tenantId={tenant}",
                admin_role.as_str().unwrap()
            ),
            &sa,
        ))
        .await
        .json();
    let features = acl["features"].as_array().unwrap();
    assert!(features.contains(&json!("auth.*")), "{acl}");

    // The root organization (named after the tenant) and the module's seed.
    let orgs = app
        .send(
            get("/api/directory/organizations?view=manage", &sa)
                .insert_header(("x-om-selected-tenant", tenant.clone())),
        )
        .await;
    assert_eq!(orgs.status, 200, "{}", orgs.text());
    let orgs = orgs.json();
    let items: Vec<&Value> = orgs["items"].as_array().unwrap().iter().collect();
    let root = items.iter().find(|o| o["name"] == "Initech").expect("root");
    assert_eq!(root["parentId"], json!(null));
    let seeded = items
        .iter()
        .find(|o| o["name"] == "Seeded")
        .expect("seeded");
    assert_eq!(seeded["parentId"], root["id"]);
}

/// Counts the live "Seeded" organizations of `tenant`.
async fn seeded_organizations(db: &stoa_core::db::Db, tenant: uuid::Uuid) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = db.conn().await.unwrap();
    diesel_async::RunQueryDsl::get_result::<N>(
        diesel::sql_query(
            "SELECT count(*) AS n FROM organizations \
             WHERE tenant_id = $1 AND name = 'Seeded' AND deleted_at IS NULL",
        )
        .bind::<diesel::sql_types::Uuid, _>(tenant),
        &mut *conn,
    )
    .await
    .unwrap()
    .n
}

/// Counts the roles and users of `tenant` (what the accounts seeder makes).
async fn roles_of(db: &stoa_core::db::Db, tenant: uuid::Uuid) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = db.conn().await.unwrap();
    diesel_async::RunQueryDsl::get_result::<N>(
        diesel::sql_query(
            "SELECT (SELECT count(*) FROM roles WHERE tenant_id = $1)                   + (SELECT count(*) FROM users WHERE tenant_id = $1) AS n",
        )
        .bind::<diesel::sql_types::Uuid, _>(tenant),
        &mut *conn,
    )
    .await
    .unwrap()
    .n
}

#[actix_web::test]
async fn seed_sync_gives_older_tenants_a_new_seeder_once_and_never_re_adds_deleted_data() {
    let app = stoa_testkit::app().start().await;
    // Acme exists before the module that seeds organizations.
    let acme = seed_tenant(&app.db, "Acme Corp", "acme.com").await;
    let roles_before = roles_of(&app.db, acme.tenant_id).await;
    let mut conn = app.db.conn().await.unwrap();
    // The old registry's seeders are already recorded for Acme.
    assert_eq!(
        stoa_directory::seed_sync::recorded(&mut conn, acme.tenant_id)
            .await
            .unwrap(),
        1
    );
    let with_module = registry();
    // Initech is provisioned with the module: seeded there, and recorded.
    let initech =
        stoa_auth::testing::seed_tenant_with(&app.db, &with_module, "Initech", "initech.com").await;
    assert_eq!(seeded_organizations(&app.db, initech.tenant_id).await, 1);

    let report = stoa_directory::seed_sync::sync(&mut conn, &with_module)
        .await
        .unwrap();
    assert_eq!(report.seeded, 1, "only Acme lacked the seeder");
    assert_eq!(seeded_organizations(&app.db, acme.tenant_id).await, 1);
    assert_eq!(seeded_organizations(&app.db, initech.tenant_id).await, 1);
    // The accounts seeder (first users, default roles) never runs again.
    assert_eq!(roles_of(&app.db, acme.tenant_id).await, roles_before);

    // Again: nothing to do.
    let again = stoa_directory::seed_sync::sync(&mut conn, &with_module)
        .await
        .unwrap();
    assert_eq!(again.seeded, 0);
    assert_eq!(seeded_organizations(&app.db, acme.tenant_id).await, 1);

    // An administrator deletes the seeded organization: it stays deleted.
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(
            "UPDATE organizations SET deleted_at = now() WHERE tenant_id = $1 AND name = 'Seeded'",
        )
        .bind::<diesel::sql_types::Uuid, _>(acme.tenant_id),
        &mut *conn,
    )
    .await
    .unwrap();
    let after_delete = stoa_directory::seed_sync::sync(&mut conn, &with_module)
        .await
        .unwrap();
    assert_eq!(after_delete.seeded, 0);
    assert_eq!(seeded_organizations(&app.db, acme.tenant_id).await, 0);
}

/// A seeder that fails: the whole sync rolls back and the next run retries.
struct Fails;

impl TenantSeeder for Fails {
    fn id(&self) -> &'static str {
        "test.fails"
    }
    fn order(&self) -> i32 {
        200
    }
    fn seed<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: &'a Registry,
        _: &'a NewTenant,
    ) -> BoxFuture<'a, Result<(), AppError>> {
        Box::pin(async { Err(AppError::internal("seed store unavailable")) })
    }
}

#[actix_web::test]
async fn a_failing_seeder_leaves_no_data_and_is_retried() {
    let app = stoa_testkit::app().start().await;
    let acme = seed_tenant(&app.db, "Acme Corp", "acme.com").await;
    let mut failing = registry();
    failing.add_seeder(Arc::new(Fails));
    let mut conn = app.db.conn().await.unwrap();
    assert!(
        stoa_directory::seed_sync::sync(&mut conn, &failing)
            .await
            .is_err()
    );
    assert_eq!(seeded_organizations(&app.db, acme.tenant_id).await, 0);
    assert_eq!(
        stoa_directory::seed_sync::recorded(&mut conn, acme.tenant_id)
            .await
            .unwrap(),
        1,
        "nothing recorded"
    );
    // Without the failing seeder the organization seeder now runs.
    let report = stoa_directory::seed_sync::sync(&mut conn, &registry())
        .await
        .unwrap();
    assert_eq!(report.seeded, 1);
    assert_eq!(seeded_organizations(&app.db, acme.tenant_id).await, 1);
}
