//! Cancelling an action and expiring what nobody resolved.

use super::*;

/// What a cancel did.
pub enum Cancelled {
    /// Cancelled now, or already cancelled (no second event).
    Done(ActionRow),
    /// It had expired: now `expired` (the event emitted), answered 409.
    Expired(ActionRow),
}

/// Cancels action `id`: `ai.action.cancelled` once; a repeat answers the
/// cancelled row; another final state is 409; an overdue one expires.
pub async fn cancel(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
    reason: Option<String>,
) -> Result<Cancelled, AppError> {
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let row = find(conn, ctx, id, true).await?;
        match row.status.as_str() {
            "cancelled" => return Ok(Cancelled::Done(row)),
            "pending" => {}
            _ => return Err(AiError::InvalidStatus.into()),
        }
        let now = OffsetDateTime::now_utc();
        if row.expires_at <= now {
            let row = expire_row(conn, &actor, row, now).await?;
            return Ok(Cancelled::Expired(row));
        }
        let message = reason.clone().unwrap_or_else(|| "Cancelled by user".into());
        let result = json!({"error": {"code": "cancelled_by_user", "message": message}});
        let row: ActionRow = diesel::update(pa::table.find(row.id))
            .set((
                pa::status.eq("cancelled"),
                pa::resolved_at.eq(now),
                pa::resolved_by_user_id.eq(ctx.user_id),
                pa::execution_result.eq(&result),
            ))
            .returning(ActionRow::as_select())
            .get_result(conn)
            .await?;
        let payload = event_payload(&row, ctx.user_id, reason.as_deref());
        let entry = action_entry(
            &row,
            "Cancel AI action",
            Some(("ai.action.cancelled", payload)),
        );
        record_batch(conn, &actor, vec![("ai_assistant.actions.cancel", entry)]).await?;
        Ok(Cancelled::Done(row))
    })
    .await
}

async fn expire_row(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    row: ActionRow,
    now: OffsetDateTime,
) -> Result<ActionRow, AppError> {
    let row: ActionRow = diesel::update(pa::table.find(row.id))
        .set((pa::status.eq("expired"), pa::resolved_at.eq(now)))
        .returning(ActionRow::as_select())
        .get_result(conn)
        .await?;
    let mut payload = event_payload(&row, None, None);
    if let Some(map) = payload.as_object_mut() {
        map.insert("expiresAt".into(), Value::String(rfc3339(row.expires_at)));
        map.insert("expiredAt".into(), Value::String(rfc3339(now)));
    }
    let entry = action_entry(
        &row,
        "Expire AI action",
        Some(("ai.action.expired", payload)),
    );
    record_batch(conn, actor, vec![("ai_assistant.actions.expire", entry)]).await?;
    Ok(row)
}

/// How long after its claim an `executing` action is taken as abandoned.
/// Only a stoa from before the one-transaction confirm wrote `executing`
/// (claim, then the tool in its own transaction, then the outcome); one
/// that died in between left the row there for good, and nobody knows
/// whether the tool's write committed (its record's history does). Past
/// this bound (no confirm's request lives that long) the expiry job marks
/// such a row `failed` with the code `interrupted`, so it is final, replayed
/// by a confirm, and a new proposal may replace it.
pub const STALE_EXECUTING: time::Duration = time::Duration::minutes(15);

/// Fails `executing` rows claimed more than [`STALE_EXECUTING`] ago (at
/// most `limit`), each with `ai.action.confirmed` (status `failed`), the
/// event the interrupted confirm would have emitted; returns how many.
async fn fail_abandoned(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    limit: i64,
    now: OffsetDateTime,
) -> Result<usize, AppError> {
    let abandoned: Vec<ActionRow> = pa::table
        .filter(pa::status.eq("executing"))
        .filter(
            pa::resolved_at
                .le(now - STALE_EXECUTING)
                .or(pa::resolved_at.is_null()),
        )
        .filter(pa::created_at.le(now - STALE_EXECUTING))
        .order(pa::created_at.asc())
        .limit(limit)
        .select(ActionRow::as_select())
        .for_update()
        .skip_locked()
        .load(conn)
        .await?;
    let result = json!({"error": {
        "code": "interrupted",
        "message": "The confirm was interrupted before it recorded its outcome; \
                    the record's history shows whether the change was written",
    }});
    for row in &abandoned {
        let row: ActionRow = diesel::update(pa::table.find(row.id))
            .set((pa::status.eq("failed"), pa::execution_result.eq(&result)))
            .returning(ActionRow::as_select())
            .get_result(conn)
            .await?;
        let payload = event_payload(&row, row.resolved_by_user_id, None);
        let entry = action_entry(
            &row,
            "Fail interrupted AI action",
            Some(("ai.action.confirmed", payload)),
        );
        record_batch(
            conn,
            actor,
            vec![("ai_assistant.actions.interrupted", entry)],
        )
        .await?;
    }
    Ok(abandoned.len())
}

/// Expires every overdue pending action (the recurring job) and fails
/// abandoned `executing` ones ([`STALE_EXECUTING`]), at most `limit` of
/// each per run; returns how many rows it resolved.
pub async fn expire_due(db: &Db, actor: &Actor, limit: i64) -> Result<usize, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let now = OffsetDateTime::now_utc();
        let failed = fail_abandoned(conn, actor, limit, now).await?;
        let due: Vec<ActionRow> = pa::table
            .filter(pa::status.eq("pending"))
            .filter(pa::expires_at.le(now))
            .order(pa::expires_at.asc())
            .limit(limit)
            .select(ActionRow::as_select())
            .for_update()
            .skip_locked()
            .load(conn)
            .await?;
        let count = due.len();
        for row in due {
            expire_row(conn, actor, row, now).await?;
        }
        Ok(count + failed)
    })
    .await
}
