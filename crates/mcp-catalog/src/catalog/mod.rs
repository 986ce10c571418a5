//! Materialisation: the tool lists of every server become one flat,
//! sorted catalog a host hands to a model.
//!
//! The function is pure ([`materialize`]); the runtime calls it with the
//! listings it collected. Its output depends only on its input set, never
//! on the order servers answered in, so the catalog's bytes stay the same
//! from one turn to the next and a provider's prompt cache stays warm.
//!
//! This file holds what goes in and what comes out (listings, options,
//! the [`Catalog`] and its diagnostics); `materialize` does the build and
//! `tool` is one materialised tool and its per-call work.

mod instructions;
mod intern;
mod materialize;

use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroUsize;
use std::sync::Arc;

use mcp_config::{Level, ToolFilter};
use mcp_transport::Tool;
use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};
use serde_json::Value;

pub use self::instructions::{MAX_INSTRUCTIONS_CHARS, ServerInstructions, combine_instructions};
pub use self::materialize::{
    SchemaCache, defuse_listing, describe, materialize, materialize_among, materialize_cached,
};
use crate::naming::NamingStyle;
use crate::schema::{ProviderProfile, SchemaLimits};
use crate::search::{self, BudgetReport, SearchEntry, ToolBudget};
pub use crate::tool::ServerFeatures;
pub use crate::tool::{
    CatalogTool, MAX_ARGUMENT_DEPTH, PreparedArguments, ToolOrigin, ToolTarget, UtilityTool,
};

/// Default cap on a tool description, in characters (OpenAI's limit).
pub const DEFAULT_DESCRIPTION_LIMIT: usize = 1024;

/// Longest raw tool name accepted, in bytes. MCP asks for at most 128
/// characters; longer names still work (the model sees a shortened one),
/// but a name this long is no tool's.
pub const MAX_RAW_TOOL_NAME_BYTES: usize = 1024;

/// One server's answer to `tools/list`, with the settings that shape it:
/// the input of [`materialize`]. Made with [`ServerTools::new`] and the
/// `with_*` methods.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerTools {
    /// The configured server name.
    pub server: String,
    /// Shared, so the catalog refers to the schemas instead of copying.
    pub tools: Arc<[Tool]>,
    /// The entry's `toolFilter`: which of the tools the model may see.
    pub filter: ToolFilter,
    /// What the server offers besides tools: a capability it announced
    /// and, in the runtime, listed at least one item of.
    pub features: ServerFeatures,
    /// The entry's `descriptionLimit`, over the host's
    /// [`MaterializeOptions::description_limit`].
    pub description_limit: Option<NonZeroUsize>,
    /// The server's `instructions`, as it gave them (the catalog cuts
    /// them, see [`ServerInstructions`]).
    pub instructions: Option<Arc<str>>,
}

/// Settings of materialisation, chosen by the host. Made from
/// [`MaterializeOptions::default`] (or [`MaterializeOptions::new`], the
/// same) and the `with_*` methods.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MaterializeOptions {
    /// How tool names are spelled (default [`NamingStyle::Claw`],
    /// `mcp__server__tool`).
    pub style: NamingStyle,
    /// Which provider's schema rules the input schemas are rewritten for.
    pub profile: ProviderProfile,
    /// Names of the host's native tools; MCP tools never take them.
    pub reserved_names: BTreeSet<String>,
    /// Longer descriptions are cut to this many characters (a note saying
    /// so included), unless the server's entry sets its own
    /// `descriptionLimit`.
    pub description_limit: usize,
    /// Whether servers with resources or prompts get utility tools.
    pub utility_tools: bool,
    /// Caps on each tool's input schema; a tool over one is left out.
    pub schema_limits: SchemaLimits,
    /// The host's budget for tool definitions; `None` (the default)
    /// loads every tool. See [`ToolBudget`].
    pub budget: Option<ToolBudget>,
}

impl Default for MaterializeOptions {
    fn default() -> Self {
        MaterializeOptions {
            style: NamingStyle::default(),
            profile: ProviderProfile::default(),
            reserved_names: BTreeSet::new(),
            description_limit: DEFAULT_DESCRIPTION_LIMIT,
            utility_tools: true,
            schema_limits: SchemaLimits::default(),
            budget: None,
        }
    }
}

impl ServerTools {
    /// The listing `tools` of `server`, unfiltered, with no features
    /// besides tools and the host's description limit.
    pub fn new(server: impl Into<String>, tools: impl Into<Arc<[Tool]>>) -> Self {
        ServerTools {
            server: server.into(),
            tools: tools.into(),
            filter: ToolFilter::default(),
            features: ServerFeatures::default(),
            description_limit: None,
            instructions: None,
        }
    }

