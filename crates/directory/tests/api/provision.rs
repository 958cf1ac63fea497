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
