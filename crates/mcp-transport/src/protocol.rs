//! The MCP payloads the session and the catalog exchange, typed only as far
//! as the client needs. Everything a server may extend (annotations,
//! `_meta`, content blocks other than text, image and audio) stays a JSON
//! value so an unknown field or block type never makes a result unreadable.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ContentBlock;

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
/// The `_meta` entries a client may state for one request rather than
/// once per session: what it can do and how much it wants logged are
/// facts about the request (a gateway passes on its own client's), while
/// the revision and the client's identity stay the session's.
pub const REQUEST_STATED_META: [&str; 2] = [META_CLIENT_CAPABILITIES, META_LOG_LEVEL];

/// The tasks extension (SEP-2663), as named in `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The answer to `server/discover` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// The revisions the server speaks, newest first as it listed them.
    #[serde(default)]
    pub supported_versions: Vec<String>,
    /// What the server offers (`tools`, `resources`, `prompts`, `extensions`, ...), as raw JSON.
    #[serde(default)]
    pub capabilities: Value,
    /// What the server asks a model to know about using it.
    #[serde(default)]
    pub instructions: Option<String>,
    /// The pre-release shape some servers still send; the spec's place is
    /// `_meta["io.modelcontextprotocol/serverInfo"]`.
    #[serde(default)]
    pub server_info: Option<Implementation>,
    /// The result's `_meta` member, where 2026-07-28 puts the server's identity.
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
    /// The program's name, the machine-readable identity.
    #[serde(default)]
    pub name: String,
    /// Its version as it reports it.
    #[serde(default)]
    pub version: String,
    /// A human-readable name for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// The server's answer to `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server chose.
    pub protocol_version: String,
    /// What the server offers (`tools`, `resources`, `prompts`, `logging`, ...), as raw JSON.
    #[serde(default)]
    pub capabilities: Value,
    /// Who the server says it is.
    #[serde(default)]
    pub server_info: Implementation,
    /// What the server asks a model to know about using it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// One entry of `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The tool's name as the server calls it.
    pub name: String,
    /// A human-readable name for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for a model choosing tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the arguments (`{"type": "object"}` when the server sent none).
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    /// The JSON Schema of `structuredContent`, when the tool declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Hints about the tool's behaviour (`readOnlyHint`, `destructiveHint`, ...), as raw JSON.
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

/// The answer to `tools/call`. Text, image and audio blocks are typed;
/// every other block stays JSON as sent (see [`ContentBlock`]); the catalog
/// converts them for a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The content blocks, in the server's order.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// The structured result, matching the tool's output schema when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool reports a failure (a result the model should see, not a protocol error).
    #[serde(default)]
    pub is_error: bool,
}

/// One entry of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Where the resource lives; what `resources/read` takes.
    pub uri: String,
    /// The resource's name.
    #[serde(default)]
    pub name: String,
    /// A human-readable name for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// One entry of `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// The prompt's name; what `prompts/get` takes.
    pub name: String,
    /// A human-readable name for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes (`name`, `description`, `required`), as raw JSON.
    #[serde(default)]
    pub arguments: Vec<Value>,
}

/// One entry of `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// An RFC 6570 URI template.
    pub uri_template: String,
    /// The template's name.
    #[serde(default)]
    pub name: String,
    /// A human-readable name for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources it names hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Their media type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// The answer to `resources/read`; contents stay raw JSON (text or blob).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ReadResourceResult {
    /// The resource's contents: `text` or base64 `blob` entries, as raw JSON.
    #[serde(default)]
    pub contents: Vec<Value>,
}

/// The answer to `prompts/get`; messages stay raw JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct GetPromptResult {
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The prompt's messages (`role`, `content`), as raw JSON.
    #[serde(default)]
    pub messages: Vec<Value>,
}
