//! Key mutations as commands, so they appear in the action log. Neither is
//! undoable: undoing a deletion would revive a key that may have leaked, and
//! undoing a creation is what deleting the key already does. Snapshots never
//! contain the secret or its hash.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{Value, json};
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, Event, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::ApiKeysError;
use crate::model::{ApiKeyRole, CreatedApiKey};
use crate::schema::api_keys;
use crate::secret;
use crate::service::NewKey;

pub const KEY_KIND: &str = "api_keys.key";
pub const CREATE: &str = "api_keys.keys.create";
pub const DELETE: &str = "api_keys.keys.delete";

/// What the action log shows of a key.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KeySnapshot {
    pub id: Uuid,
    pub name: String,
    pub description: Option<String>,
    pub key_prefix: String,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub role_ids: Vec<Uuid>,
    pub created_by: Uuid,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub expires_at: Option<OffsetDateTime>,
    pub deleted: bool,
}

fn to_value(s: &KeySnapshot) -> Value {
    serde_json::to_value(s).unwrap_or(Value::Null)
}

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

/// Soft-deletes a key of `tenant_id` (and every key created through it).
pub struct DeleteKeyCommand {
    pub tenant_id: Uuid,
    pub id: Uuid,
    /// The organizations the caller may reach (`None` = the whole tenant);
    /// a key outside them answers 404 like an unknown one.
    pub organizations: Option<Vec<Uuid>>,
}

type SnapshotRow = (
    Uuid,
    String,
    Option<String>,
    String,
    Uuid,
    Option<Uuid>,
    Vec<Uuid>,
    Uuid,
    Option<OffsetDateTime>,
);

impl Command for DeleteKeyCommand {
    type Output = ();

    fn id(&self) -> &'static str {
        DELETE
    }

    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _actor: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let row: Option<SnapshotRow> = api_keys::table
                .filter(api_keys::id.eq(self.id))
                .filter(api_keys::tenant_id.eq(self.tenant_id))
                .filter(api_keys::deleted_at.is_null())
                .select((
                    api_keys::id,
                    api_keys::name,
                    api_keys::description,
                    api_keys::key_prefix,
                    api_keys::tenant_id,
                    api_keys::organization_id,
                    api_keys::role_ids,
                    api_keys::created_by,
                    api_keys::expires_at,
                ))
                .for_update()
                .first(conn)
                .await
                .optional()?;
            let Some((id, name, description, key_prefix, tenant_id, org, role_ids, by, exp)) = row
            else {
                return Err(ApiKeysError::NotFound.into());
            };
            if let Some(allowed) = &self.organizations
                && !org.is_some_and(|o| allowed.contains(&o))
            {
                return Err(ApiKeysError::NotFound.into());
            }
            let now = OffsetDateTime::now_utc();
            diesel::update(api_keys::table.filter(api_keys::id.eq(id)))
                .set((api_keys::deleted_at.eq(now), api_keys::updated_at.eq(now)))
                .execute(conn)
                .await?;
            // Keys created through this one carry no more than it did: they go too.
            let cascaded: Vec<Uuid> = diesel::update(
                api_keys::table
                    .filter(api_keys::creator_key_ids.contains(vec![id]))
                    .filter(api_keys::deleted_at.is_null()),
            )
            .set((api_keys::deleted_at.eq(now), api_keys::updated_at.eq(now)))
            .returning(api_keys::id)
            .get_results(conn)
            .await?;
            let before = KeySnapshot {
                id,
                name,
                description,
                key_prefix,
                tenant_id,
                organization_id: org,
                role_ids,
                created_by: by,
                expires_at: exp,
                deleted: false,
            };
            let after = KeySnapshot {
                deleted: true,
                ..before.clone()
            };
            let entry = LogEntry {
                action_label: Some("Delete API key".into()),
                resource_kind: Some(KEY_KIND.into()),
                resource_id: Some(id.to_string()),
                snapshot_before: Some(to_value(&before)),
                snapshot_after: Some(to_value(&after)),
                context: (!cascaded.is_empty()).then(|| json!({"cascadedKeyIds": cascaded})),
                tenant_id: Some(tenant_id),
                organization_id: org,
                events: vec![Event {
                    name: "api_keys.key.deleted".into(),
                    payload: json!({"id": id, "tenantId": tenant_id, "cascadedKeyIds": cascaded}),
                }],
                ..Default::default()
            };
            Ok(((), entry))
        })
    }
}
