//! The agent's system prompt with the tenant's prompt override merged in
//! (the reference's additive merge): the latest saved version's `sections`
//! add to the agent's built-in prompt, never replace it. The built-in
//! prompt is the `role` section; a known key (`role`, `scope`, `data`,
//! `tools`, `attachments`, `mutationPolicy`, `responseStyle`, `overrides`,
//! also spelled with spaces, `_` or `-`) appends to its section, any other
//! key becomes a block of its own; the prompt is the sections rendered as
//! `[HEADER]\ncontent` blocks. Without an override (or when its lookup
//! fails) the built-in prompt is used as it is.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::AuthContext;

use crate::agents::AgentDef;
use crate::schema::ai_agent_prompt_overrides as po;

/// The known sections, in the order they are rendered: (normalized key,
/// header).
const SECTIONS: &[(&str, &str)] = &[
    ("role", "ROLE"),
    ("scope", "SCOPE"),
    ("data", "DATA"),
    ("tools", "TOOLS"),
    ("attachments", "ATTACHMENTS"),
    ("mutationpolicy", "MUTATION POLICY"),
    ("responsestyle", "RESPONSE STYLE"),
    ("overrides", "OVERRIDES"),
];

fn normalized(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// `base` with `sections` merged in (see the module's documentation).
pub fn merge(base: &str, sections: &serde_json::Map<String, Value>) -> String {
    let mut known: Vec<Vec<String>> = SECTIONS.iter().map(|_| Vec::new()).collect();
    known[0].push(base.trim().to_string());
    let mut extra: Vec<(String, String)> = Vec::new();
    for (key, value) in sections {
        let Some(text) = value.as_str().map(str::trim).filter(|t| !t.is_empty()) else {
            continue;
        };
        let norm = normalized(key);
        match SECTIONS.iter().position(|(k, _)| *k == norm) {
            Some(i) => known[i].push(text.to_string()),
            None => extra.push((key.trim().to_ascii_uppercase(), text.to_string())),
        }
    }
    let blocks = SECTIONS
        .iter()
        .zip(known)
        .filter(|(_, parts)| !parts.is_empty())
        .map(|((_, header), parts)| format!("[{header}]\n{}", parts.join("\n\n")))
        .chain(
            extra
                .into_iter()
                .map(|(header, text)| format!("[{header}]\n{text}")),
        );
    blocks.collect::<Vec<_>>().join("\n\n")
}

/// The latest prompt override's sections of `agent` for the caller's
/// tenant and organization; `None` when there is none, or when the lookup
/// fails (the built-in prompt then applies, as the reference).
pub async fn override_sections(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    agent: &AgentDef,
) -> Option<serde_json::Map<String, Value>> {
    let tenant = ctx.tenant_id?;
    let found: Result<Option<Value>, _> = po::table
        .filter(po::tenant_id.eq(tenant))
        .filter(po::organization_id.is_not_distinct_from(ctx.organization_id()))
        .filter(po::agent_id.eq(agent.id))
        .order(po::version.desc())
        .select(po::sections)
        .first(conn)
        .await
        .optional();
    match found {
        Ok(Some(Value::Object(sections))) if !sections.is_empty() => Some(sections),
        Ok(_) => None,
        Err(err) => {
            tracing::warn!(error = %err, agent = agent.id, "prompt override lookup failed");
            None
        }
    }
}

/// The agent's system prompt for the caller: the built-in one, with the
/// tenant's prompt override merged in when there is one.
pub async fn system_prompt(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    agent: &AgentDef,
) -> String {
    match override_sections(conn, ctx, agent).await {
        Some(sections) => merge(agent.system_prompt, &sections),
        None => agent.system_prompt.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sections_add_to_the_built_in_prompt() {
        let sections = json!({
            "responseStyle": "Answer in haiku.",
            "Role": "Be kind.",
            "response_style": "Never use lists.",
            "glossary": "ARR means annual recurring revenue.",
            "data": "  ",
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        assert_eq!(
            merge("You help.", &sections),
            "[ROLE]\nYou help.\n\nBe kind.\n\n[RESPONSE STYLE]\nAnswer in haiku.\n\nNever use lists.\n\n[GLOSSARY]\nARR means annual recurring revenue."
        );
    }
}
