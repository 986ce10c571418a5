//! Tool search for large catalogs: what each tool's definition costs in
//! tokens, which tools a host-set budget keeps loaded, and how the model
//! finds the rest.
//!
//! With a [`ToolBudget`] in [`crate::MaterializeOptions::budget`], a
//! catalog whose definitions together cost more than the budget keeps
//! loaded only the tools that fit (pinned names first, then the host's
//! most recently used, then catalog order) and defers the others. The
//! `anthropic` profile sends deferred tools with `defer_loading: true`
//! next to Anthropic's own tool-search tool; every other profile leaves
//! them out and adds the `search_tools` tool, whose call the runtime
//! answers with the matching definitions and then loads them (see
//! [`crate::SessionRuntime::load_tools`]). The choice depends only on the
//! catalog and the budget, so the same inputs give the same bytes and a
//! provider's prompt cache keeps hitting.

mod rank;

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Value, json};

use crate::schema::{self, ProviderProfile, SchemaLimits};
use crate::tool::{CatalogTool, Definition};

pub(crate) use rank::rank;

/// The name of the search tool the non-anthropic profiles get. Catalog
/// names of MCP tools always hold the `__` of their server prefix, so
/// none can take it.
pub const SEARCH_TOOLS_NAME: &str = "search_tools";

/// Matches `search_tools` answers with when the call gives no `limit`.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;

/// The most matches one `search_tools` call answers with.
pub const MAX_SEARCH_LIMIT: usize = 20;

/// Which of Anthropic's tool-search tools the `anthropic` profile adds
/// when it defers tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AnthropicToolSearch {
    /// `tool_search_tool_bm25_20251119`: the model searches in natural
    /// language.
    #[default]
    Bm25,
    /// `tool_search_tool_regex_20251119`: the model searches with regular
    /// expressions.
    Regex,
}

impl AnthropicToolSearch {
    /// The tool entry as the Messages API takes it.
    pub fn definition(self) -> Value {
        match self {
            AnthropicToolSearch::Bm25 => json!({
                "type": "tool_search_tool_bm25_20251119",
                "name": "tool_search_tool_bm25"
            }),
            AnthropicToolSearch::Regex => json!({
                "type": "tool_search_tool_regex_20251119",
                "name": "tool_search_tool_regex"
            }),
        }
    }
}

/// A host's budget for the tool definitions of one request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ToolBudget {
    /// Most tokens (as [`estimate_tokens`] counts them) the loaded
    /// definitions and the search tool may take together.
    pub budget_tokens: usize,
    /// Catalog names always loaded, even past the budget. Names the
    /// catalog does not hold are ignored.
    pub pinned: Vec<String>,
    /// Catalog names the host used last, most recent first: loaded next,
    /// as far as the budget goes. A new order can change which tools
    /// load, and with them the bytes a prompt cache keys on: a host that
    /// wants cache hits updates it between sessions or at compaction, not
    /// every turn.
    pub recently_used: Vec<String>,
    /// The search tool the `anthropic` profile gets.
    pub anthropic_search: AnthropicToolSearch,
}

impl ToolBudget {
    /// A budget of `budget_tokens`, nothing pinned or recently used.
    pub fn new(budget_tokens: usize) -> Self {
        ToolBudget {
            budget_tokens,
            ..ToolBudget::default()
        }
    }

    /// The same budget with `names` always loaded.
    pub fn with_pinned<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.pinned = names.into_iter().map(Into::into).collect();
        self
    }

    /// The same budget with `names` (most recent first) loaded next.
    pub fn with_recently_used<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.recently_used = names.into_iter().map(Into::into).collect();
        self
    }

    /// The same budget with `search` as Anthropic's tool-search tool.
    pub fn with_anthropic_search(mut self, search: AnthropicToolSearch) -> Self {
        self.anthropic_search = search;
        self
    }
}

/// What the budget did to a catalog, for a host's status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct BudgetReport {
    /// The budget the catalog was built under.
    pub budget_tokens: usize,
    /// What the serialised list costs: loaded definitions plus the search
    /// tool. Over the budget only when the pinned and requested tools, or
    /// the search tool itself, take more than it.
    pub loaded_tokens: usize,
    /// What every definition would cost, none deferred.
    pub total_tokens: usize,
    /// Tools whose definitions are sent.
    pub loaded: usize,
    /// Tools past the budget, found through search.
    pub deferred: usize,
}

