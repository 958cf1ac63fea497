//! One conversation: its messages, a rename or archive, its deletion.

use super::*;

#[derive(Debug, Queryable, Selectable, Serialize, ToSchema)]
#[diesel(table_name = cm)]
#[serde(rename_all = "camelCase")]
pub struct MessageView {
    pub id: Uuid,
    pub client_message_id: Option<String>,
    pub role: String,
    pub content: String,
    #[schema(value_type = Option<Vec<Object>>)]
    pub ui_parts: Option<Value>,
    #[schema(value_type = Option<Vec<String>>)]
    pub attachment_ids: Option<Value>,
    pub model: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(rename = "senderUserId")]
    pub created_by_user_id: Option<Uuid>,
}

/// `{conversation, messages (ascending), nextCursor}`.
pub async fn get(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    key: &str,
    before: Option<OffsetDateTime>,
    limit: i64,
) -> Result<Value, AppError> {
    let row = visible(conn, ctx, key, true, false).await?;
    let mut query = cm::table
        .filter(cm::conversation_id.eq(row.id))
        .filter(cm::deleted_at.is_null())
        .select(MessageView::as_select())
        .order((cm::created_at.desc(), cm::id.desc()))
        .limit(limit + 1)
        .into_boxed();
    if let Some(b) = before {
        query = query.filter(cm::created_at.lt(b));
    }
    let mut messages: Vec<MessageView> = query.load(conn).await?;
    let mut more = messages.len() as i64 > limit;
    if let Cut::WholeMillisecond(at) = cut_at_millisecond(&mut messages, limit, |m| m.created_at) {
        let start = truncate(at);
        let mut group = cm::table
            .filter(cm::conversation_id.eq(row.id))
            .filter(cm::deleted_at.is_null())
            .filter(cm::created_at.ge(start))
            .filter(cm::created_at.lt(start + time::Duration::MILLISECOND))
            .select(MessageView::as_select())
            .order((cm::created_at.desc(), cm::id.desc()))
            .into_boxed();
        if let Some(b) = before {
            group = group.filter(cm::created_at.lt(b));
        }
        messages = group.load(conn).await?;
        let older: Vec<Uuid> = cm::table
            .filter(cm::conversation_id.eq(row.id))
            .filter(cm::deleted_at.is_null())
            .filter(cm::created_at.lt(start))
            .select(cm::id)
            .limit(1)
            .load(conn)
            .await?;
        more = !older.is_empty();
    }
    messages.reverse();
    let next = more
        .then(|| <[_]>::first(&messages).map(|m| m.created_at))
        .flatten()
        .map(stoa_core::serde_util::timestamp::format);
    let participants: i64 = cp::table
        .filter(cp::conversation_id.eq(row.id))
        .filter(cp::deleted_at.is_null())
        .filter(cp::user_id.ne(row.owner_user_id))
        .count()
        .get_result(conn)
        .await?;
    let mut conversation = summary(row, ctx);
    conversation.participant_count = participants;
    Ok(json!({"conversation": conversation, "messages": messages, "nextCursor": next}))
}

#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchConversation {
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<String>)]
    pub title: Option<Option<String>>,
    /// `open` or `closed`.
    pub status: Option<String>,
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<Object>)]
    pub page_context: Option<Option<Value>>,
}

pub async fn patch(
    db: &Db,
    ctx: &AuthContext,
    key: &str,
    input: PatchConversation,
) -> Result<Summary, AppError> {
    if input.title.is_none() && input.status.is_none() && input.page_context.is_none() {
        return Err(AiError::Validation("Provide title, status or pageContext".into()).into());
    }
    if let Some(s) = &input.status
        && !matches!(s.as_str(), "open" | "closed")
    {
        return Err(AiError::Validation("status must be open or closed".into()).into());
    }
    if let Some(Some(t)) = &input.title
        && (t.is_empty() || t.chars().count() > 200)
    {
        return Err(AiError::Validation("title must have 1-200 characters".into()).into());
    }
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let mut row = visible(conn, ctx, key, false, true).await?;
        if let Some(t) = input.title {
            row.title = t;
        }
        if let Some(s) = input.status {
            row.status = s;
        }
        if let Some(p) = input.page_context {
            row.page_context = p;
        }
        let row: ConversationRow = diesel::update(cc::table.find(row.id))
            .set((
                cc::title.eq(&row.title),
                cc::status.eq(&row.status),
                cc::page_context.eq(&row.page_context),
                cc::updated_at.eq(OffsetDateTime::now_utc()),
            ))
            .returning(ConversationRow::as_select())
            .get_result(conn)
            .await?;
        record_batch(
            conn,
            &actor,
            vec![(
                "ai_assistant.conversations.update",
                entry(&row, "Update AI conversation"),
            )],
        )
        .await?;
        Ok(summary(row, ctx))
    })
    .await
}

/// Soft-deletes the conversation and its messages in one transaction.
pub async fn delete(db: &Db, ctx: &AuthContext, key: &str) -> Result<(), AppError> {
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let row = visible(conn, ctx, key, false, true).await?;
        let now = OffsetDateTime::now_utc();
        diesel::update(cc::table.find(row.id))
            .set((
                cc::deleted_at.eq(now),
                cc::status.eq("closed"),
                cc::updated_at.eq(now),
            ))
            .execute(conn)
            .await?;
        diesel::update(
            cm::table
                .filter(cm::conversation_id.eq(row.id))
                .filter(cm::deleted_at.is_null()),
        )
        .set(cm::deleted_at.eq(now))
        .execute(conn)
        .await?;
        record_batch(
            conn,
            &actor,
            vec![(
                "ai_assistant.conversations.delete",
                entry(&row, "Delete AI conversation"),
            )],
        )
        .await?;
        Ok(())
    })
    .await
}
