//! Tenant writes as commands: logged, not undoable (as in the reference).

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::Registry;
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use uuid::Uuid;

use super::TENANT_KIND;
use crate::dto::{CreateTenant, UpdateTenant};
use crate::provision::{TenantRequest, provision_tenant};
use crate::service::{DirectoryService, PgDirectory};

/// The entry of a tenant write, emitting `directory.tenant.created`,
/// `.updated` or `.deleted` (payload `{id}`).
fn tenant_entry(label: &str, id: Uuid, before: Option<Value>, after: Option<Value>) -> LogEntry {
    let verb = match (&before, &after) {
        (None, _) => "created",
        (Some(_), Some(_)) => "updated",
        (Some(_), None) => "deleted",
    };
    LogEntry {
        action_label: Some(label.into()),
        resource_kind: Some(TENANT_KIND.into()),
        resource_id: Some(id.to_string()),
        snapshot_before: before,
        snapshot_after: after,
        tenant_id: Some(id),
        ..Default::default()
    }
    .with_event(format!("directory.tenant.{verb}"), json!({ "id": id }))
}

async fn tenant_value(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Value>, AppError> {
    Ok(PgDirectory
        .tenant(conn, id)
        .await?
        .map(|t| json!({"id": t.id, "name": t.name, "isActive": t.is_active})))
}

/// Tenant writes: logged, not undoable. A created tenant is provisioned
/// (root organization, default roles, module seed data) with the registry.
pub enum TenantCommand {
    Create(CreateTenant, Arc<Registry>),
    Update(UpdateTenant),
    Delete(Uuid),
}

impl Command for TenantCommand {
    type Output = Uuid;
    fn id(&self) -> &'static str {
        match self {
            Self::Create(..) => "directory.tenants.create",
            Self::Update(_) => "directory.tenants.update",
            Self::Delete(_) => "directory.tenants.delete",
        }
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(Uuid, LogEntry), AppError>> {
        Box::pin(async move {
            match self {
                Self::Create(input, registry) => {
                    let request = TenantRequest {
                        organization: input.name.clone(),
                        name: input.name,
                        is_active: input.is_active.unwrap_or(true),
                        users: Vec::new(),
                    };
                    let id = provision_tenant(conn, &registry, request).await?.tenant_id;
                    let after = tenant_value(conn, id).await?;
                    Ok((id, tenant_entry("Create tenant", id, None, after)))
                }
                Self::Update(input) => {
                    let before = tenant_value(conn, input.id).await?;
                    PgDirectory.update_tenant(conn, &input).await?;
                    let after = tenant_value(conn, input.id).await?;
                    Ok((
                        input.id,
                        tenant_entry("Update tenant", input.id, before, after),
                    ))
                }
                Self::Delete(id) => {
                    let before = tenant_value(conn, id).await?;
                    PgDirectory.delete_tenant(conn, id).await?;
                    Ok((id, tenant_entry("Delete tenant", id, before, None)))
                }
            }
        })
    }
}
