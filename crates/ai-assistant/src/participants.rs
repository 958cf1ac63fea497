//! Sharing a conversation: its participants (the owner's row included),
//! adding a user of the caller's tenant as a viewer (a revoked row is
//! restored; visibility becomes `shared`) and revoking one (a soft delete;
//! the last non-owner gone makes it `private` again). Each change records an
//! action-log entry and emits `ai_assistant.conversation.shared|unshared`.
//! Whether the target is a user of the tenant is asked of the account
//! interface (`UserDirectory`), never of its tables.

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::json;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::record_batch;
use stoa_core::db::Db;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;
use validator::Validate;

use crate::CONVERSATIONS_MANAGE;
use crate::conversations::{self, ConversationRow};
use crate::error::AiError;
use crate::schema::{ai_chat_conversation_participants as cp, ai_chat_conversations as cc};
use crate::state::AiState;

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = cp)]
struct ParticipantRow {
    id: Uuid,
    user_id: Uuid,
    role: String,
    last_read_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
    deleted_at: Option<OffsetDateTime>,
}

/// One participant.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Participant {
    pub user_id: Uuid,
    /// `owner` or `viewer`.
    pub role: String,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_read_at: Option<OffsetDateTime>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub added_at: OffsetDateTime,
}

impl From<ParticipantRow> for Participant {
    fn from(row: ParticipantRow) -> Self {
        Self {
            user_id: row.user_id,
            role: row.role,
            last_read_at: row.last_read_at,
            added_at: row.created_at,
        }
    }
}

/// `GET .../participants`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Participants {
    pub owner_user_id: Uuid,
    pub participants: Vec<Participant>,
}

/// `POST .../participants`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddParticipant {
    pub user_id: Uuid,
    /// Only `viewer` (the default).
    pub role: Option<String>,
}

/// `POST .../participants` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct Added {
    pub participant: Participant,
}

/// The active participants (owner first); only the owner or a manager may
/// list them (403 `forbidden` for a participant).
pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    key: &str,
) -> Result<Participants, AppError> {
    let (_, _, user) = conversations::scope(ctx)?;
    let row = conversations::live(conn, ctx, key, false).await?;
    if row.owner_user_id != user && !ctx.has(CONVERSATIONS_MANAGE) {
        return Err(AiError::Forbidden.into());
    }
    let rows: Vec<ParticipantRow> = cp::table
        .filter(cp::conversation_id.eq(row.id))
        .filter(cp::deleted_at.is_null())
        .order((
            cp::user_id.ne(row.owner_user_id),
            cp::created_at.asc(),
            cp::id,
        ))
        .select(ParticipantRow::as_select())
        .load(conn)
        .await?;
    Ok(Participants {
        owner_user_id: row.owner_user_id,
        participants: rows.into_iter().map(Participant::from).collect(),
    })
}

fn event(row: &ConversationRow, participant: Uuid, role: Option<&str>) -> serde_json::Value {
    let mut payload = json!({
        "conversationId": row.conversation_id,
        "tenantId": row.tenant_id,
        "organizationId": row.organization_id,
        "ownerUserId": row.owner_user_id,
        "participantUserId": participant,
    });
    if let (Some(role), Some(map)) = (role, payload.as_object_mut()) {
        map.insert("role".into(), json!(role));
    }
    payload
}

