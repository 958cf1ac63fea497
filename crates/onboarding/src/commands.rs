//! The verification as a command: provisioning the workspace is logged in
//! the action log (in the new tenant) and emits `onboarding.request.completed`
//! with it. Not undoable: a workspace is removed by deleting its tenant.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_acl::{Onboarding, Registry};
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use stoa_directory::provision::{TenantRequest, provision_tenant};
use stoa_jobs::{JobScope, JobSpec};
use stoa_preferences::consents::{self, ConsentChange, ConsentKey};
use stoa_progress::enqueue_scoped;
use uuid::Uuid;

use crate::jobs::PREPARE_WORKSPACE;
use crate::model::{COMPLETED, RequestRow};
use crate::schema::onboarding_requests;

/// The role of the new workspace's first user.
pub const FIRST_USER_ROLE: &str = "admin";
/// The event a verified sign-up emits.
pub const COMPLETED_EVENT: &str = "onboarding.request.completed";
/// The action log's resource kind of a request.
pub const REQUEST_KIND: &str = "onboarding.request";

/// What a verification created.
#[derive(Clone, Debug)]
pub struct Verified {
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub user_id: Uuid,
    pub email: String,
    pub progress_job_id: Option<Uuid>,
}

/// Provisions the workspace of a locked, checked, pending `request`: the
/// tenant and its root organization (named after the form) and the admin
/// through the shared provisioning (every module's seeder), the marketing
/// consent when given, the demo-data job, and the request completed (its
/// password hash cleared: the user holds it now).
pub struct VerifySignUp {
    pub request: RequestRow,
    pub accounts: Arc<dyn Onboarding>,
    pub registry: Arc<Registry>,
    pub consent_key: ConsentKey,
    pub deals: i64,
    pub products: i64,
}

impl Command for VerifySignUp {
    type Output = Verified;

    fn id(&self) -> &'static str {
        "onboarding.requests.verify"
    }

    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(Verified, LogEntry), AppError>> {
        Box::pin(async move {
            let row = self.request;
            let mut first =
                self.accounts
                    .first_user(&row.email, row.password_hash.clone(), FIRST_USER_ROLE)?;
            // The reference's display name: "first last", trimmed.
            let name = format!("{} {}", row.first_name.trim(), row.last_name.trim());
            first.name = Some(name.trim().to_string()).filter(|n| !n.is_empty());
            let user_id = first.id;
            let tenant = provision_tenant(
                conn,
                &self.registry,
                TenantRequest {
                    name: row.organization_name.clone(),
                    is_active: true,
                    organization: row.organization_name.clone(),
                    users: vec![first],
                },
            )
            .await?;
            if row.marketing_consent {
                consents::record(
                    conn,
                    &self.consent_key,
                    ConsentChange {
                        user_id,
                        tenant_id: Some(tenant.tenant_id),
                        organization_id: Some(tenant.organization_id),
                        consent_type: "marketing_email".into(),
                        granted: true,
                        source: Some("onboarding".into()),
                        ip_address: row.client_ip.clone(),
                    },
                )
                .await?;
            }
            let (deals, products) = (self.deals.max(0), self.products.max(0));
            let queued = enqueue_scoped(
                conn,
                &JobScope {
                    tenant_id: tenant.tenant_id,
                    organization_id: Some(tenant.organization_id),
                    user_id: Some(user_id),
                    api_key_id: None,
                },
                JobSpec::new(
                    PREPARE_WORKSPACE,
                    json!({"requestId": row.id, "deals": deals, "products": products}),
                    usize::try_from(deals + products).unwrap_or(0),
                )
                .name("Prepare the workspace")
                .description(format!(
                    "{deals} demo deals and {products} demo products for the new workspace"
                )),
            )
            .await?;
            diesel::update(onboarding_requests::table.find(row.id))
                .set((
                    onboarding_requests::status.eq(COMPLETED),
                    onboarding_requests::completed_at.eq(diesel::dsl::now),
                    onboarding_requests::tenant_id.eq(tenant.tenant_id),
                    onboarding_requests::organization_id.eq(tenant.organization_id),
                    onboarding_requests::user_id.eq(user_id),
                    onboarding_requests::password_hash.eq(None::<String>),
                    onboarding_requests::progress_job_id.eq(queued.progress_job_id),
                    onboarding_requests::updated_at.eq(diesel::dsl::now),
                ))
                .execute(conn)
                .await?;
            let after = json!({
                "id": row.id,
                "email": row.email,
                "status": COMPLETED,
                "organizationName": row.organization_name,
                "marketingConsent": row.marketing_consent,
                "tenantId": tenant.tenant_id,
                "organizationId": tenant.organization_id,
                "userId": user_id,
            });
            let entry = LogEntry {
                action_label: Some("Self-service sign-up verified".into()),
                resource_kind: Some(REQUEST_KIND.into()),
                resource_id: Some(row.id.to_string()),
                snapshot_after: Some(after),
                tenant_id: Some(tenant.tenant_id),
                organization_id: Some(tenant.organization_id),
                ..Default::default()
            }
            .with_event(
                COMPLETED_EVENT,
                json!({
                    "id": row.id,
                    "tenantId": tenant.tenant_id,
                    "organizationId": tenant.organization_id,
                    "userId": user_id,
                }),
            );
            Ok((
                Verified {
                    tenant_id: tenant.tenant_id,
                    organization_id: tenant.organization_id,
                    user_id,
                    email: row.email,
                    progress_job_id: Some(queued.progress_job_id),
                },
                entry,
            ))
        })
    }
}
