//! `mcp-catalog` owns what a model sees and how it gets there: session
//! runtimes (lazy concurrent connect, a shared in-flight build, cache, idle
//! TTL, `list_changed`, failure backoff) and materialisation of the tools of
//! every server into one flat, deterministic catalog (naming, filters,
//! schema normalisation per provider, result conversion).
//!
//! It sits on `mcp-config` and `mcp-transport` and must not depend on
//! `mcp-cli`. It never prints.
//!
//! Two layers, kept apart on purpose:
//!
//! - **Materialisation is pure.** [`materialize`] takes every server's
//!   listing and returns a [`Catalog`]; the same set of listings gives the
//!   same bytes whatever order they arrive in. Names ([`NamingStyle`],
//!   [`tools::NameAllocator`]), filters ([`filter`]), schemas per provider
//!   ([`ProviderProfile`], [`schemas::prepare_schema`]) and result conversion
//!   ([`convert_result`]) are plain functions with no I/O.
//! - **The runtime does the I/O.** A [`SessionRuntime`] connects through a
//!   [`Connector`] ([`McpConnector`] in production, a scripted fake in
//!   tests) and keeps time through a [`Clock`], so eviction and
//!   backoff are tested without waiting. A warm fetch is one lock and an
//!   `Arc` clone.
//!
//! Every item has one path, at the crate root, except the helpers of two
//! small namespaces: [`filter`] (`toolFilter` patterns) and [`deep`]
//! (JSON of any depth without recursion).
//!
//! Only approved servers start: [`ServerSet::from_loaded`] keeps project
//! servers that await approval or are denied away from the connector and
//! reports each one in the catalog's diagnostics.
//!
//! A materialised tool maps back to its server and raw tool name
//! ([`CatalogTool::origin`]); [`SessionRuntime::call`] validates the
//! arguments against the server's own schema and sends the call over the
//! already-open session.
//!
//! Large catalogs stay within a host-set token budget: each
//! tool's definition has an estimated cost ([`CatalogTool::estimated_tokens`]),
//! a [`ToolBudget`] defers what does not fit (pinned and recently used
//! tools first), and the model finds deferred tools through Anthropic's
//! tool search or the `search_tools` tool, whose matches
//! [`SessionRuntime`] loads for the next catalog.
//!
//! Cargo features: the transport kinds of `mcp-transport` under the same
//! names (`stdio`, `streamable-http`, `sse`, `ws`, `sdk`,
//! `claudeai-proxy`, `oauth`) and `validation` (JSON Schema validation of
//! arguments and results, see [`FULL_VALIDATION`]), all on by default.
//! `default-features = false, features = ["stdio"]` gives a stdio-only
//! host with no HTTP, TLS, WebSocket or JWT crate in its build.
//!
//! Skills (the `io.modelcontextprotocol/skills` extension) are a second
//! listing beside the tools: [`agent_skills::list_skills`] reads none of their files,
//! [`agent_skills::load_skill`] reads and verifies a `SKILL.md` on demand, and a loaded
//! skill's supporting files are read and verified only after it passed.
//!
//! Tool names default to [`NamingStyle::Claw`] (`mcp__server__tool`, as
//! the CLI and Claude Code spell them); [`NamingStyle::OpenClaw`]
//! (`server__tool`) is one [`MaterializeOptions::with_style`] away.
//!
//! # Example
//!
//! A host loads the configuration from directories it names (never the
//! process's own home or working directory), lets only approved servers
//! start, and asks for the catalog it sends to Anthropic's Messages API.
//! Here the only server is a project server nobody approved yet, so
//! nothing is spawned and the catalog says why it is empty:
//!
//! ```
//! use std::sync::Arc;
//!
//! use mcp_catalog::{
//!     MaterializeOptions, McpConnector, ProviderProfile, RuntimeOptions, ServerSet,
//!     SessionRuntime,
//! };
//! use mcp_config::{LoadOptions, load};
//! use mcp_transport::ConnectOptions;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let home = tempfile::tempdir()?;
//! let project = tempfile::tempdir()?;
//! std::fs::write(
//!     project.path().join(".mcp.json"),
//!     r#"{"mcpServers": {"files": {"command": "files-server", "args": ["--root", "."]}}}"#,
//! )?;
//!
//! let mut options = LoadOptions::default();
//! options.home = Some(home.path().to_owned());
//! options.project = Some(project.path().to_owned());
//! let loaded = load(&options);
//!
//! // The approval path: `files` awaits the user's approval, so it is held
//! // back from the connector and reported instead.
//! let servers = ServerSet::from_loaded(&loaded);
//! assert!(servers.runnable().is_empty());
//! assert_eq!(servers.withheld()[0].server, "files");
//!
//! let runtime = SessionRuntime::builder(
//!     "session-1",
//!     servers,
//!     Arc::new(McpConnector::new(ConnectOptions::default())),
//! )
//! .with_options(RuntimeOptions::new().with_materialize(
//!     MaterializeOptions::new().with_profile(ProviderProfile::Anthropic),
//! ))
//! .build();
//!
//! let catalog = runtime.catalog().await?;
//! // Serialised, the catalog is the request's `tools` array.
//! assert_eq!(serde_json::to_value(catalog.as_ref())?, serde_json::json!([]));
//! assert_eq!(catalog.counts().withheld, 1);
//! for diagnostic in catalog.diagnostics() {
//!     println!("{}: {}", diagnostic.server, diagnostic.message);
//! }
//! runtime.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! With an approved (or user-scope) server the same runtime connects on
//! the first [`SessionRuntime::catalog`], and a model's tool call goes
//! back to it by the catalog name:
//!
//! ```no_run
//! # use mcp_catalog::SessionRuntime;
//! # async fn turn(runtime: &SessionRuntime) -> Result<(), mcp_catalog::CatalogError> {
//! let catalog = runtime.catalog().await?;
//! let tool = catalog.get("mcp__files__read").expect("listed by the server");
//! let result = runtime
//!     .call(tool.name(), serde_json::json!({"path": "README.md"}))
//!     .await?;
//! // The `tool_result` block of the next user message.
//! let block = result.to_anthropic("toolu_01");
//! # let _ = block;
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// Whether this build validates tool arguments and structured results
/// against their JSON Schemas (the `validation` feature, on by default).
/// Without it, [`CatalogTool::validate`] makes only cheap checks (depth,
/// an object, the top-level `required` names) and
/// [`CatalogTool::check_output`] checks nothing; the server validates.
pub const FULL_VALIDATION: bool = cfg!(feature = "validation");