/// Shares the owner's conversation with a user of the same tenant (in the
/// reference's order: 400 self, 400 `user_not_found`, 404 missing or not
/// the owner, 409 `duplicate_participant`).
pub async fn add(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    key: &str,
    input: AddParticipant,
) -> Result<Participant, AppError> {
    let (tenant, _, user) = conversations::scope(ctx)?;
    let role = input.role.unwrap_or_else(|| "viewer".into());
    if role != "viewer" {
        return Err(AiError::Validation("role must be viewer".into()).into());
    }
    if input.user_id == user {
        return Err(AiError::SelfShare.into());
    }
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let target = state.users.user(conn, input.user_id).await?;
        if target.is_none_or(|t| t.tenant_id != Some(tenant)) {
            return Err(AiError::UserNotFound.into());
        }
        let row = conversations::live(conn, ctx, key, true).await?;
        if row.owner_user_id != user {
            return Err(AiError::ConversationNotFound.into());
        }
        let existing: Option<ParticipantRow> = cp::table
            .filter(cp::conversation_id.eq(row.id))
            .filter(cp::user_id.eq(input.user_id))
            .select(ParticipantRow::as_select())
            .for_update()
            .first(conn)
            .await
            .optional()?;
        let now = OffsetDateTime::now_utc();
        let added: ParticipantRow = match existing {
            Some(p) if p.deleted_at.is_none() => {
                return Err(AiError::DuplicateParticipant.into());
            }
            // A revoked participant comes back on the same row.
            Some(p) => {
                diesel::update(cp::table.find(p.id))
                    .set((
                        cp::deleted_at.eq(None::<OffsetDateTime>),
                        cp::role.eq(&role),
                        cp::updated_at.eq(now),
                    ))
                    .returning(ParticipantRow::as_select())
                    .get_result(conn)
                    .await?
            }
            None => {
                diesel::insert_into(cp::table)
                    .values((
                        cp::id.eq(Uuid::new_v4()),
                        cp::tenant_id.eq(row.tenant_id),
                        cp::organization_id.eq(row.organization_id),
                        cp::conversation_id.eq(row.id),
                        cp::user_id.eq(input.user_id),
                        cp::role.eq(&role),
                    ))
                    .returning(ParticipantRow::as_select())
                    .get_result(conn)
                    .await?
            }
        };
        diesel::update(cc::table.find(row.id))
            .set((cc::visibility.eq("shared"), cc::updated_at.eq(now)))
            .execute(conn)
            .await?;
        let entry = conversations::entry(&row, "Share AI conversation").with_event(
            "ai_assistant.conversation.shared",
            event(&row, input.user_id, Some(role.as_str())),
        );
        record_batch(
            conn,
            &actor,
            vec![("ai_assistant.conversations.share", entry)],
        )
        .await?;
        Ok(added.into())
    })
    .await
}

/// Revokes a participant: the owner or a manager; the owner's own row
/// cannot go (403), nor can a conversation the caller cannot see (403, as
/// the reference); an inactive participant is 404 `participant_not_found`.
pub async fn remove(
    db: &Db,
    ctx: &AuthContext,
    key: &str,
    participant: Uuid,
) -> Result<(), AppError> {
    let (_, _, user) = conversations::scope(ctx)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let row = conversations::lookup(conn, ctx, key, true)
            .await?
            .ok_or(AiError::Forbidden)?;
        if (row.owner_user_id != user && !ctx.has(CONVERSATIONS_MANAGE))
            || participant == row.owner_user_id
        {
            return Err(AiError::Forbidden.into());
        }
        let now = OffsetDateTime::now_utc();
        let revoked = diesel::update(
            cp::table
                .filter(cp::conversation_id.eq(row.id))
                .filter(cp::user_id.eq(participant))
                .filter(cp::deleted_at.is_null()),
        )
        .set((cp::deleted_at.eq(now), cp::updated_at.eq(now)))
        .execute(conn)
        .await?;
        if revoked == 0 {
            return Err(AiError::ParticipantNotFound.into());
        }
        let others: i64 = cp::table
            .filter(cp::conversation_id.eq(row.id))
            .filter(cp::deleted_at.is_null())
            .filter(cp::user_id.ne(row.owner_user_id))
            .count()
            .get_result(conn)
            .await?;
        if others == 0 {
            diesel::update(cc::table.find(row.id))
                .set((cc::visibility.eq("private"), cc::updated_at.eq(now)))
                .execute(conn)
                .await?;
        }
        let entry = conversations::entry(&row, "Unshare AI conversation").with_event(
            "ai_assistant.conversation.unshared",
            event(&row, participant, None),
        );
        record_batch(
            conn,
            &actor,
            vec![("ai_assistant.conversations.unshare", entry)],
        )
        .await?;
        Ok(())
    })
    .await
}