    /// The same listing, from a server that gave `instructions`.
    pub fn with_instructions(mut self, instructions: Option<Arc<str>>) -> Self {
        self.instructions = instructions;
        self
    }

    /// The same listing, shaped by the entry's `toolFilter`.
    pub fn with_filter(mut self, filter: ToolFilter) -> Self {
        self.filter = filter;
        self
    }

    /// The same listing, from a server offering `features`.
    pub fn with_features(mut self, features: ServerFeatures) -> Self {
        self.features = features;
        self
    }

    /// The same listing, with descriptions cut at `limit` characters
    /// (the entry's `descriptionLimit`) instead of the host's limit.
    pub fn with_description_limit(mut self, limit: Option<NonZeroUsize>) -> Self {
        self.description_limit = limit;
        self
    }
}

impl MaterializeOptions {
    /// The defaults: [`NamingStyle::Claw`], the generic profile, no
    /// reserved names, [`DEFAULT_DESCRIPTION_LIMIT`], utility tools on,
    /// default schema limits and no budget.
    pub fn new() -> Self {
        MaterializeOptions::default()
    }

    /// The same options, naming tools in `style`.
    pub fn with_style(mut self, style: NamingStyle) -> Self {
        self.style = style;
        self
    }

    /// The same options, writing schemas for `profile`.
    pub fn with_profile(mut self, profile: ProviderProfile) -> Self {
        self.profile = profile;
        self
    }

    /// The same options, keeping `names` (the host's native tools) away
    /// from MCP tools.
    pub fn with_reserved_names<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.reserved_names = names.into_iter().map(Into::into).collect();
        self
    }

    /// The same options, cutting descriptions at `limit` characters.
    pub fn with_description_limit(mut self, limit: usize) -> Self {
        self.description_limit = limit;
        self
    }

    /// The same options, with or without utility tools for resources and
    /// prompts.
    pub fn with_utility_tools(mut self, utility_tools: bool) -> Self {
        self.utility_tools = utility_tools;
        self
    }

    /// The same options, capping input schemas at `limits`.
    pub fn with_schema_limits(mut self, limits: SchemaLimits) -> Self {
        self.schema_limits = limits;
        self
    }

    /// The same options, deferring tools past `budget` (`None` loads
    /// every tool).
    pub fn with_budget(mut self, budget: impl Into<Option<ToolBudget>>) -> Self {
        self.budget = budget.into();
        self
    }
}

/// Something a host should know about the catalog: a renamed or left-out
/// tool, a server that failed, a filter at work. Never silent.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CatalogDiagnostic {
    /// The configured name of the server concerned.
    pub server: String,
    /// The raw tool name, when the diagnostic is about one tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// How much it matters: an error left something out.
    pub level: Level,
    /// What happened, in one lowercase line.
    pub message: String,
}

impl CatalogDiagnostic {
    pub(crate) fn server(level: Level, server: &str, message: String) -> Self {
        CatalogDiagnostic {
            server: server.to_owned(),
            tool: None,
            level,
            message,
        }
    }

    pub(crate) fn tool(level: Level, server: &str, tool: &str, message: String) -> Self {
        CatalogDiagnostic {
            server: server.to_owned(),
            tool: Some(tool.to_owned()),
            level,
            message,
        }
    }
}

/// The materialised catalog: tools sorted by name, plus what happened on
/// the way. Serialises to the list of tools a host sends a model; see
/// [`Catalog::report`] for the diagnostics too.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Sorted by name (names are unique), so a name is found by binary
    /// search without a map to build.
    tools: Vec<CatalogTool>,
    diagnostics: Vec<CatalogDiagnostic>,
    filtered: BTreeMap<String, usize>,
    /// Descriptions cut, per server.
    cut: BTreeMap<String, usize>,
    /// The servers whose listings were materialised.
    servers: BTreeSet<String>,
    /// Servers that failed to connect or list (set by the runtime).
    unavailable: BTreeSet<String>,
    /// Servers held back from starting (set by the runtime).
    withheld: BTreeSet<String>,
    profile: ProviderProfile,
    style: NamingStyle,
    /// Indices into `tools` the budget deferred.
    deferred: BTreeSet<usize>,
    /// The search tool, when the budget deferred any tool.
    search: Option<SearchEntry>,
    /// The budget it was built under, if any.
    budget_tokens: Option<usize>,
    /// Each listed server's instructions, in catalog order.
    instructions: Vec<ServerInstructions>,
}

/// The numbers of a catalog at a glance, for a summary line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct CatalogCounts {
    /// Servers whose tools were listed.
    pub servers: usize,
    /// Tools in the catalog, deferred ones included.
    pub tools: usize,
    /// Tools `toolFilter` hid.
    pub filtered: usize,
    /// Tool descriptions cut to the description limit.
    pub descriptions_cut: usize,
    /// Servers that failed to connect or list.
    pub unavailable: usize,
    /// Servers held back from starting (awaiting approval or denied).
    pub withheld: usize,
    /// Diagnostics at error level (something was left out).
    pub errors: usize,
    /// Diagnostics at warning level.
    pub warnings: usize,
    /// Diagnostics at info level.
    pub infos: usize,
}

