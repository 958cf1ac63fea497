//! Importing a conversation with its messages.

use super::*;

#[derive(Debug, Serialize, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportMessage {
    #[validate(length(max = 128))]
    pub client_message_id: Option<String>,
    /// `user` or `assistant` (anything else is 400).
    pub role: String,
    #[validate(length(max = 64000))]
    pub content: String,
    #[schema(value_type = Option<Vec<Object>>)]
    pub ui_parts: Option<Vec<Value>>,
    pub attachment_ids: Option<Vec<String>>,
    pub model: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportConversation {
    #[validate(nested)]
    pub conversation: CreateConversation,
    pub status: Option<String>,
    #[validate(length(max = 100), nested)]
    pub messages: Vec<ImportMessage>,
}

/// Imports a browser-local conversation: create-or-get, then the messages
/// whose `clientMessageId` is new (those without one, or known, are skipped).
pub async fn import(
    db: &Db,
    ctx: &AuthContext,
    input: ImportConversation,
) -> Result<Value, AppError> {
    let (tenant, org, user) = scope(ctx)?;
    if input.conversation.conversation_id.is_none() {
        return Err(AiError::Validation("conversation.conversationId is required".into()).into());
    }
    crate::validate::client_roles(input.messages.iter().map(|m| m.role.as_str()))?;
    let key = input
        .conversation
        .conversation_id
        .clone()
        .unwrap_or_default();
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let (row, _) = create_in(conn, tenant, org, user, &key, &input.conversation, true).await?;
        let known: Vec<Option<String>> = cm::table
            .filter(cm::conversation_id.eq(row.id))
            .filter(cm::deleted_at.is_null())
            .select(cm::client_message_id)
            .load(conn)
            .await?;
        let known: std::collections::HashSet<String> = known.into_iter().flatten().collect();
        let now = OffsetDateTime::now_utc();
        let mut seen = std::collections::HashSet::new();
        let mut imported = 0i64;
        let mut skipped = 0i64;
        for m in &input.messages {
            let Some(id) = m
                .client_message_id
                .as_ref()
                .filter(|id| !known.contains(*id) && seen.insert((*id).clone()))
            else {
                skipped += 1;
                continue;
            };
            diesel::insert_into(cm::table)
                .values((
                    cm::id.eq(Uuid::new_v4()),
                    cm::tenant_id.eq(tenant),
                    cm::organization_id.eq(org),
                    cm::conversation_id.eq(row.id),
                    cm::client_message_id.eq(id),
                    cm::role.eq(&m.role),
                    cm::content.eq(&m.content),
                    cm::ui_parts.eq(m.ui_parts.as_ref().map(|p| json!(p))),
                    cm::attachment_ids.eq(m.attachment_ids.as_ref().map(|p| json!(p))),
                    cm::model.eq(&m.model),
                    cm::metadata.eq(&m.metadata),
                    cm::created_by_user_id.eq((m.role == "user").then_some(user)),
                    cm::created_at.eq(now),
                ))
                .execute(conn)
                .await?;
            imported += 1;
        }
        let mut set_status = row.status.clone();
        if let Some(s) = input
            .status
            .as_deref()
            .filter(|s| matches!(*s, "open" | "closed"))
        {
            set_status = s.to_string();
        }
        let row: ConversationRow = diesel::update(cc::table.find(row.id))
            .set((
                cc::status.eq(&set_status),
                cc::last_message_at.eq(if imported > 0 {
                    Some(now)
                } else {
                    row.last_message_at
                }),
                cc::imported_from_local_at.eq(Some(now)),
                cc::updated_at.eq(now),
            ))
            .returning(ConversationRow::as_select())
            .get_result(conn)
            .await?;
        record_batch(
            conn,
            &actor,
            vec![(
                "ai_assistant.conversations.import",
                entry(&row, "Import AI conversation"),
            )],
        )
        .await?;
        Ok(json!({
            "conversation": summary(row, ctx),
            "importedMessageCount": imported,
            "skippedMessageCount": skipped,
        }))
    })
    .await
}