mod backoff;
mod catalog;
mod clock;
pub mod deep;
mod error;
pub mod filter;
mod mcp_connector;
mod naming;
mod result;
mod runtime;
mod schema;
mod search;
mod servers;
mod skills;
mod tool;

// What a host needs first; the rest sits in the named modules below.
pub use backoff::BackoffPolicy;
pub use catalog::{
    Catalog, CatalogCounts, CatalogDiagnostic, CatalogReport, CatalogTool, MaterializeOptions,
    SchemaCache, ServerFeatures, ServerTools, ToolTarget, materialize, materialize_cached,
};
pub use clock::{Clock, SystemClock};
pub use error::{CatalogError, CatalogErrorKind, Cause};
pub use mcp_connector::McpConnector;
pub use naming::NamingStyle;
pub use result::{ModelBlock, ModelResult, ResultStatus, convert_result};
pub use runtime::{
    CatalogUpdates, Connection, Connector, Reconciled, RuntimeManager, RuntimeManagerBuilder,
    RuntimeOptions, ServerEvents, SessionRuntime, SessionRuntimeBuilder,
};
pub use schema::ProviderProfile;
pub use search::{SEARCH_TOOLS_NAME, ToolBudget};
pub use servers::ServerSet;

/// The session runtime's reports, bounds and leases, the connector's
/// session, and a clock tests can move.
pub mod sessions {
    pub use crate::clock::{ManualClock, rfc3339};
    pub use crate::mcp_connector::{CATALOG_EVENT_CAPACITY, SessionConnection};
    pub use crate::runtime::{
        Browsed, ConnectReport, DEFAULT_MAX_CONCURRENT_CONNECTS, DEFAULT_RETIRE_GRACE, InputRounds,
        MAX_LISTED_ITEMS, MIN_SWEEP_INTERVAL, RuntimeLease, ServerCounts, ServerIdentity,
        ToolCallOutput,
    };
}

/// Tool naming, materialisation details and the tool-search budget.
pub mod tools {
    pub use crate::catalog::{
        DEFAULT_DESCRIPTION_LIMIT, MAX_ARGUMENT_DEPTH, MAX_INSTRUCTIONS_CHARS,
        MAX_RAW_TOOL_NAME_BYTES, PreparedArguments, ServerInstructions, ToolOrigin, UtilityTool,
        combine_instructions, defuse_listing, describe as describe_tool, materialize_among,
    };
    pub use crate::naming::{
        MAX_NAME_LEN, MAX_OPENCLAW_SERVER_LEN, NameAdjustment, NameAllocator, ServerPrefix,
        is_valid_name, normalize_name_for_mcp, normalize_server_name_for_mcp, openclaw_fragment,
        tool_owners,
    };
    pub use crate::search::{
        AnthropicToolSearch, BudgetReport, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, estimate_tokens,
    };
}

/// Tool results as a model reads them, block by block, within a size cap.
pub mod results {
    pub use crate::result::{
        DEFAULT_MAX_RESULT_BYTES, convert_block, convert_result_owned, dispose_result,
    };
}

/// JSON Schema work: normalising, provider forms, limits and checks.
// The schema functions keep their short names inside the crate, where
// `schema::normalize` reads well; here they say what they work on.
pub mod schemas {
    pub use crate::schema::{
        GEMINI_KEYWORDS, MAX_DEPTH as MAX_SCHEMA_DEPTH, MAX_JSON_DEPTH, OPENAI_KEYWORDS,
        SchemaLimits, UnknownArguments, check_composition, check_limits as check_schema_limits,
        check_output_schema, check_ref_cycles, for_profile as schema_for_profile,
        normalize as normalize_schema, prepare as prepare_schema,
        prepare_shared as prepare_schema_shared, prepare_shared_with as prepare_schema_shared_with,
        strip_optional_nulls, unknown_arguments,
    };
}

/// Agent Skills served over MCP: listing, loading and digests.
pub mod agent_skills {
    pub use crate::skills::{
        LoadedSkill, MAX_SKILL_FILE_BYTES, MAX_SKILL_PAGES, SKILLS_EXTENSION, SessionSkills, Skill,
        SkillFile, SkillFileContent, SkillFiles, SkillListing, SkillSource, advertises_skills,
        digest_of as skill_digest, list_skills, load_skill,
    };
}

// The crate's README examples compile (and run where they can) with the
// doctests, so the page a reader sees first never goes stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