impl Catalog {
    /// Tools in name order.
    pub fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }

    /// A tool by the name the model used.
    pub fn get(&self, name: &str) -> Option<&CatalogTool> {
        self.index_of(name).map(|i| &self.tools[i])
    }

    /// The instructions of the servers whose tools are in the catalog,
    /// each cut to [`MAX_INSTRUCTIONS_CHARS`], in catalog order (servers
    /// by raw name); servers that gave none are not listed.
    pub fn instructions(&self) -> &[ServerInstructions] {
        &self.instructions
    }

    /// [`Catalog::instructions`] as one text, each under a `## server`
    /// heading: what a host adds to its system prompt.
    pub fn combined_instructions(&self) -> Option<String> {
        combine_instructions(&self.instructions)
    }

    /// Diagnostics in a fixed order (server, tool, level, message).
    pub fn diagnostics(&self) -> &[CatalogDiagnostic] {
        &self.diagnostics
    }

    /// How many tools `toolFilter` hid, per server (servers with none left
    /// out).
    pub fn filtered(&self) -> &BTreeMap<String, usize> {
        &self.filtered
    }

    /// How many tool descriptions were cut, per server (servers with none
    /// left out).
    pub fn cut_descriptions(&self) -> &BTreeMap<String, usize> {
        &self.cut
    }

    /// Servers, tools, and what happened to them, counted.
    pub fn counts(&self) -> CatalogCounts {
        let level = |level: Level| self.diagnostics.iter().filter(|d| d.level == level).count();
        CatalogCounts {
            servers: self.servers.len(),
            tools: self.tools.len(),
            filtered: self.filtered.values().sum(),
            descriptions_cut: self.cut.values().sum(),
            unavailable: self.unavailable.len(),
            withheld: self.withheld.len(),
            errors: level(Level::Error),
            warnings: level(Level::Warning),
            infos: level(Level::Info),
        }
    }

    /// The provider profile the schemas were written for.
    pub fn profile(&self) -> ProviderProfile {
        self.profile
    }

    /// The naming style of the tool names.
    pub fn style(&self) -> NamingStyle {
        self.style
    }

    /// Whether any diagnostic is an error: a tool or server left out, or a
    /// server whose tool prefix collided with another's.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.level == Level::Error)
    }

    /// Each tool's estimated definition cost in tokens, in name order
    /// (see [`search::estimate_tokens`]).
    pub fn token_estimates(&self) -> Vec<(&str, usize)> {
        self.tools
            .iter()
            .map(|tool| (tool.name(), tool.estimated_tokens()))
            .collect()
    }

    /// What every tool's definition costs together, none deferred.
    pub fn total_tokens(&self) -> usize {
        self.tools.iter().map(CatalogTool::estimated_tokens).sum()
    }

    /// What the serialised list costs the model: the loaded definitions
    /// and the search tool. Equal to [`Catalog::total_tokens`] when
    /// nothing is deferred.
    pub fn loaded_tokens(&self) -> usize {
        self.loaded_tools()
            .map(CatalogTool::estimated_tokens)
            .sum::<usize>()
            + self.search.as_ref().map_or(0, |entry| entry.tokens)
    }

    /// What the budget did, when one was set.
    pub fn budget_report(&self) -> Option<BudgetReport> {
        let budget_tokens = self.budget_tokens?;
        Some(BudgetReport {
            budget_tokens,
            loaded_tokens: self.loaded_tokens(),
            total_tokens: self.total_tokens(),
            loaded: self.tools.len() - self.deferred.len(),
            deferred: self.deferred.len(),
        })
    }

    /// Whether the budget deferred the tool of this name.
    pub fn is_deferred(&self, name: &str) -> bool {
        self.index_of(name)
            .is_some_and(|i| self.deferred.contains(&i))
    }

    /// The tools the model sees in full, in name order.
    pub fn loaded_tools(&self) -> impl Iterator<Item = &CatalogTool> {
        self.tools
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.deferred.contains(i))
            .map(|(_, tool)| tool)
    }

    /// The tools the budget deferred, in name order.
    pub fn deferred_tools(&self) -> impl Iterator<Item = &CatalogTool> {
        self.deferred.iter().map(|&i| &self.tools[i])
    }

    /// The search tool entry the serialised list ends with: Anthropic's
    /// tool-search tool, or `search_tools` for the other profiles. `None`
    /// when nothing is deferred.
    pub fn search_tool(&self) -> Option<&Value> {
        self.search.as_ref().map(|entry| &entry.definition)
    }

    /// Whether the list ends with `search_tools`, which the host answers
    /// (the non-anthropic profiles, when something is deferred).
    pub fn offers_search_tools(&self) -> bool {
        self.search.is_some() && self.profile != ProviderProfile::Anthropic
    }

    /// The deferred tools best matching `query`, best first, at most
    /// `limit`: BM25 over their names, descriptions and parameter names
    /// (see `search::rank`). Loaded tools are not searched; the model
    /// already has them.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&CatalogTool> {
        let candidates: Vec<usize> = self.deferred.iter().copied().collect();
        search::rank(&self.tools, &candidates, query, limit)
            .into_iter()
            .map(|i| &self.tools[i])
            .collect()
    }

    /// Where the tool called `name` is in `tools`.
    fn index_of(&self, name: &str) -> Option<usize> {
        self.tools
            .binary_search_by(|tool| tool.name().cmp(name))
            .ok()
    }

    /// Defers what `budget` leaves no room for (see [`search::plan`]).
    pub(crate) fn apply_budget(&mut self, budget: &ToolBudget) {
        self.budget_tokens = Some(budget.budget_tokens);
        let costs: Vec<usize> = self
            .tools
            .iter()
            .map(CatalogTool::estimated_tokens)
            .collect();
        let entry = search::search_entry(self.profile, budget.anthropic_search);
        let deferred = search::plan(
            &self.tools,
            &costs,
            budget,
            |name| self.index_of(name),
            entry.tokens,
        );
        if !deferred.is_empty() {
            self.deferred = deferred;
            self.search = Some(entry);
        }
    }

    /// Everything about the catalog in one serialisable value.
    pub fn report(&self) -> CatalogReport<'_> {
        CatalogReport {
            style: self.style,
            profile: self.profile,
            tools: &self.tools,
            origins: self.tools.iter().map(|t| (t.name(), t.origin())).collect(),
            filtered: &self.filtered,
            cut: &self.cut,
            diagnostics: &self.diagnostics,
            deferred: self.deferred_tools().map(CatalogTool::name).collect(),
        }
    }

    /// Records the servers the runtime could not list and those it held
    /// back, for [`Catalog::counts`].
    pub(crate) fn note_servers(
        &mut self,
        unavailable: impl IntoIterator<Item = String>,
        withheld: impl IntoIterator<Item = String>,
    ) {
        self.unavailable.extend(unavailable);
        self.withheld.extend(withheld);
    }

    pub(crate) fn push_diagnostics(&mut self, extra: impl IntoIterator<Item = CatalogDiagnostic>) {
        self.diagnostics.extend(extra);
        self.diagnostics.sort();
        self.diagnostics.dedup();
    }
}

