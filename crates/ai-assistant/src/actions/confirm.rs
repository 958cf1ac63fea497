//! Confirming an action: the row lock, the gate, the tool's write and the
//! outcome in one transaction.

use super::*;

/// `{ok, pendingAction, mutationResult}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Confirmed {
    pub ok: bool,
    pub pending_action: PendingAction,
    #[schema(value_type = Option<Object>)]
    pub mutation_result: Option<Value>,
}

/// Whether the record's version now (`current`, as its loader writes it) is
/// the one the proposal saw (`proposed`). Versions are timestamps, compared
/// at the precision the proposal kept (a proposal made before timestamps
/// were written to the millisecond kept microseconds); anything else is
/// compared as text.
fn same_version(current: Option<&str>, proposed: Option<&str>) -> bool {
    use stoa_core::serde_util::timestamp::{parse, same_instant};
    match (current, proposed) {
        (Some(c), Some(p)) => match (parse(c), parse(p)) {
            (Some(c), Some(p)) => same_instant(p, c) || same_instant(c, p),
            _ => c == p,
        },
        (c, p) => c == p,
    }
}

/// Confirms action `id` as the caller, who must be its proposer (404
/// otherwise, checked under the row lock), checking in the reference's
/// order: status (a confirmed or failed one is replayed, anything else not
/// pending is 409), expiry (409 `expired`), the agent (404), its features
/// (403), the tool still whitelisted, registered and a mutation (403), the
/// effective policy (403 `read_only_agent`), the tool's features for this
/// caller now (403), the stored input against the tool's schema (412
/// `schema_drift`), the policy of the record's organization now (403
/// `read_only_agent`), the record's version (412 `stale_version`). Then
/// the tool runs as the caller with the grants of this request (command
/// bus, audit, undo, write guards).
///
/// All of it is one transaction on one connection: the action's row lock,
/// the checks (the version check reads the record on the same
/// connection), the tool's write and the outcome recorded on the action.
/// Nothing is ever left `executing`: the action goes from `pending` to
/// `confirmed` or `failed` in the commit that carries the write, and a
/// crash anywhere before it (the process, the connection) rolls back both,
/// leaving the action pending and the record unchanged, so a retry works.
/// The tool runs in a savepoint: when it refuses (a 4xx: a version
/// conflict, a guard, a bad value) its partial writes are undone and the
/// refusal is the action's `failed` outcome; a server error (5xx: the
/// database gone, a bug) rolls back everything and is answered as it is,
/// the action still pending. A confirm arriving while another holds the
/// action is 409 `invalid_status` (it does not wait for the tool's write);
/// once that one committed, a confirm replays its outcome.
pub async fn confirm(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<Confirmed, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let row = claim(conn, ctx, id).await?;
        match row.status.as_str() {
            "confirmed" | "failed" => {
                let ok = row.status == "confirmed";
                let result = row.execution_result.clone();
                return Ok(Confirmed {
                    ok,
                    pending_action: row.into(),
                    mutation_result: result,
                });
            }
            "pending" => {}
            _ => return Err(AiError::InvalidStatus.into()),
        }
        let tool = gate(conn, state, ctx, &row).await?;
        let mut input = row.normalized_input.clone();
        if let (Some(version), Some(map)) = (&row.record_version, input.as_object_mut()) {
            map.insert("_recordVersion".into(), Value::String(version.clone()));
        }
        // A savepoint: a refusal undoes the tool's partial writes and leaves
        // this transaction usable for recording it.
        let outcome = conn
            .transaction(async |conn| {
                tool.run(ToolCall {
                    auth: ctx,
                    conn,
                    input,
                })
                .await
            })
            .await;
        let (status, result) = match outcome {
            Ok(value) => (
                "confirmed",
                json!({
                    "recordId": value.get("recordId").cloned().unwrap_or(Value::Null),
                    "commandName": value.get("commandName").cloned().unwrap_or(Value::Null),
                    "result": value,
                }),
            ),
            Err(err) if err.status().is_server_error() => return Err(err),
            Err(err) => (
                "failed",
                json!({
                    "error": {
                        "code": err.code().unwrap_or("handler_error"),
                        "message": err.message(),
                        "status": err.status().as_u16(),
                    }
                }),
            ),
        };
        let row = record_outcome(conn, ctx, &row, status, &result).await?;
        Ok(Confirmed {
            ok: status == "confirmed",
            mutation_result: row.execution_result.clone(),
            pending_action: row.into(),
        })
    })
    .await
}

