//! The seam between a runtime and its servers: a [`Connection`] is one
//! connected server as the runtime uses it, a [`Connector`] opens one, and
//! [`ServerEvents`] carries a connection's news back to its runtime. Also
//! what the runtime reports about a server or a call made through it.

use std::fmt;
use std::sync::{Arc, Weak};
use std::time::Duration;

use async_trait::async_trait;
use futures::future::BoxFuture;
use mcp_config::ServerConfig;
use mcp_transport::types::RejectedTool;
use mcp_transport::{CallToolResult, Tool};
use mcp_transport::{Listing, ProgressCallback};
use serde_json::{Map, Value};

use crate::catalog::ServerFeatures;
use crate::deep;
use crate::error::{CatalogError, Cause};
use crate::result::{ModelResult, dispose_result};

/// Who answers a server's `input_required` rounds on a relayed call
/// ([`Connection::call_tool_relayed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputRounds {
    /// The session's handler, as on any call.
    Answered,
    /// The host's own client: the round is the call's answer, and the
    /// client sends the retry.
    HandedBack,
}

/// A connected server, as the runtime uses it. Implementations enforce
/// the timeouts they are given (a progress notification may extend a tool
/// call's).
#[async_trait]
pub trait Connection: Send + Sync {
    /// What the server announced in `initialize`.
    fn features(&self) -> ServerFeatures;

    /// Every tool, all pages.
    async fn list_tools(&self) -> Result<Vec<Tool>, CatalogError>;

    /// [`Connection::list_tools`] with what the server said about caching
    /// the listing (`ttlMs`, `cacheScope`). The default has no TTL and is
    /// private: kept until `list_changed`, never shared, as before
    /// 2026-07-28.
    async fn list_tools_listing(&self) -> Result<Listing<Tool>, CatalogError> {
        Ok(Listing::of(self.list_tools().await?))
    }

    /// `tools/call` with the raw tool name, within `timeout` in all (the
    /// entry's tool-call timeout, which progress never extends). With
    /// `progress`, the server's progress notifications are delivered there.
    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Duration,
        progress: Option<ProgressCallback>,
    ) -> Result<CallToolResult, CatalogError>;

    /// `resources/list` (one page); the raw result.
    async fn list_resources(&self, cursor: Option<String>) -> Result<Value, CatalogError>;

    /// `resources/read`; the raw result.
    async fn read_resource(&self, uri: &str) -> Result<Value, CatalogError>;

    /// `resources/templates/list` (one page); the raw result. The default
    /// answers with no templates, for connections that cannot ask.
    async fn list_resource_templates(
        &self,
        _cursor: Option<String>,
    ) -> Result<Value, CatalogError> {
        Ok(serde_json::json!({ "resourceTemplates": [] }))
    }

    /// `prompts/list` (one page); the raw result.
    async fn list_prompts(&self, cursor: Option<String>) -> Result<Value, CatalogError>;

    /// `prompts/get`; the raw result.
    async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, CatalogError>;

    /// `tools/call` with `params` as given (`name`, `arguments`, a
    /// retry's `inputResponses` and `requestState`, and the `_meta`
    /// entries the host's own client stated for the request), for a host
    /// that relays its client's call: with [`InputRounds::HandedBack`] an
    /// `input_required` result is the answer, for the client to retry;
    /// with [`InputRounds::Answered`] the session's handler answers the
    /// rounds. A task the server starts comes back as its handle only when
    /// the request states its client takes tasks; otherwise it is followed
    /// to its end. The raw result. The default sends a plain call (nothing
    /// but the name and arguments passed on).
    async fn call_tool_relayed(
        &self,
        params: Value,
        rounds: InputRounds,
        timeout: Duration,
        progress: Option<ProgressCallback>,
    ) -> Result<Value, CatalogError> {
        let _ = rounds;
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        self.call_tool_raw(name, arguments, timeout, progress).await
    }

    /// [`Connection::request`] with an `input_required` result handed
    /// back as the result (`prompts/get`, `resources/read`; see
    /// [`Connection::call_tool_relayed`]). The default is
    /// [`Connection::request`].
    async fn request_handing_back(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, CatalogError> {
        self.request(method, params).await
    }

    /// Any other request (`completion/complete`, `logging/setLevel`,
    /// `resources/subscribe`, …) with its raw result. The default refuses
    /// it, for connections that cannot send one.
    async fn request(&self, method: &str, _params: Value) -> Result<Value, CatalogError> {
        Err(CatalogError::request(
            self.identity()
                .map_or_else(String::new, |identity| identity.name),
            method,
            Cause::other("this connection sends no other request"),
        ))
    }

    /// Closes the connection (for stdio: the whole shutdown sequence).
    async fn close(&self);

    /// [`Connection::call_tool`], answering with the server's result as
    /// it came, for hosts that show it. The default writes the parsed
    /// result back as JSON.
    async fn call_tool_raw(
        &self,
        name: &str,
        arguments: Value,
        timeout: Duration,
        progress: Option<ProgressCallback>,
    ) -> Result<Value, CatalogError> {
        let result = self.call_tool(name, arguments, timeout, progress).await?;
        // Serialising a `CallToolResult` cannot fail: it holds JSON only.
        let raw = serde_json::to_value(&result).unwrap_or_default();
        dispose_result(result);
        Ok(raw)
    }

    /// The tools the last listing left out because their definitions
    /// cannot be used (an invalid `x-mcp-header`, at 2026-07-28 over
    /// HTTP), and why. The catalog reports each one.
    fn rejected_tools(&self) -> Vec<RejectedTool> {
        Vec::new()
    }

    /// What the server said about itself in `initialize`, when known.
    fn identity(&self) -> Option<ServerIdentity> {
        None
    }

    /// How many resources the server lists, over every page.
    async fn count_resources(&self) -> Result<usize, CatalogError> {
        count_pages(|cursor| self.list_resources(cursor), "resources").await
    }

    /// How many prompts the server lists, over every page.
    async fn count_prompts(&self) -> Result<usize, CatalogError> {
        count_pages(|cursor| self.list_prompts(cursor), "prompts").await
    }
}

