//! Tenant provisioning: the one way a tenant comes to exist.
//!
//! On the caller's connection (inside its transaction): the tenant, its root
//! organization, then every module's [`stoa_acl::TenantSeeder`] — stoa-auth's
//! creates the default roles with every module's default grants and the first
//! users — recorded in the seed ledger ([`crate::seed_sync`]). `stoa init` and `POST /directory/tenants` (later onboarding) call it,
//! so a tenant made through the API is usable at once.

use diesel_async::AsyncPgConnection;
use stoa_acl::{FirstUser, NewTenant, Registry};
use stoa_core::AppError;

use crate::dto::{CreateOrganization, CreateTenant};
use crate::service::{DirectoryService, PgDirectory};

/// What to provision.
#[derive(Clone, Debug)]
pub struct TenantRequest {
    pub name: String,
    pub is_active: bool,
    /// The root organization's name.
    pub organization: String,
    pub users: Vec<FirstUser>,
}

/// Creates the tenant, its root organization and every module's seed data.
pub async fn provision_tenant(
    conn: &mut AsyncPgConnection,
    registry: &Registry,
    request: TenantRequest,
) -> Result<NewTenant, AppError> {
    let tenant_id = PgDirectory
        .create_tenant_with(
            conn,
            &CreateTenant {
                name: request.name,
                is_active: Some(request.is_active),
            },
        )
        .await?;
    let organization_id = PgDirectory
        .create_organization(
            conn,
            tenant_id,
            CreateOrganization {
                tenant_id: Some(tenant_id),
                name: request.organization.trim().to_string(),
                slug: None,
                logo_url: None,
                logo_preserve_aspect_ratio: None,
                is_active: Some(true),
                parent_id: None,
                child_ids: None,
            },
        )
        .await?;
    let tenant = NewTenant {
        tenant_id,
        organization_id,
        users: request.users,
    };
    stoa_acl::seed_tenant(conn, registry, &tenant).await?;
    // The seeders ran: `stoa seed sync` never runs them again for it.
    crate::seed_sync::record_tenant(conn, registry, tenant_id).await?;
    Ok(tenant)
}
