//! The widgets of a new tenant's default roles (the reference's
//! `onTenantCreated`): `superadmin` and `admin` get every widget, `employee`
//! the widgets enabled by default. The rows are tenant-wide (no
//! organization), so users of every organization inherit them.
//!
//! Roles are looked up by name through the accounts owner's interface that
//! the registry carries for seeders (`Registry::roles`), on the provisioning
//! transaction's connection; without an accounts module there are no roles
//! and nothing to seed.

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use stoa_acl::{NewTenant, Registry, TenantSeeder};
use stoa_core::AppError;

use crate::model::{ROLE_WIDGETS_KIND, RoleWidgetsState, Scope, row_id};
use crate::queries;

pub struct RoleWidgetsSeeder;

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
            let Some(directory) = registry.roles() else {
                return Ok(());
            };
            let mut roles = Vec::new();
            for name in ["superadmin", "admin", "employee"] {
                // A default role the tenant lacks (renamed, deleted) gets nothing.
                if let Ok(found) = directory
                    .resolve_roles(conn, tenant.tenant_id, &[name.to_string()])
                    .await?
                {
                    roles.extend(found.into_iter().map(|role| (name, role.id)));
                }
            }
            let scope = Scope {
                tenant_id: tenant.tenant_id,
                organization_id: None,
            };
            for (name, role_id) in roles {
                let Some(widget_ids) = default_widgets(registry, name) else {
                    continue;
                };
                if widget_ids.is_empty() {
                    continue;
                }
                let id = row_id(ROLE_WIDGETS_KIND, role_id, scope.tenant_id, None);
                // What an administrator set (or cleared) since is kept.
                if queries::load_role_widgets(conn, id).await?.is_none() {
                    let state = RoleWidgetsState {
                        id,
                        role_id,
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
