//! A chat turn's messages kept in its conversation, as the reference does:
//! the conversation is created or found (the caller as owner, in the
//! caller's tenant and organization), the last user message is appended
//! (`clientMessageId` = its `id`, a repeat skipped), and after the turn the
//! assistant's text (`<user message id>:assistant`, the mutation cards as
//! `uiParts`). Keeping the transcript never fails the turn: a failure, or a
//! conversation of that id owned by someone else, is logged and skipped.

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::record_batch;
use stoa_core::db::Db;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::conversations::{self, ConversationRow, CreateConversation};
use crate::schema::{ai_chat_conversations as cc, ai_chat_messages as cm};

/// The user's message a turn answers.
#[derive(Clone, Debug)]
pub struct UserMessage {
    pub id: Option<String>,
    pub content: String,
}

/// Where the turn writes: the conversation and the user message's id.
#[derive(Clone, Debug)]
pub struct Transcript {
    conversation: ConversationRow,
    user_message_id: Option<String>,
}

/// One message to append.
struct NewMessage<'a> {
    client_id: Option<String>,
    role: &'a str,
    content: &'a str,
    ui_parts: Option<Value>,
    model: Option<&'a str>,
    metadata: Option<Value>,
}

async fn append(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    row: &ConversationRow,
    message: NewMessage<'_>,
) -> Result<(), AppError> {
    let now = OffsetDateTime::now_utc();
    let user = ctx.user_id.filter(|_| message.role == "user");
    // A client re-sending its message id adds nothing (the unique index of
    // live client ids).
    let inserted = diesel::insert_into(cm::table)
        .values((
            cm::id.eq(Uuid::new_v4()),
            cm::tenant_id.eq(row.tenant_id),
            cm::organization_id.eq(row.organization_id),
            cm::conversation_id.eq(row.id),
            cm::client_message_id.eq(&message.client_id),
            cm::role.eq(message.role),
            cm::content.eq(message.content),
            cm::ui_parts.eq(&message.ui_parts),
            cm::model.eq(message.model),
            cm::metadata.eq(&message.metadata),
            cm::created_by_user_id.eq(user),
            cm::created_at.eq(now),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    if inserted == 0 {
        return Ok(());
    }
    diesel::update(cc::table.find(row.id))
        .set((cc::last_message_at.eq(now), cc::updated_at.eq(now)))
        .execute(conn)
        .await?;
    let entry = conversations::entry(row, "Add AI chat message");
    record_batch(
        conn,
        &ctx.actor(),
        vec![("ai_assistant.conversations.append", entry)],
    )
    .await?;
    Ok(())
}

/// Opens conversation `key` for the turn and appends the user's message;
/// `None` (logged) when it cannot.
pub async fn open(
    db: &Db,
    ctx: &AuthContext,
    agent_id: &str,
    key: &str,
    page_context: Option<Value>,
    message: Option<UserMessage>,
) -> Option<Transcript> {
    let result: Result<Transcript, AppError> = async {
        let (tenant, org, user) = conversations::scope(ctx)?;
        let actor = ctx.actor();
        let input = CreateConversation {
            agent_id: agent_id.to_string(),
            conversation_id: Some(key.to_string()),
            title: None,
            page_context,
        };
        let mut conn = db.conn().await?;
        conn.transaction(async |conn| {
            let (row, created) =
                conversations::create_in(conn, tenant, org, user, key, &input, false).await?;
            if created {
                let entry = conversations::entry(&row, "Create AI conversation");
                record_batch(
                    conn,
                    &actor,
                    vec![("ai_assistant.conversations.create", entry)],
                )
                .await?;
            }
            let user_message_id = message.as_ref().and_then(|m| m.id.clone());
            if let Some(m) = &message {
                append(
                    conn,
                    ctx,
                    &row,
                    NewMessage {
                        client_id: m.id.clone(),
                        role: "user",
                        content: &m.content,
                        ui_parts: None,
                        model: None,
                        metadata: None,
                    },
                )
                .await?;
            }
            Ok(Transcript {
                conversation: row,
                user_message_id,
            })
        })
        .await
    }
    .await;
    result
        .inspect_err(|err| tracing::warn!(error = %err, "ai chat transcript not opened"))
        .ok()
}

/// Appends the assistant's answer (its text and the mutation cards).
pub async fn finish(
    db: &Db,
    ctx: &AuthContext,
    transcript: &Transcript,
    text: &str,
    ui_parts: Vec<Value>,
    model: &str,
    turn_id: Uuid,
) {
    let result: Result<(), AppError> = async {
        let mut conn = db.conn().await?;
        conn.transaction(async |conn| {
            append(
                conn,
                ctx,
                &transcript.conversation,
                NewMessage {
                    client_id: transcript
                        .user_message_id
                        .as_ref()
                        .map(|id| format!("{id}:assistant")),
                    role: "assistant",
                    content: text,
                    ui_parts: (!ui_parts.is_empty()).then(|| json!(ui_parts)),
                    model: Some(model),
                    metadata: Some(json!({"turnId": turn_id})),
                },
            )
            .await
        })
        .await
    }
    .await;
    if let Err(err) = result {
        tracing::warn!(error = %err, "ai chat answer not kept");
    }
}