/// The pages a default count follows at most (a server that keeps
/// answering with new cursors is not followed for ever).
const MAX_COUNTED_PAGES: usize = 1000;

/// Counts the items of a paged list, following `nextCursor` until it is
/// absent or repeats.
async fn count_pages<'a, F>(mut page: F, field: &str) -> Result<usize, CatalogError>
where
    F: FnMut(Option<String>) -> BoxFuture<'a, Result<Value, CatalogError>>,
{
    let mut count = 0;
    let mut cursor = None;
    let mut seen = std::collections::HashSet::new();
    for number in 0..MAX_COUNTED_PAGES {
        let listed = match page(cursor.take()).await {
            Err(error) if number == 0 => match super::browse::first_page(Err(error))? {
                Ok(listed) => listed,
                Err(_unimplemented) => break,
            },
            listed => listed?,
        };
        count += listed
            .get(field)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match listed.get("nextCursor").and_then(Value::as_str) {
            Some(next) if seen.insert(next.to_owned()) => cursor = Some(next.to_owned()),
            _ => break,
        }
        deep::dispose(listed);
    }
    Ok(count)
}

/// A server's own account of itself, from its `initialize` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    /// The protocol version both sides agreed on.
    pub protocol_version: String,
    /// The server's `serverInfo.name`.
    pub name: String,
    /// The server's `serverInfo.version`.
    pub version: String,
    /// What the server said about using it (`instructions`), as given.
    pub instructions: Option<String>,
}

/// What connecting to one server found (see [`crate::SessionRuntime::probe`]).
#[derive(Debug, Clone)]
pub struct ConnectReport {
    /// The configured name of the server.
    pub server: String,
    /// From the start of the attempt until the connection was open (or
    /// the attempt failed).
    pub connect_time: Duration,
    /// Set once the server is connected.
    pub identity: Option<ServerIdentity>,
    /// Set once every list was counted.
    pub counts: Option<ServerCounts>,
    /// Why connecting or counting failed.
    pub error: Option<CatalogError>,
}

/// How many tools, resources and prompts a server lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerCounts {
    /// Tools in `tools/list`.
    pub tools: usize,
    /// Resources in `resources/list` (zero without the capability).
    pub resources: usize,
    /// Prompts in `prompts/list` (zero without the capability).
    pub prompts: usize,
}

/// A tool call's model output and the server's result it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallOutput {
    /// The server's answer as it came: the `tools/call` result, or for a
    /// utility tool the answer of the request it stands for.
    pub raw: Value,
    /// What a model is given, exactly as [`crate::SessionRuntime::call_tool`]
    /// returns it.
    pub model: ModelResult,
}

/// Turns a server entry into a connected, initialised [`Connection`].
#[async_trait]
pub trait Connector: Send + Sync {
    /// Connects to `server`. The connection reports `tools/list_changed`
    /// and its own end through `events`.
    async fn connect(
        &self,
        server: &ServerConfig,
        events: ServerEvents,
    ) -> Result<Arc<dyn Connection>, CatalogError>;
}

/// Where a connection's events go: the runtime that opened it.
pub(super) trait EventSink: Send + Sync {
    fn on_tools_changed(&self, server: &str, epoch: u64);
    fn on_offers_changed(&self, server: &str, epoch: u64);
    fn on_closed(&self, server: &str, epoch: u64);
}

/// The sink of a connection used outside a runtime: no event goes
/// anywhere.
struct Detached;

impl EventSink for Detached {
    fn on_tools_changed(&self, _server: &str, _epoch: u64) {}
    fn on_offers_changed(&self, _server: &str, _epoch: u64) {}
    fn on_closed(&self, _server: &str, _epoch: u64) {}
}

/// How a connection tells its runtime about server-side changes. Events
/// from a connection the runtime already replaced are ignored.
#[derive(Clone)]
pub struct ServerEvents {
    pub(super) runtime: Weak<dyn EventSink>,
    pub(super) server: String,
    pub(super) epoch: u64,
}

impl fmt::Debug for ServerEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerEvents")
            .field("server", &self.server)
            .field("epoch", &self.epoch)
            .finish()
    }
}

impl ServerEvents {
    /// Events that go nowhere, for a connection used outside a runtime.
    pub fn detached(server: impl Into<String>) -> Self {
        ServerEvents {
            runtime: Weak::<Detached>::new(),
            server: server.into(),
            epoch: 0,
        }
    }

    /// The server sent `notifications/tools/list_changed`: its tools are
    /// listed again and the catalog rebuilt on the next attempt.
    pub fn tools_changed(&self) {
        if let Some(runtime) = self.runtime.upgrade() {
            runtime.on_tools_changed(&self.server, self.epoch);
        }
    }

    /// The server sent `notifications/resources/list_changed` or
    /// `notifications/prompts/list_changed`: whether it lists any
    /// resources or prompts (and so gets their utility tools) is checked
    /// again and the catalog rebuilt on the next attempt.
    pub fn offers_changed(&self) {
        if let Some(runtime) = self.runtime.upgrade() {
            runtime.on_offers_changed(&self.server, self.epoch);
        }
    }

    /// The connection ended: the next attempt reconnects.
    pub fn closed(&self) {
        if let Some(runtime) = self.runtime.upgrade() {
            runtime.on_closed(&self.server, self.epoch);
        }
    }

    /// The server these events belong to.
    pub fn server(&self) -> &str {
        &self.server
    }
}
