//! The agent registry: the reference's built-in agents as static
//! declarations (same ids), and the mutation-policy ranks.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How an agent may change data. Ranked from the most to the least
/// restrictive: an override may only move down the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MutationPolicy {
    ReadOnly,
    DestructiveConfirmRequired,
    ConfirmRequired,
}

impl MutationPolicy {
    pub fn rank(self) -> u8 {
        match self {
            Self::ReadOnly => 0,
            Self::DestructiveConfirmRequired => 1,
            Self::ConfirmRequired => 2,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::DestructiveConfirmRequired => "destructive-confirm-required",
            Self::ConfirmRequired => "confirm-required",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "read-only" => Some(Self::ReadOnly),
            "destructive-confirm-required" => Some(Self::DestructiveConfirmRequired),
            "confirm-required" => Some(Self::ConfirmRequired),
            _ => None,
        }
    }

    /// The more restrictive of the two.
    pub fn min(self, other: Self) -> Self {
        if other.rank() < self.rank() {
            other
        } else {
            self
        }
    }
}

/// `chat` (streamed) or `object` (one structured answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    Chat,
    Object,
}

/// How an object agent's answer is produced: `generate` (one answer) or
/// `stream` (partial objects; `run-object` refuses it, as the reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    Generate,
    Stream,
}

/// An object agent's structured output: the schema's name and the JSON
/// schema the answer must match.
#[derive(Clone, Copy, Debug)]
pub struct ObjectOutput {
    pub schema_name: &'static str,
    pub schema: fn() -> serde_json::Value,
    pub mode: OutputMode,
}

/// The loop's budget (each `None` = unbounded but for `max_steps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopBudget {
    pub max_steps: u32,
    pub max_tool_calls: Option<u32>,
    pub max_wall_clock_ms: Option<u64>,
    pub max_tokens: Option<u64>,
    /// Stop after a step that called this tool.
    pub stop_on_tool: Option<&'static str>,
}

impl LoopBudget {
    pub const DEFAULT: Self = Self {
        max_steps: 10,
        max_tool_calls: None,
        max_wall_clock_ms: None,
        max_tokens: None,
        stop_on_tool: None,
    };
}

/// A built-in agent.
#[derive(Clone, Copy, Debug)]
pub struct AgentDef {
    pub id: &'static str,
    pub module_id: &'static str,
    pub label: &'static str,
    pub description: &'static str,
    pub system_prompt: &'static str,
    pub allowed_tools: &'static [&'static str],
    pub required_features: &'static [&'static str],
    pub read_only: bool,
    pub mutation_policy: MutationPolicy,
    pub execution_mode: ExecutionMode,
    pub budget: LoopBudget,
    /// Whether the loop budget may be changed per call (`loopBudget`).
    pub loop_override_allowed: bool,
    pub task_plan: bool,
    pub allow_runtime_override: bool,
    pub accepted_media_types: &'static [&'static str],
    pub keywords: &'static [&'static str],
    pub suggestions: &'static [&'static str],
    /// Set for `executionMode: object` agents (`run-object`).
    pub output: Option<ObjectOutput>,
}

const MEDIA: &[&str] = &["image", "pdf", "file"];

const DEAL_BUDGET: LoopBudget = LoopBudget {
    max_steps: 12,
    max_tool_calls: Some(12),
    max_wall_clock_ms: Some(60_000),
    max_tokens: None,
    stop_on_tool: Some("customers.update_deal_stage"),
};

const DEAL_TOOLS: &[&str] = &[
    "meta.list_agents",
    "customers.get_deal",
    "customers.update_deal_stage",
    "customers.update_deal",
];

