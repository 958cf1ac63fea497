//! Running a tool for a caller: the input checked against the tool's
//! schema, a read run at once, a mutation proposed as a pending action
//! (never run directly: the approval gate has no bypass).

use serde_json::{Value, json};
use stoa_acl::{AiTool, AuthContext, ToolCall, ToolKind};
use stoa_core::AppError;
use stoa_core::db::Db;

use crate::actions::{self, ActionRow};
use crate::agents::AgentDef;
use crate::error::AiError;
use crate::policy;
use crate::state::AiState;
use crate::validate;

/// What running a tool gave.
pub enum Ran {
    /// A read tool's result.
    Read(Value),
    /// A mutation's proposal.
    Proposed(Box<ActionRow>),
}

/// 400 `Invalid input: path: msg; ...` unless `input` fits `tool`'s schema.
pub fn check_input(tool: &AiTool, input: &Value) -> Result<(), AppError> {
    let problems = validate::check(&(tool.input_schema)(), input);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(
            AppError::bad_request(format!("Invalid input: {}", problems.join("; ")))
                .with_code("validation_error"),
        )
    }
}

/// Drops empty strings from the top level of an input object (the
/// reference does, so a model's blank optional field does not fail a rule).
pub fn normalize(input: Value) -> Value {
    match input {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| v.as_str() != Some(""))
                .collect(),
        ),
        Value::Null => json!({}),
        other => other,
    }
}

/// Runs the read tool `tool` as `ctx` on a connection of its own (a read
/// needs no transaction).
pub async fn run_read(
    db: &Db,
    ctx: &AuthContext,
    tool: &AiTool,
    input: Value,
) -> Result<Value, AppError> {
    let mut conn = db.conn().await?;
    tool.run(ToolCall {
        auth: ctx,
        conn: &mut conn,
        input,
    })
    .await
}

/// Runs `tool` for `agent` (the gate already passed): a read at once, a
/// mutation as a proposal.
pub async fn run_for_agent(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    agent: &AgentDef,
    tool: &AiTool,
    input: Value,
    conversation: Option<&str>,
) -> Result<Ran, AppError> {
    check_input(tool, &input)?;
    match tool.kind {
        ToolKind::Read => Ok(Ran::Read(run_read(db, ctx, tool, input).await?)),
        ToolKind::Mutation => Ok(Ran::Proposed(Box::new(
            actions::propose(db, state, ctx, agent, tool, input, conversation).await?,
        ))),
    }
}

/// The agent whose gate a direct mutation goes through: the one named
/// (checked like chat), else the first agent the caller may use whose
/// policy lets it propose the tool.
pub async fn agent_for_direct(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    tool: &AiTool,
    named: Option<&str>,
) -> Result<&'static AgentDef, AppError> {
    let mut conn = db.conn().await?;
    if let Some(id) = named {
        let agent = policy::agent_for(state, ctx, id)?;
        let policy_now = policy::effective_policy(&mut conn, ctx, agent).await?;
        policy::tool_for(&state.registry, ctx, agent, tool.name, policy_now)?;
        return Ok(agent);
    }
    for agent in state
        .agents
        .iter()
        .copied()
        .filter(|a| a.allowed_tools.contains(&tool.name))
    {
        if policy::agent_for(state, ctx, agent.id).is_err() {
            continue;
        }
        let policy_now = policy::effective_policy(&mut conn, ctx, agent).await?;
        if policy::tool_for(&state.registry, ctx, agent, tool.name, policy_now).is_ok() {
            return Ok(agent);
        }
    }
    Err(AppError::from(AiError::ToolNoLongerAllowed))
}