/// The search tool a budget added to a catalog, written for its profile.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SearchEntry {
    pub(crate) definition: Value,
    pub(crate) tokens: usize,
}

pub use crate::tool::estimate_tokens;

/// The input schema of `search_tools`, before the profile's rewrite.
fn search_tools_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Words to look for in tool names, descriptions and parameter names"
            },
            "limit": {
                "type": "integer",
                "description": format!("Most tools to return (default {DEFAULT_SEARCH_LIMIT}, at most {MAX_SEARCH_LIMIT})")
            }
        },
        "required": ["query"]
    })
}

const SEARCH_TOOLS_DESCRIPTION: &str = "Search the tools that are not in this list (deferred to save context) by words of their names, descriptions and parameter names. Answers with the definitions of the best matches; they can be called from the next request on.";

/// The search tool the budget adds for `profile`.
pub(crate) fn search_entry(
    profile: ProviderProfile,
    anthropic: AnthropicToolSearch,
) -> SearchEntry {
    let definition = match profile {
        ProviderProfile::Anthropic => anthropic.definition(),
        _ => {
            let raw = search_tools_schema();
            // The profile's rewrite of a schema this plain cannot fail;
            // were it to, the schema as written still states the call.
            let schema = schema::prepare_for_calls(&raw, profile, &SchemaLimits::default())
                .map(|prepared| prepared.schema.into_owned())
                .unwrap_or_else(|_| raw.clone());
            let definition = Definition {
                profile,
                name: SEARCH_TOOLS_NAME,
                description: SEARCH_TOOLS_DESCRIPTION,
                schema: &schema,
                deferred: false,
            };
            serde_json::to_value(&definition).unwrap_or(Value::Null)
        }
    };
    SearchEntry {
        tokens: estimate_tokens(&definition),
        definition,
    }
}

/// The tools `budget` defers in `tools` (in name order), each costing
/// `costs[i]`: none when all fit. Pinned tools load whatever they cost;
/// then the recently used and then the rest, in that order, each as long
/// as it still fits beside the search tool (a tool too large is passed
/// over, a smaller one after it may still fit).
pub(crate) fn plan(
    tools: &[CatalogTool],
    costs: &[usize],
    budget: &ToolBudget,
    index: impl Fn(&str) -> Option<usize>,
    search_tokens: usize,
) -> BTreeSet<usize> {
    let total: usize = costs.iter().sum();
    if total <= budget.budget_tokens {
        return BTreeSet::new();
    }
    let mut loaded = vec![false; tools.len()];
    let mut used = search_tokens;
    for i in budget.pinned.iter().filter_map(|name| index(name)) {
        if !loaded[i] {
            loaded[i] = true;
            used += costs[i];
        }
    }
    let rest = budget
        .recently_used
        .iter()
        .filter_map(|name| index(name))
        .chain(0..tools.len());
    for i in rest {
        if !loaded[i] && used + costs[i] <= budget.budget_tokens {
            loaded[i] = true;
            used += costs[i];
        }
    }
    (0..tools.len()).filter(|&i| !loaded[i]).collect()
}

/// The arguments of a `search_tools` call: the query, and the limit
/// within 1..=[`MAX_SEARCH_LIMIT`] (a missing or `null` one is the
/// default).
pub(crate) fn search_arguments(arguments: &Value) -> Result<(String, usize), String> {
    let query = match arguments.get("query") {
        Some(Value::String(query)) if !query.trim().is_empty() => query.clone(),
        _ => return Err("`query` must be a non-empty string".to_owned()),
    };
    let limit = match arguments.get("limit") {
        None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
        Some(value) => match value.as_u64() {
            Some(n) if n >= 1 => usize::try_from(n).unwrap_or(MAX_SEARCH_LIMIT),
            _ => return Err("`limit` must be a whole number of at least 1".to_owned()),
        },
    };
    Ok((query, limit.min(MAX_SEARCH_LIMIT)))
}

/// The answer to a `search_tools` call: the definitions of the matches
/// as JSON text, or a line saying none matched.
pub(crate) fn search_answer(deferred: usize, query: &str, matches: &[&CatalogTool]) -> String {
    if matches.is_empty() {
        return format!(
            "No deferred tool matches {query:?}; {deferred} tools are deferred. Try other words."
        );
    }
    let definitions: Vec<Definition<'_>> = matches.iter().map(|t| t.definition(false)).collect();
    serde_json::to_string(&definitions).unwrap_or_default()
}

#[cfg(test)]
mod tests;