/// The built-in agents, sorted by id.
pub const AGENTS: &[AgentDef] = &[
    AgentDef {
        id: "catalog.catalog_assistant",
        module_id: "catalog",
        label: "Catalog assistant",
        description: "Answers questions about products in the catalog (read-only).",
        system_prompt: "You help people explore the product catalog. You can read products but never change them.",
        allowed_tools: &["meta.list_agents", "catalog.get_product"],
        required_features: &["catalog.products.view", "catalog.categories.view"],
        read_only: true,
        mutation_policy: MutationPolicy::ReadOnly,
        execution_mode: ExecutionMode::Chat,
        budget: LoopBudget {
            max_steps: 4,
            ..LoopBudget::DEFAULT
        },
        loop_override_allowed: true,
        task_plan: false,
        allow_runtime_override: true,
        accepted_media_types: MEDIA,
        keywords: &["catalog", "products"],
        suggestions: &["Which products are inactive?"],
        output: None,
    },
    AgentDef {
        id: "catalog.merchandising_assistant",
        module_id: "catalog",
        label: "Merchandising assistant",
        description: "Proposes product changes; every change waits for a person's confirmation.",
        system_prompt: "You help merchandisers improve product data. Every change you propose is confirmed by a person first.",
        allowed_tools: &[
            "meta.list_agents",
            "catalog.get_product",
            "catalog.update_product",
        ],
        required_features: &["catalog.products.view"],
        read_only: false,
        mutation_policy: MutationPolicy::ConfirmRequired,
        execution_mode: ExecutionMode::Chat,
        budget: LoopBudget::DEFAULT,
        loop_override_allowed: true,
        task_plan: false,
        allow_runtime_override: true,
        accepted_media_types: MEDIA,
        keywords: &["merchandising", "products"],
        suggestions: &["Improve the title of this product"],
        output: None,
    },
    AgentDef {
        id: "customers.account_assistant",
        module_id: "customers",
        label: "Account assistant",
        description: "Helps with customer accounts and their deals; changes wait for confirmation.",
        system_prompt: "You help account managers with their customers and deals. Every change you propose is confirmed by a person first.",
        allowed_tools: DEAL_TOOLS,
        required_features: &[
            "customers.people.view",
            "customers.companies.view",
            "customers.deals.view",
        ],
        read_only: false,
        mutation_policy: MutationPolicy::ConfirmRequired,
        execution_mode: ExecutionMode::Chat,
        budget: LoopBudget::DEFAULT,
        loop_override_allowed: true,
        task_plan: true,
        allow_runtime_override: true,
        accepted_media_types: MEDIA,
        keywords: &["customers", "accounts", "deals"],
        suggestions: &["Summarize my open deals"],
        output: None,
    },
    AgentDef {
        id: "customers.deal_analyzer",
        module_id: "customers",
        label: "Deal analyzer",
        description: "Analyzes deals and proposes stage changes; changes wait for confirmation.",
        system_prompt: "You analyze deals and may propose moving a deal to another stage. Every change you propose is confirmed by a person first.",
        allowed_tools: DEAL_TOOLS,
        required_features: &["customers.deals.view"],
        read_only: false,
        mutation_policy: MutationPolicy::ConfirmRequired,
        execution_mode: ExecutionMode::Chat,
        budget: DEAL_BUDGET,
        loop_override_allowed: true,
        task_plan: true,
        allow_runtime_override: true,
        accepted_media_types: MEDIA,
        keywords: &["deals", "pipeline"],
        suggestions: &["Which deals are stuck?"],
        output: None,
    },
    AgentDef {
        id: "customers.deal_analyzer_tool_loop",
        module_id: "customers",
        label: "Deal analyzer (tool loop)",
        description: "The deal analyzer on the tool-loop engine (same behaviour).",
        system_prompt: "You analyze deals and may propose moving a deal to another stage. Every change you propose is confirmed by a person first.",
        allowed_tools: DEAL_TOOLS,
        required_features: &["customers.deals.view"],
        read_only: false,
        mutation_policy: MutationPolicy::ConfirmRequired,
        execution_mode: ExecutionMode::Chat,
        budget: DEAL_BUDGET,
        loop_override_allowed: true,
        task_plan: true,
        allow_runtime_override: true,
        accepted_media_types: MEDIA,
        keywords: &["deals", "pipeline"],
        suggestions: &["Which deals are stuck?"],
        output: None,
    },
];

/// Whether `id` has the agent-id form `<module>.<agent>` (`[a-z0-9_]`).
pub fn valid_id(id: &str) -> bool {
    let mut parts = id.split('.');
    let ok = |p: Option<&str>| {
        p.is_some_and(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
    };
    ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
}

/// The agent `id`.
pub fn agent(id: &str) -> Option<&'static AgentDef> {
    AGENTS.iter().find(|a| a.id == id)
}

/// The tool name a model sees (`customers.update_deal_stage` →
/// `customers__update_deal_stage`).
pub fn sanitized(tool: &str) -> String {
    tool.replace('.', "__")
}

/// The dotted name of a sanitized one.
pub fn dotted(tool: &str) -> String {
    tool.replace("__", ".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_sorted_and_ids_valid() {
        let ids: Vec<_> = AGENTS.iter().map(|a| a.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(ids, sorted);
        assert!(ids.iter().all(|id| valid_id(id)));
        for bad in ["", "a", "a.b.c", "A.b", "a-b.c", "a."] {
            assert!(!valid_id(bad), "{bad}");
        }
        assert_eq!(
            dotted(&sanitized("customers.update_deal_stage")),
            "customers.update_deal_stage"
        );
    }

    #[test]
    fn policies_rank_and_combine() {
        use MutationPolicy::*;
        assert_eq!(ConfirmRequired.min(ReadOnly), ReadOnly);
        assert_eq!(ReadOnly.min(ConfirmRequired), ReadOnly);
        assert_eq!(
            ConfirmRequired.min(DestructiveConfirmRequired),
            DestructiveConfirmRequired
        );
        assert_eq!(
            MutationPolicy::parse("confirm-required"),
            Some(ConfirmRequired)
        );
        assert_eq!(MutationPolicy::parse("x"), None);
    }
}
