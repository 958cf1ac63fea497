//! The widgets of a new tenant's default roles (the reference's
//! `onTenantCreated`): `superadmin` and `admin` get every widget, `employee`
//! the widgets enabled by default. The rows are tenant-wide (no
//! organization), so users of every organization inherit them.
//!
//! Roles are read from stoa-auth's `roles` table by name: provisioning runs
//! the seeders in one transaction on a connection, without the account
//! interfaces (the one place this crate reads another module's table).

use diesel::sql_types::{Array, Text, Uuid as SqlUuid};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::{NewTenant, Registry, TenantSeeder};
use stoa_core::AppError;
use uuid::Uuid;

use crate::model::{ROLE_WIDGETS_KIND, RoleWidgetsState, Scope, row_id};
use crate::queries;

pub struct RoleWidgetsSeeder;

#[derive(QueryableByName)]
struct RoleRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
}

/// The widget ids a default role starts with (`None`: not a default role).
pub fn default_widgets(registry: &Registry, role: &str) -> Option<Vec<String>> {
    let widgets = registry.widgets().iter();
    match role {
        "superadmin" | "admin" => Some(widgets.map(|w| w.id.to_string()).collect()),
        "employee" => Some(
            widgets
                .filter(|w| w.default_enabled)
                .map(|w| w.id.to_string())
                .collect(),
        ),
        _ => None,
    }
}

impl TenantSeeder for RoleWidgetsSeeder {
    fn id(&self) -> &'static str {
        "dashboards.role_widgets"
    }

    fn seed<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        registry: &'a Registry,
        tenant: &'a NewTenant,
    ) -> BoxFuture<'a, Result<(), AppError>> {
        Box::pin(async move {
            let names = ["superadmin", "admin", "employee"];
            let roles: Vec<RoleRow> = sql_query(
                "SELECT id, name FROM roles WHERE tenant_id = $1 AND deleted_at IS NULL \
                 AND name = ANY($2)",
            )
            .bind::<SqlUuid, _>(tenant.tenant_id)
            .bind::<Array<Text>, _>(&names[..])
            .load(conn)
            .await?;
            let scope = Scope {
                tenant_id: tenant.tenant_id,
                organization_id: None,
            };
            for role in roles {
                let Some(widget_ids) = default_widgets(registry, &role.name) else {
                    continue;
                };
                if widget_ids.is_empty() {
                    continue;
                }
                let id = row_id(ROLE_WIDGETS_KIND, role.id, scope.tenant_id, None);
                // What an administrator set (or cleared) since is kept.
                if queries::load_role_widgets(conn, id).await?.is_none() {
                    let state = RoleWidgetsState {
                        id,
                        role_id: role.id,
                        scope,
                        widget_ids,
                    };
                    queries::save_role_widgets(conn, &state).await?;
                }
            }
            Ok(())
        })
    }
}
