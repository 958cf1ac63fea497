//! Starting a conversation (also from a chat turn, on its connection).

use super::*;

#[derive(Debug, Serialize, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateConversation {
    #[validate(length(min = 1, max = 256))]
    pub agent_id: String,
    #[validate(length(min = 1, max = 128))]
    pub conversation_id: Option<String>,
    #[validate(length(min = 1, max = 200))]
    pub title: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub page_context: Option<Value>,
}

/// Creates or returns the caller's conversation: `(summary, created)`; a
/// conversation of that id owned by someone else is 404.
pub async fn create(
    db: &Db,
    ctx: &AuthContext,
    input: CreateConversation,
    imported: bool,
) -> Result<(Summary, bool), AppError> {
    let (tenant, org, user) = scope(ctx)?;
    let key = input
        .conversation_id
        .clone()
        .unwrap_or_else(|| Uuid::new_v4().to_string());
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let (row, created) = create_in(conn, tenant, org, user, &key, &input, imported).await?;
        if created {
            record_batch(
                conn,
                &actor,
                vec![(
                    "ai_assistant.conversations.create",
                    entry(&row, "Create AI conversation"),
                )],
            )
            .await?;
        }
        Ok((summary(row, ctx), created))
    })
    .await
}

pub(crate) async fn create_in(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    org: Option<Uuid>,
    user: Uuid,
    key: &str,
    input: &CreateConversation,
    imported: bool,
) -> Result<(ConversationRow, bool), AppError> {
    // One creator per key at a time (the unique index would refuse the second).
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))")
        .bind::<diesel::sql_types::Text, _>(format!("ai_conv:{tenant}:{org:?}:{key}"))
        .execute(conn)
        .await?;
    let existing: Option<ConversationRow> = cc::table
        .filter(cc::tenant_id.eq(tenant))
        .filter(cc::organization_id.is_not_distinct_from(org))
        .filter(cc::conversation_id.eq(key))
        .filter(cc::deleted_at.is_null())
        .select(ConversationRow::as_select())
        .first(conn)
        .await
        .optional()?;
    if let Some(row) = existing {
        if row.owner_user_id != user {
            return Err(AiError::ConversationNotFound.into());
        }
        return Ok((row, false));
    }
    let now = OffsetDateTime::now_utc();
    let row: ConversationRow = diesel::insert_into(cc::table)
        .values((
            cc::id.eq(Uuid::new_v4()),
            cc::tenant_id.eq(tenant),
            cc::organization_id.eq(org),
            cc::conversation_id.eq(key),
            cc::agent_id.eq(&input.agent_id),
            cc::owner_user_id.eq(user),
            cc::title.eq(&input.title),
            cc::page_context.eq(&input.page_context),
            cc::imported_from_local_at.eq(imported.then_some(now)),
        ))
        .returning(ConversationRow::as_select())
        .get_result(conn)
        .await?;
    diesel::insert_into(cp::table)
        .values((
            cp::id.eq(Uuid::new_v4()),
            cp::tenant_id.eq(tenant),
            cp::organization_id.eq(org),
            cp::conversation_id.eq(row.id),
            cp::user_id.eq(user),
            cp::role.eq("owner"),
        ))
        .execute(conn)
        .await?;
    Ok((row, true))
}