/// The list a host sends: every tool in name order. Under a budget that
/// deferred some, `anthropic` marks those `defer_loading: true` and the
/// other profiles leave them out; either way the search tool comes last.
impl Serialize for Catalog {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(search) = &self.search else {
            let mut seq = serializer.serialize_seq(Some(self.tools.len()))?;
            for tool in &self.tools {
                seq.serialize_element(tool)?;
            }
            return seq.end();
        };
        let marked = self.profile == ProviderProfile::Anthropic;
        let shown = match marked {
            true => self.tools.len(),
            false => self.tools.len() - self.deferred.len(),
        };
        let mut seq = serializer.serialize_seq(Some(shown + 1))?;
        for (i, tool) in self.tools.iter().enumerate() {
            match (self.deferred.contains(&i), marked) {
                (false, _) => seq.serialize_element(tool)?,
                (true, true) => seq.serialize_element(&tool.definition(true))?,
                (true, false) => {}
            }
        }
        seq.serialize_element(&search.definition)?;
        seq.end()
    }
}

/// [`Catalog`] with its diagnostics, for reports and snapshots.
#[derive(Debug, Serialize)]
pub struct CatalogReport<'a> {
    /// The naming style of the tool names.
    pub style: NamingStyle,
    /// The provider profile the schemas were written for.
    pub profile: ProviderProfile,
    /// The tools in name order, as the model sees them.
    pub tools: &'a [CatalogTool],
    /// Name → (server, raw tool).
    pub origins: BTreeMap<&'a str, &'a ToolOrigin>,
    /// Tools `toolFilter` hid, per server.
    pub filtered: &'a BTreeMap<String, usize>,
    /// Descriptions cut, per server; left out when none was.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub cut: &'a BTreeMap<String, usize>,
    /// Every diagnostic, in [`Catalog::diagnostics`] order.
    pub diagnostics: &'a [CatalogDiagnostic],
    /// Tools a budget deferred; left out when none was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deferred: Vec<&'a str>,
}
