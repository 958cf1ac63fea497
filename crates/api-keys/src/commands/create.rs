//! Creating a key: its own command, off the resource kit. The key's prefix
//! and secret are drawn while it is inserted (a taken prefix draws again), and
//! the secret is handed back once, in the answer: no state the kit writes and
//! records can carry it (crate README, "Not on the kit").

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, Event, LogEntry};
use uuid::Uuid;

use super::{CREATE, KEY_KIND, KeySnapshot, to_value};
use crate::model::{ApiKeyRole, CreatedApiKey};
use crate::schema::api_keys;
use crate::secret;
use crate::service::NewKey;

/// Attempts at drawing an unused prefix (32 random bits each) before giving up.
const PREFIX_ATTEMPTS: usize = 8;

/// Inserts a new key with a fresh secret.
pub struct CreateKeyCommand(pub NewKey);

impl Command for CreateKeyCommand {
    type Output = CreatedApiKey;

    fn id(&self) -> &'static str {
        CREATE
    }

    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _actor: &'a Actor,
    ) -> BoxFuture<'a, Result<(CreatedApiKey, LogEntry), AppError>> {
        Box::pin(async move {
            let key = self.0;
            let role_ids: Vec<Uuid> = key.roles.iter().map(|r| r.id).collect();
            let mut created = None;
            for _ in 0..PREFIX_ATTEMPTS {
                let fresh = secret::generate().map_err(AppError::internal)?;
                // A taken prefix (ON CONFLICT) just draws again, without
                // aborting the surrounding transaction.
                let id: Option<Uuid> = diesel::insert_into(api_keys::table)
                    .values((
                        api_keys::name.eq(&key.name),
                        api_keys::description.eq(&key.description),
                        api_keys::tenant_id.eq(key.tenant_id),
                        api_keys::organization_id.eq(key.organization_id),
                        api_keys::key_prefix.eq(&fresh.prefix),
                        api_keys::key_hash.eq(&fresh.hash),
                        api_keys::role_ids.eq(&role_ids),
                        api_keys::created_by.eq(key.created_by),
                        api_keys::creator_user_id.eq(key.creator_user_id),
                        api_keys::creator_key_ids.eq(&key.creator_key_ids),
                        api_keys::expires_at.eq(key.expires_at),
                    ))
                    .on_conflict(api_keys::key_prefix)
                    .do_nothing()
                    .returning(api_keys::id)
                    .get_result(conn)
                    .await
                    .optional()?;
                if let Some(id) = id {
                    created = Some((id, fresh));
                    break;
                }
            }
            let (id, fresh) = created
                .ok_or_else(|| AppError::internal("no unused API key prefix after 8 draws"))?;
            let snapshot = KeySnapshot {
                id,
                name: key.name.clone(),
                description: key.description.clone(),
                key_prefix: fresh.prefix.clone(),
                tenant_id: key.tenant_id,
                organization_id: key.organization_id,
                role_ids,
                created_by: key.created_by,
                expires_at: key.expires_at,
                deleted: false,
                cascaded: Vec::new(),
            };
            let entry = LogEntry {
                action_label: Some("Create API key".into()),
                resource_kind: Some(KEY_KIND.into()),
                resource_id: Some(id.to_string()),
                snapshot_after: Some(to_value(&snapshot)),
                tenant_id: Some(key.tenant_id),
                organization_id: key.organization_id,
                events: vec![Event {
                    name: "api_keys.key.created".into(),
                    payload: json!({"id": id, "tenantId": key.tenant_id}),
                }],
                ..Default::default()
            };
            let output = CreatedApiKey {
                id,
                name: key.name,
                key_prefix: fresh.prefix.clone(),
                secret: fresh.secret.clone(),
                tenant_id: key.tenant_id,
                organization_id: key.organization_id,
                roles: key
                    .roles
                    .into_iter()
                    .map(|r| ApiKeyRole {
                        id: r.id,
                        name: Some(r.name),
                    })
                    .collect(),
            };
            Ok((output, entry))
        })
    }
}
