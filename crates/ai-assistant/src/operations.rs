//! Who may call each assistant endpoint (the authorization matrix,
//! docs/security.md), with each route's error shape (the reference notes'
//! validation-errors.md: C with `code:"validation_error"` for the `/ai/*`
//! routes, E for tools/execute, none for the plain reads).

use stoa_core::http::Access::Features;
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

use crate::{CONVERSATIONS_SHARE, SETTINGS_MANAGE, VIEW};

const BAD_JSON: &str = "Request body must be valid JSON.";

/// What `POST /ai_assistant/mcp-key` needs (stoa-api-keys' feature).
pub const MCP_KEY_CREATE: &str = "api_keys.create";

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/ai_assistant/ai/agents", Features(&[VIEW])).errors(E),
    Operation::get(
        "/ai_assistant/ai/agents/{agentId}/models",
        Features(&[VIEW]),
    )
    .errors(C("")),
    Operation::get(
        "/ai_assistant/ai/agents/{agentId}/loop-override",
        Features(&[VIEW]),
    )
    .errors(C("")),
    Operation::put(
        "/ai_assistant/ai/agents/{agentId}/loop-override",
        Features(&[SETTINGS_MANAGE]),
    )
    .errors(C(""))
    .bad_json(BAD_JSON),
    Operation::delete(
        "/ai_assistant/ai/agents/{agentId}/loop-override",
        Features(&[SETTINGS_MANAGE]),
    )
    .errors(C("")),
    Operation::get(
        "/ai_assistant/ai/agents/{agentId}/mutation-policy",
        Features(&[VIEW]),
    )
    .errors(C("")),
    Operation::post(
        "/ai_assistant/ai/agents/{agentId}/mutation-policy",
        Features(&[SETTINGS_MANAGE]),
    )
    .errors(C(""))
    .bad_json(BAD_JSON),
    Operation::delete(
        "/ai_assistant/ai/agents/{agentId}/mutation-policy",
        Features(&[SETTINGS_MANAGE]),
    )
    .errors(C("")),
    Operation::get(
        "/ai_assistant/ai/agents/{agentId}/prompt-override",
        Features(&[SETTINGS_MANAGE]),
    )
    .errors(C("")),
    Operation::post(
        "/ai_assistant/ai/agents/{agentId}/prompt-override",
        Features(&[SETTINGS_MANAGE]),
    )
    .errors(C(""))
    .bad_json(BAD_JSON),
    Operation::post("/ai_assistant/ai/chat", Features(&[VIEW]))
        .errors(C(""))
        .bad_json(BAD_JSON),
    Operation::post("/ai_assistant/ai/run-object", Features(&[VIEW]))
        .errors(C(""))
        .bad_json(BAD_JSON),
    Operation::get("/ai_assistant/ai/conversations", Features(&[VIEW])).errors(C("")),
    Operation::post("/ai_assistant/ai/conversations", Features(&[VIEW]))
        .errors(C(""))
        .bad_json(BAD_JSON),
    Operation::post("/ai_assistant/ai/conversations/import", Features(&[VIEW]))
        .errors(C(""))
        .bad_json(BAD_JSON),
    Operation::get(
        "/ai_assistant/ai/conversations/{conversationId}",
        Features(&[VIEW]),
    )
    .errors(C("")),
    Operation::patch(
        "/ai_assistant/ai/conversations/{conversationId}",
        Features(&[VIEW]),
    )
    .errors(C(""))
    .bad_json(BAD_JSON),
    Operation::delete(
        "/ai_assistant/ai/conversations/{conversationId}",
        Features(&[VIEW]),
    )
    .errors(C("")),
    Operation::get(
        "/ai_assistant/ai/conversations/{conversationId}/participants",
        Features(&[VIEW]),
    )
    .errors(C("")),
    Operation::post(
        "/ai_assistant/ai/conversations/{conversationId}/participants",
        Features(&[VIEW, CONVERSATIONS_SHARE]),
    )
    .errors(C(""))
    .bad_json(BAD_JSON),
    Operation::delete(
        "/ai_assistant/ai/conversations/{conversationId}/participants/{userId}",
        Features(&[VIEW, CONVERSATIONS_SHARE]),
    )
    .errors(C("")),
    Operation::get("/ai_assistant/ai/actions/{id}", Features(&[VIEW])).errors(C("")),
    Operation::post("/ai_assistant/ai/actions/{id}/confirm", Features(&[VIEW])).errors(C("")),
    Operation::post("/ai_assistant/ai/actions/{id}/cancel", Features(&[VIEW]))
        .errors(C(""))
        .bad_json(BAD_JSON),
    Operation::get("/ai_assistant/tools", Features(&[VIEW])).errors(E),
    Operation::post("/ai_assistant/tools/execute", Features(&[VIEW])).errors(E),
    Operation::get("/ai_assistant/health", Features(&[VIEW])).errors(E),
    Operation::get("/ai_assistant/settings", Features(&[VIEW])).errors(E),
    Operation::put("/ai_assistant/settings", Features(&[SETTINGS_MANAGE]))
        .errors(C(""))
        .bad_json(BAD_JSON),
    Operation::delete("/ai_assistant/settings", Features(&[SETTINGS_MANAGE]))
        .errors(C(""))
        .bad_json(BAD_JSON),
    Operation::put(
        "/ai_assistant/settings/allowlist",
        Features(&[SETTINGS_MANAGE]),
    )
    .errors(C(""))
    .bad_json(BAD_JSON),
    Operation::delete(
        "/ai_assistant/settings/allowlist",
        Features(&[SETTINGS_MANAGE]),
    )
    .errors(E),
    Operation::get("/ai_assistant/usage/daily", Features(&[SETTINGS_MANAGE])).errors(C("")),
    Operation::get("/ai_assistant/usage/sessions", Features(&[SETTINGS_MANAGE])).errors(C("")),
    Operation::get(
        "/ai_assistant/usage/sessions/{sessionId}",
        Features(&[SETTINGS_MANAGE]),
    )
    .errors(C("")),
    Operation::get(
        "/ai_assistant/moderation-flags",
        Features(&[SETTINGS_MANAGE]),
    )
    .errors(C("")),
    // A persistent key outlives the session: only callers who may create
    // API keys mint one (the reference's `api_keys.create`).
    Operation::post("/ai_assistant/mcp-key", Features(&[MCP_KEY_CREATE])).errors(E),
    Operation::post("/ai_assistant/session-key", Features(&[VIEW])).errors(E),
    Operation::post("/ai_assistant/chat", Features(&[VIEW])).errors(E),
    Operation::post("/ai_assistant/route", Features(&[VIEW])).errors(E),
];
