//! `mcp-catalog` owns what a model sees and how it gets there: session
//! runtimes (lazy concurrent connect, a shared in-flight build, cache, idle
//! TTL, `list_changed`, failure backoff) and materialisation of the tools of
//! every server into one flat, deterministic catalog (naming, filters,
//! schema normalisation per provider, result conversion).
//!
//! It sits on `mcp-config` and `mcp-transport` and must not depend on
//! `mcp-cli`. It never prints.

pub mod backoff;
pub mod catalog;
pub mod clock;
pub mod error;
pub mod filter;
pub mod mcp_connector;
pub mod naming;
pub mod result;
pub mod runtime;
pub mod schema;

pub use catalog::{
    Catalog, CatalogDiagnostic, CatalogReport, CatalogTool, MaterializeOptions, SchemaCache,
    ServerFeatures, ServerTools, ToolOrigin, ToolTarget, UtilityTool, materialize,
    materialize_cached,
};
pub use error::CatalogError;
pub use mcp_connector::{McpConnector, SessionConnection};
pub use naming::NamingStyle;
pub use result::{ModelBlock, ModelResult, ResultStatus, convert_result};
pub use runtime::{
    Connection, Connector, RuntimeLease, RuntimeManager, RuntimeOptions, ServerEvents,
    SessionRuntime,
};
pub use schema::ProviderProfile;
