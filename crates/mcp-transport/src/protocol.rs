//! The MCP payloads the session and the catalog exchange, typed only as far
//! as the client needs. Everything a server may extend (content blocks,
//! annotations, `_meta`) stays a JSON value so an unknown field or block
//! type never makes a result unreadable.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Protocol versions this client knows, newest first.
pub const KNOWN_PROTOCOL_VERSIONS: &[&str] = &[
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// The newest revision, the one a session tries first.
pub const LATEST_PROTOCOL_VERSION: &str = "2026-07-28";

/// The first revision without the `initialize` handshake: every request
/// carries its version and capabilities in `_meta`.
pub const FIRST_MODERN_VERSION: &str = "2026-07-28";

/// Whether `version` is a modern (stateless, per-request `_meta`) revision.
/// Revisions are dates, so they compare as text.
pub fn is_modern(version: &str) -> bool {
    version >= FIRST_MODERN_VERSION
}

/// `_meta` key of a modern request's protocol version.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of a modern request's client identity.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of a modern request's client capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of a modern request's log level (replaces `logging/setLevel`).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server identity in a modern result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key tagging a notification with its `subscriptions/listen` id.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The tasks extension (SEP-2663), as named in `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The answer to `server/discover` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    #[serde(default)]
    pub supported_versions: Vec<String>,
    #[serde(default)]
    pub capabilities: Value,
    #[serde(default)]
    pub instructions: Option<String>,
    /// The pre-release shape some servers still send; the spec's place is
    /// `_meta["io.modelcontextprotocol/serverInfo"]`.
    #[serde(default)]
    pub server_info: Option<Implementation>,
    #[serde(default, rename = "_meta")]
    pub meta: Option<Value>,
}

impl DiscoverResult {
    /// The server's identity, from `_meta` or the older top-level field.
    pub fn server_info(&self) -> Implementation {
        self.meta
            .as_ref()
            .and_then(|meta| meta.get(META_SERVER_INFO))
            .and_then(|info| serde_json::from_value(info.clone()).ok())
            .or_else(|| self.server_info.clone())
            .unwrap_or_default()
    }
}

/// `serverInfo` / `clientInfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Implementation {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// The server's answer to `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: String,
    #[serde(default)]
    pub capabilities: Value,
    #[serde(default)]
    pub server_info: Implementation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// One entry of `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// How the tool runs (`taskSupport`, 2025-11-25 on); read it with
    /// [`Tool::task_support`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Value>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

/// The answer to `tools/call`. Content blocks stay raw JSON; the catalog
/// converts them for a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    #[serde(default)]
    pub content: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default)]
    pub is_error: bool,
}

/// One entry of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    pub uri: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// One entry of `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub arguments: Vec<Value>,
}

/// One entry of `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// An RFC 6570 URI template.
    pub uri_template: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// The answer to `resources/read`; contents stay raw JSON (text or blob).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ReadResourceResult {
    #[serde(default)]
    pub contents: Vec<Value>,
}

/// The answer to `prompts/get`; messages stay raw JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct GetPromptResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub messages: Vec<Value>,
}
