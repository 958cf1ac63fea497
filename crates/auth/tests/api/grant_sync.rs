//! Grant sync: a module added after a tenant was created reaches its built-in
//! roles once; a default an administrator revoked is never re-added.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use stoa_acl::{Feature, ModuleInfo, Registry};
use stoa_auth::grant_sync::sync;
use stoa_auth::schema::{role_acls, roles};
use stoa_core::db::Db;
use uuid::Uuid;

use super::support::*;

/// The base registry plus a "widgets" module whose grants the built-in roles get.
fn with_widgets() -> Registry {
    let mut registry = stoa_auth::base_registry().unwrap();
    registry
        .register(
            ModuleInfo {
                id: "widgets",
                title: "Widgets",
            },
            &[
                Feature {
                    id: "widgets.view",
                    title: "View widgets",
                    module: "widgets",
                },
                Feature {
                    id: "widgets.edit",
                    title: "Edit widgets",
                    module: "widgets",
                },
            ],
        )
        .unwrap();
    registry.add_role_defaults("admin", &["widgets.view"]);
    registry.add_role_defaults("employee", &["widgets.edit"]);
    registry
}

async fn features(db: &Db, tenant: Uuid, role: &str) -> Vec<String> {
    let mut conn = db.conn().await.unwrap();
    role_acls::table
        .inner_join(roles::table)
        .filter(roles::tenant_id.eq(tenant))
        .filter(roles::name.eq(role))
        .select(role_acls::features)
        .first(&mut *conn)
        .await
        .unwrap()
}

async fn set_features(db: &Db, tenant: Uuid, role: &str, list: Vec<String>) {
    let mut conn = db.conn().await.unwrap();
    let id: Uuid = roles::table
        .filter(roles::tenant_id.eq(tenant))
        .filter(roles::name.eq(role))
        .select(roles::id)
        .first(&mut *conn)
        .await
        .unwrap();
    diesel::update(role_acls::table.filter(role_acls::role_id.eq(id)))
        .set(role_acls::features.eq(list))
        .execute(&mut *conn)
        .await
        .unwrap();
}

#[actix_web::test]
async fn a_new_modules_grants_reach_existing_tenants_once() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let registry = with_widgets();

    // Nothing to do for the grants the tenant was created with.
    let mut conn = app.db.conn().await.unwrap();
    let base = stoa_auth::base_registry().unwrap();
    assert_eq!(sync(&mut conn, &base).await.unwrap().added, 0);

    let report = sync(&mut conn, &registry).await.unwrap();
    assert_eq!(report.added, 2, "{report:?}");
    assert!(
        features(&app.db, acme.tenant_id, "admin")
            .await
            .contains(&"widgets.view".into())
    );
    assert!(
        features(&app.db, acme.tenant_id, "employee")
            .await
            .contains(&"widgets.edit".into())
    );
    assert_eq!(sync(&mut conn, &registry).await.unwrap().added, 0);
    drop(conn);

    // An administrator revokes one: it stays revoked.
    let mut admin = features(&app.db, acme.tenant_id, "admin").await;
    admin.retain(|f| f != "widgets.view");
    set_features(&app.db, acme.tenant_id, "admin", admin).await;
    let mut conn = app.db.conn().await.unwrap();
    assert_eq!(sync(&mut conn, &registry).await.unwrap().added, 0);
    assert!(
        !features(&app.db, acme.tenant_id, "admin")
            .await
            .contains(&"widgets.view".into())
    );

    // A tenant created now gets the defaults at once and nothing from sync.
    let beta = stoa_auth::testing::seed_tenant_with(&app.db, &registry, "Beta", "beta.com").await;
    assert!(
        features(&app.db, beta.tenant_id, "admin")
            .await
            .contains(&"widgets.view".into())
    );
    assert_eq!(sync(&mut conn, &registry).await.unwrap().added, 0);
}

#[actix_web::test]
async fn concurrent_syncs_add_each_grant_once() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let globex = stoa_auth::testing::seed_tenant(&app.db, "Globex", "globex.com").await;
    let registry = with_widgets();
    let (mut a, mut b) = (app.db.conn().await.unwrap(), app.db.conn().await.unwrap());
    let (one, two) = tokio::join!(sync(&mut a, &registry), sync(&mut b, &registry));
    let added = one.unwrap().added + two.unwrap().added;
    assert_eq!(added, 4, "two roles in two tenants");
    for tenant in [acme.tenant_id, globex.tenant_id] {
        let employee = features(&app.db, tenant, "employee").await;
        assert_eq!(employee.iter().filter(|f| *f == "widgets.edit").count(), 1);
    }
}
