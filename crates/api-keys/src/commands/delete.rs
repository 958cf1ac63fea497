//! Deleting a key through the resource kit: [`KeySnapshot`] is the kit's
//! resource, `api_keys.keys.delete` its one `Save` command. The kit locks the
//! key's row, checks the caller on the key ([`Resource::writable_by`]: the
//! tenant, the organizations the caller sees, the reach, `api_keys.delete`)
//! and records the entry; the write soft-deletes the key and every key made
//! through it. Not undoable: the entry carries no undo payload and no undo
//! handler is registered.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_acl::resource::{self, Resource};
use stoa_core::AppError;
use stoa_core::command::tracked::Tracked;
use stoa_core::command::{Event, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{KEY_KIND, KeySnapshot, to_value};
use crate::error::ApiKeysError;
use crate::schema::api_keys;

/// The action label of a delete.
pub const LABEL: &str = "Delete API key";
/// The feature a delete needs.
const FEATURE: &str = "api_keys.delete";

/// Keys are written only by their create command and their delete; undo
/// and redo never reach a key (no handler is registered for either).
fn not_undoable() -> AppError {
    AppError::internal("API keys are not undoable")
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

impl Tracked for KeySnapshot {
    const KIND: &'static str = KEY_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
    }

    /// The live key `id` (a deleted key is gone for every caller: 404).
    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        let row: Option<SnapshotRow> = api_keys::table
            .filter(api_keys::id.eq(id))
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
            .first(conn)
            .await
            .optional()?;
        Ok(row.map(
            |(id, name, description, key_prefix, tenant_id, org, role_ids, by, exp)| Self {
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
                cascaded: Vec::new(),
            },
        ))
    }

    async fn restore(&self, _: &mut AsyncPgConnection) -> Result<(), AppError> {
        Err(not_undoable())
    }

    async fn erase(_: &mut AsyncPgConnection, _: Uuid) -> Result<(), AppError> {
        Err(not_undoable())
    }

    fn view(&self) -> Value {
        to_value(self)
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    stoa_acl::kit_authorize!();
}

/// Who may delete `key`: a caller of its tenant that sees its organization
/// (a key outside the organizations a non-super caller sees, or bound to
/// none while its view is narrowed, is 404 like an unknown one, as the list
/// hides it), inside its organization reach, with `api_keys.delete`.
fn deletable(ctx: &AuthContext, key: &KeySnapshot) -> Result<(), AppError> {
    let not_found = || AppError::from(ApiKeysError::NotFound);
    if ctx.tenant_id != Some(key.tenant_id) {
        return Err(not_found());
    }
    if !ctx.is_super_admin()
        && let Some(visible) = &ctx.acl.visible_organization_ids
        && !key.organization_id.is_some_and(|o| visible.contains(&o))
    {
        return Err(not_found());
    }
    ctx.require_writable(Some(key.tenant_id), key.organization_id, not_found)?;
    ctx.require(FEATURE)
}

impl Resource for KeySnapshot {
    const TABLE: &'static str = "api_keys";
    const FEATURE: &'static str = FEATURE;
    type Services = ();

    fn id(&self) -> Uuid {
        self.id
    }
    fn tenant_id(&self) -> Uuid {
        self.tenant_id
    }
    fn organization(&self) -> Option<Uuid> {
        self.organization_id
    }
    fn not_found() -> AppError {
        ApiKeysError::NotFound.into()
    }
    /// The key's own visibility rule ([`deletable`]), on the key before and
    /// after the delete alike.
    fn writable_by(&self, ctx: &AuthContext) -> Option<Result<(), AppError>> {
        Some(deletable(ctx, self))
    }

    /// The entry of a delete as keys always logged it: both snapshots, the
    /// key's organization, the cascaded keys, no undo payload.
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        let Some(key) = after.or(before) else {
            return LogEntry::default();
        };
        let cascaded = after.map(|a| a.cascaded.clone()).unwrap_or_default();
        LogEntry {
            action_label: Some(label.into()),
            resource_kind: Some(KEY_KIND.into()),
            resource_id: Some(key.id.to_string()),
            snapshot_before: before.map(to_value),
            snapshot_after: after.map(to_value),
            context: (!cascaded.is_empty()).then(|| json!({"cascadedKeyIds": cascaded})),
            tenant_id: Some(key.tenant_id),
            organization_id: key.organization_id,
            events: vec![Event {
                name: "api_keys.key.deleted".into(),
                payload: json!({"id": key.id, "tenantId": key.tenant_id, "cascadedKeyIds": cascaded}),
            }],
            ..Default::default()
        }
    }

    /// Soft-deletes the key and the keys made through it (they carry no more
    /// than it did), and returns the deleted state naming them.
    async fn write(
        conn: &mut AsyncPgConnection,
        before: Option<&Self>,
        after: Option<&Self>,
    ) -> Result<Option<Self>, AppError> {
        let (Some(before), Some(after)) = (before, after) else {
            return Err(not_undoable());
        };
        if before.deleted || !after.deleted {
            return Err(not_undoable());
        }
        let now = OffsetDateTime::now_utc();
        diesel::update(api_keys::table.filter(api_keys::id.eq(after.id)))
            .set((api_keys::deleted_at.eq(now), api_keys::updated_at.eq(now)))
            .execute(conn)
            .await?;
        let cascaded: Vec<Uuid> = diesel::update(
            api_keys::table
                .filter(api_keys::creator_key_ids.contains(vec![after.id]))
                .filter(api_keys::deleted_at.is_null()),
        )
        .set((api_keys::deleted_at.eq(now), api_keys::updated_at.eq(now)))
        .returning(api_keys::id)
        .get_results(conn)
        .await?;
        Ok(Some(Self {
            cascaded,
            ..after.clone()
        }))
    }
}
