//! Proposing a mutation: the stored input, the record's version, a field
//! diff and the idempotency key.

use super::*;

/// The keys of a tool's input that name the record rather than change it.
const NOT_CHANGES: &[&str] = &[
    "id",
    "recordId",
    "records",
    "attachmentIds",
    "_sessionToken",
];

fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The changed fields of `input` against the record `before` (fields the
/// input names with a record id suffix are identifiers, not changes).
fn field_diff(before: &Value, input: &Value) -> Value {
    let Some(fields) = input.as_object() else {
        return json!([]);
    };
    let diff: Vec<Value> = fields
        .iter()
        .filter(|(k, _)| !NOT_CHANGES.contains(&k.as_str()) && !k.starts_with('_'))
        .filter(|(k, _)| {
            !(k.ends_with("Id")
                && before.get(k.as_str()).is_none()
                && before.get(snake(k)).is_none())
        })
        .filter_map(|(k, after)| {
            let old = before
                .get(k.as_str())
                .or_else(|| before.get(snake(k)))
                .cloned()
                .unwrap_or(Value::Null);
            (old != *after).then(|| json!({"field": k, "before": old, "after": after}))
        })
        .collect();
    Value::Array(diff)
}

/// The idempotency key: sha256 of the sorted JSON of the proposal's identity
/// (its proposer included: two users' equal proposals are two actions).
fn idempotency_key(
    ctx: &AuthContext,
    owner: Uuid,
    agent: &str,
    conversation: Option<&str>,
    tool: &str,
    input: &Value,
) -> String {
    // serde_json's maps are sorted by key: the JSON is canonical.
    let identity = json!({
        "tenant": ctx.tenant_id,
        "org": ctx.organization_id(),
        "owner": owner,
        "agent": agent,
        "conversation": conversation,
        "tool": tool,
        "input": input,
    });
    hex::encode(Sha256::digest(identity.to_string().as_bytes()))
}

/// Proposes `tool` with `input` for `agent` (the gate already passed): the
/// same proposal of the same proposer while still pending answers the same
/// row; a failed, cancelled or expired one is replaced. The mutation
/// policy of the record's own organization applies too
/// ([`policy::policy_for_record`]): 409 `mutation_blocked_by_policy` when it
/// is read-only, whatever the caller selected.
pub async fn propose(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    agent: &AgentDef,
    tool: &AiTool,
    input: Value,
    conversation: Option<&str>,
) -> Result<ActionRow, AppError> {
    let tenant = ctx.tenant().map_err(|_| AiError::TenantRequired)?;
    let owner = owner(ctx).ok_or_else(AppError::forbidden)?;
    let organization = ctx.organization_id();
    let mut conn = db.conn().await?;
    let before = tool
        .load_before(ToolCall {
            auth: ctx,
            conn: &mut conn,
            input: input.clone(),
        })
        .await?;
    let scope = policy::RecordScope::of(before.as_ref());
    if policy::policy_for_record(&mut conn, ctx, agent, scope).await? == MutationPolicy::ReadOnly {
        return Err(AiError::MutationBlockedByPolicy.into());
    }
    let (entity, record, version, diff) = match &before {
        Some(b) => (
            b["entityType"].as_str().map(String::from),
            match &b["recordId"] {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            },
            b["recordVersion"].as_str().map(String::from),
            // The loader's `after` (what the record would become), else
            // the input's fields.
            field_diff(
                &b["before"],
                b.get("after").filter(|a| a.is_object()).unwrap_or(&input),
            ),
        ),
        None => (None, None, None, json!([])),
    };
    let key = idempotency_key(ctx, owner, agent.id, conversation, tool.name, &input);
    let now = OffsetDateTime::now_utc();
    let ttl =
        time::Duration::try_from(state.config.pending_ttl).unwrap_or(time::Duration::minutes(15));
    let actor = ctx.actor();
    conn.transaction(async |conn| {
        let existing: Option<ActionRow> = pa::table
            .filter(pa::tenant_id.eq(tenant))
            .filter(pa::organization_id.is_not_distinct_from(organization))
            .filter(pa::idempotency_key.eq(&key))
            .filter(pa::created_by_user_id.eq(owner))
            .select(ActionRow::as_select())
            .for_update()
            .first(conn)
            .await
            .optional()?;
        if let Some(row) = existing {
            match row.status.as_str() {
                "pending" if row.expires_at > now => return Ok(row),
                "pending" | "failed" | "cancelled" | "expired" => {
                    diesel::delete(pa::table.find(row.id)).execute(conn).await?;
                }
                _ => {
                    return Err(AppError::conflict(
                        "This change was already confirmed; propose it again with other values",
                    )
                    .with_code("already_confirmed"));
                }
            }
        }
        let row: ActionRow = diesel::insert_into(pa::table)
            .values((
                pa::id.eq(Uuid::new_v4()),
                pa::tenant_id.eq(tenant),
                pa::organization_id.eq(organization),
                pa::agent_id.eq(agent.id),
                pa::tool_name.eq(tool.name),
                pa::conversation_id.eq(conversation),
                pa::target_entity_type.eq(&entity),
                pa::target_record_id.eq(&record),
                pa::normalized_input.eq(&input),
                pa::field_diff.eq(&diff),
                pa::record_version.eq(&version),
                pa::idempotency_key.eq(&key),
                pa::created_by_user_id.eq(owner),
                pa::status.eq("pending"),
                pa::created_at.eq(now),
                pa::expires_at.eq(now + ttl),
            ))
            .returning(ActionRow::as_select())
            .get_result(conn)
            .await?;
        let entry = action_entry(&row, "Propose AI action", None);
        record_batch(conn, &actor, vec![("ai_assistant.actions.propose", entry)]).await?;
        Ok(row)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_lists_changed_fields_only() {
        let before = json!({"id": "d", "title": "A", "pipelineStageId": "s1", "is_active": true});
        let input = json!({"dealId": "d", "title": "A", "pipelineStageId": "s2", "isActive": false, "_recordVersion": "v"});
        assert_eq!(
            field_diff(&before, &input),
            json!([
                {"field": "isActive", "before": true, "after": false},
                {"field": "pipelineStageId", "before": "s1", "after": "s2"}
            ])
        );
    }
}