/// [`find`] locked for a confirm, without waiting: a row another confirm
/// (or a cancel) holds now is 409 `invalid_status`, as an action that is
/// not pending (the other one is resolving it), instead of a request
/// waiting for that one's write.
async fn claim(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<ActionRow, AppError> {
    let tenant = ctx.tenant_id.ok_or(AiError::PendingActionNotFound)?;
    let owner = owner(ctx).ok_or(AiError::PendingActionNotFound)?;
    let locked: Option<ActionRow> = pa::table
        .filter(pa::id.eq(id))
        .filter(pa::tenant_id.eq(tenant))
        .filter(pa::organization_id.is_not_distinct_from(ctx.organization_id()))
        .filter(pa::created_by_user_id.eq(owner))
        .select(ActionRow::as_select())
        .for_update()
        .skip_locked()
        .first(conn)
        .await
        .optional()?;
    match locked {
        Some(row) => Ok(row),
        // Skipped or missing: the unlocked read tells which.
        None => {
            find(conn, ctx, id, false).await?;
            Err(AiError::InvalidStatus.into())
        }
    }
}

/// The confirm's checks after the status (see [`confirm`]), on the
/// confirm's connection; answers the tool to run.
async fn gate<'s>(
    conn: &mut AsyncPgConnection,
    state: &'s AiState,
    ctx: &AuthContext,
    row: &ActionRow,
) -> Result<&'s AiTool, AppError> {
    if row.expires_at <= OffsetDateTime::now_utc() {
        return Err(
            AppError::from(AiError::Expired).with_field("expiresAt", rfc3339(row.expires_at))
        );
    }
    let agent = policy::known_agent(state, &row.agent_id).map_err(|e| match e {
        AiError::InvalidAgentId => AiError::AgentUnknown,
        other => other,
    })?;
    if !agent.required_features.iter().all(|f| ctx.has(f)) {
        return Err(AiError::AgentFeaturesDenied.into());
    }
    let tool = state
        .registry
        .ai_tool(&row.tool_name)
        .filter(|t| t.kind == ToolKind::Mutation && agent.allowed_tools.contains(&t.name))
        .ok_or(AiError::ToolNoLongerAllowed)?;
    if policy::effective_policy(conn, ctx, agent).await? == MutationPolicy::ReadOnly {
        return Err(AiError::ReadOnlyAgent.into());
    }
    if !tool.features.iter().all(|f| ctx.has(f)) {
        return Err(AppError::from(AiError::ToolFeaturesDenied)
            .with_field("requiredFeatures", tool.features));
    }
    let problems = validate::check(&(tool.input_schema)(), &row.normalized_input);
    if !problems.is_empty() {
        return Err(AppError::from(AiError::SchemaDrift).with_field("issues", problems));
    }
    let current = tool
        .load_before(ToolCall {
            auth: ctx,
            conn: &mut *conn,
            input: row.normalized_input.clone(),
        })
        .await?;
    let scope = policy::RecordScope::of(current.as_ref());
    if policy::policy_for_record(conn, ctx, agent, scope).await? == MutationPolicy::ReadOnly {
        return Err(AiError::ReadOnlyAgent.into());
    }
    if row.record_version.is_some() {
        let version = current
            .as_ref()
            .and_then(|b| b["recordVersion"].as_str().map(String::from));
        if !same_version(version.as_deref(), row.record_version.as_deref()) {
            return Err(AppError::from(AiError::StaleVersion)
                .with_field("recordId", row.target_record_id.clone()));
        }
    }
    Ok(tool)
}

/// Resolves `row` as `status` with `result` (who and when included) and
/// records it with `ai.action.confirmed`, in the confirm's transaction.
async fn record_outcome(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    row: &ActionRow,
    status: &str,
    result: &Value,
) -> Result<ActionRow, AppError> {
    let row: ActionRow = diesel::update(pa::table.find(row.id))
        .set((
            pa::status.eq(status),
            pa::execution_result.eq(result),
            pa::resolved_at.eq(OffsetDateTime::now_utc()),
            pa::resolved_by_user_id.eq(ctx.user_id),
        ))
        .returning(ActionRow::as_select())
        .get_result(conn)
        .await?;
    let payload = event_payload(&row, ctx.user_id, None);
    let entry = action_entry(
        &row,
        "Confirm AI action",
        Some(("ai.action.confirmed", payload)),
    );
    record_batch(
        conn,
        &ctx.actor(),
        vec![("ai_assistant.actions.confirm", entry)],
    )
    .await?;
    Ok(row)
}
