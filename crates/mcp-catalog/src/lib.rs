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
//!   same bytes whatever order they arrive in. Names ([`naming`]), filters
//!   ([`filter`]), schemas per provider ([`schema`]) and result conversion
//!   ([`result`]) are plain functions with no I/O.
//! - **The runtime does the I/O.** A [`SessionRuntime`] connects through a
//!   [`Connector`] ([`McpConnector`] in production, a scripted fake in
//!   tests) and keeps time through a [`clock::Clock`], so eviction and
//!   backoff are tested without waiting. A warm fetch is one lock and an
//!   `Arc` clone.
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
//! Skills (the `io.modelcontextprotocol/skills` extension) are a second
//! listing beside the tools: [`list_skills`] reads none of their files,
//! [`load_skill`] reads and verifies a `SKILL.md` on demand, and a loaded
//! skill's supporting files are read and verified only after it passed.

#![forbid(unsafe_code)]

pub mod backoff;
pub mod catalog;
pub mod clock;
pub mod deep;
pub mod error;
pub mod filter;
pub mod mcp_connector;
pub mod naming;
pub mod result;
pub mod runtime;
pub mod schema;
pub mod servers;
pub mod skills;

pub use catalog::{
    Catalog, CatalogCounts, CatalogDiagnostic, CatalogReport, CatalogTool, MaterializeOptions,
    SchemaCache, ServerFeatures, ServerTools, ToolOrigin, ToolTarget, UtilityTool, defuse_listing,
    materialize, materialize_among, materialize_cached,
};
pub use error::{CatalogError, CatalogErrorKind, Cause};
pub use mcp_connector::{CATALOG_EVENT_CAPACITY, McpConnector, SessionConnection};
pub use naming::NamingStyle;
pub use result::{ModelBlock, ModelResult, ResultStatus, convert_result, convert_result_owned};
pub use runtime::{
    CatalogUpdates, ConnectReport, Connection, Connector, RuntimeLease, RuntimeManager,
    RuntimeOptions, ServerCounts, ServerEvents, ServerIdentity, SessionRuntime, ToolCallOutput,
};
pub use schema::{ProviderProfile, SchemaLimits};
pub use servers::ServerSet;
pub use skills::{
    LoadedSkill, SessionSkills, Skill, SkillFile, SkillFiles, SkillListing, SkillSource,
    list_skills, load_skill,
};
