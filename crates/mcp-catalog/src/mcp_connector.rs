//! The production [`Connector`]: real transports through
//! [`mcp_transport::connect()`], one [`ClientSession`] per server.
//!
//! A connection remembers each tool's `execution.taskSupport` from its
//! last listing, so a tool the server says must run as a task is called as
//! one (the session polls it to its end) and every other tool plainly.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use mcp_config::ServerConfig;
use mcp_transport::types::RejectedTool;
use mcp_transport::types::{TaskGeneration, TaskSupport};
use mcp_transport::{
    CallOptions, ClientSession, ConnectOptions, EraMemory, ListKind, ServerEvent, TransportError,
};
use mcp_transport::{CallToolResult, Tool};
use mcp_transport::{Listing, ProgressCallback};
use serde_json::{Map, Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::task::AbortHandle;

use crate::catalog::ServerFeatures;
use crate::error::CatalogError;
use crate::runtime::{Connection, Connector, InputRounds, ServerEvents, ServerIdentity};

/// Server events a session opened by the catalog keeps for its listener.
/// The catalog only watches for tool-list changes and counts a lag as one,
/// so a short ring loses nothing it needs and saves about 130 KiB per
/// session over the transport's default.
pub const CATALOG_EVENT_CAPACITY: usize = 16;

/// Connects over the transport each entry names, with shared options
/// (session defaults, the stdio environment, the host's in-process
/// servers).
#[derive(Debug, Clone)]
pub struct McpConnector {
    options: ConnectOptions,
}

impl McpConnector {
    /// A connector with these transport options. Each entry's own timeouts
    /// replace the session's; the event ring is capped at
    /// [`CATALOG_EVENT_CAPACITY`]. Without an era memory in `options`
    /// ([`ConnectOptions::eras`]) the connector keeps one in memory, so a
    /// server found legacy is not probed again when the runtime reconnects
    /// it; give it one backed by a file to keep the eras across restarts.
    pub fn new(mut options: ConnectOptions) -> Self {
        options.session.event_capacity = options.session.event_capacity.min(CATALOG_EVENT_CAPACITY);
        if options.eras.is_none() {
            options.eras = Some(Arc::new(EraMemory::in_memory()));
        }
        McpConnector { options }
    }
}

impl Default for McpConnector {
    fn default() -> Self {
        McpConnector::new(ConnectOptions::default())
    }
}

#[async_trait]
impl Connector for McpConnector {
    async fn connect(
        &self,
        server: &ServerConfig,
        events: ServerEvents,
    ) -> Result<Arc<dyn Connection>, CatalogError> {
        let session = mcp_transport::connect(server, &self.options)
            .await
            .map_err(|error| CatalogError::connect(&server.name, error))?;
        Ok(Arc::new(SessionConnection::new(
            server.name.clone(),
            Arc::new(session),
            events,
        )))
    }
}

/// A [`ClientSession`] as the runtime's [`Connection`].
#[derive(Debug)]
pub struct SessionConnection {
    server: String,
    session: Arc<ClientSession>,
    features: ServerFeatures,
    forwarder: AbortHandle,
    /// Each listed tool's task support; a tool absent here is one the last
    /// listing did not show (or none was made yet).
    task_support: Mutex<HashMap<String, TaskSupport>>,
}

impl SessionConnection {
    /// Wraps an initialised session; its `tools/list_changed`
    /// notifications and its end are reported through `events`.
    pub fn new(server: String, session: Arc<ClientSession>, events: ServerEvents) -> Self {
        let features = ServerFeatures::from_capabilities(session.server_capabilities());
        let mut notifications = session.events();
        let watched = Arc::clone(&session);
        let forwarder = tokio::spawn(async move {
            loop {
                tokio::select! {
                    event = notifications.recv() => match event {
                        Ok(ServerEvent::ListChanged(ListKind::Tools)) => events.tools_changed(),
                        Ok(ServerEvent::ListChanged(ListKind::Resources | ListKind::Prompts)) => {
                            events.offers_changed()
                        }
                        Ok(_) => {}
                        // Missed events may have included a list change.
                        Err(RecvError::Lagged(_)) => {
                            events.tools_changed();
                            events.offers_changed();
                        }
                        Err(RecvError::Closed) => {
                            events.closed();
                            return;
                        }
                    },
                    _ = watched.closed() => {
                        events.closed();
                        return;
                    }
                }
            }
        })
        .abort_handle();
        SessionConnection {
            server,
            session,
            features,
            forwarder,
            task_support: Mutex::new(HashMap::new()),
        }
    }

    /// The underlying session.
    pub fn session(&self) -> &Arc<ClientSession> {
        &self.session
    }

    fn error(&self, operation: &str, error: TransportError) -> CatalogError {
        CatalogError::request(&self.server, operation, error)
    }

    fn task_table(&self) -> MutexGuard<'_, HashMap<String, TaskSupport>> {
        self.task_support
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn remember(&self, tools: &[Tool]) {
        *self.task_table() = tools
            .iter()
            .map(|tool| (tool.name.clone(), tool.task_support()))
            .collect();
    }

    /// How `name` runs, from the last listing. A tool no listing showed is
    /// looked up again when the server offers 2025-11-25 tasks, where the
    /// client must opt in per call (at 2026-07-28 the server decides, so a
    /// plain call is right either way).
    async fn support_of(&self, name: &str) -> TaskSupport {
        if let Some(support) = self.task_table().get(name) {
            return *support;
        }
        if self.session.task_generation() != Some(TaskGeneration::Experimental) {
            return TaskSupport::Forbidden;
        }
        match self.session.list_tools().await {
            Ok(tools) => {
                self.remember(&tools);
                self.task_table().get(name).copied().unwrap_or_default()
            }
            Err(_) => TaskSupport::Forbidden,
        }
    }

    async fn raw(&self, method: &str, params: Value) -> Result<Value, CatalogError> {
        self.session
            .request(method, Some(params))
            .await
            .map_err(|error| self.error(method, error))
    }
}

impl Drop for SessionConnection {
    fn drop(&mut self) {
        // The forwarder holds the session; without this a dropped runtime
        // would keep its servers running.
        self.forwarder.abort();
    }
}

fn cursor_params(cursor: Option<String>) -> Value {
    match cursor {
        Some(cursor) => json!({ "cursor": cursor }),
        None => json!({}),
    }
}

#[async_trait]
impl Connection for SessionConnection {
    fn features(&self) -> ServerFeatures {
        self.features
    }

    async fn list_tools(&self) -> Result<Vec<Tool>, CatalogError> {
        let tools = self
            .session
            .list_tools()
            .await
            .map_err(|error| self.error("tools/list", error))?;
        self.remember(&tools);
        Ok(tools)
    }

    async fn list_tools_listing(&self) -> Result<Listing<Tool>, CatalogError> {
        let listing = self
            .session
            .list_tools_listing()
            .await
            .map_err(|error| self.error("tools/list", error))?;
        self.remember(&listing.items);
        Ok(listing)
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Duration,
        progress: Option<ProgressCallback>,
    ) -> Result<CallToolResult, CatalogError> {
        let mut options = CallOptions::default().with_timeout(timeout);
        options.progress = progress;
        let support = self.support_of(name).await;
        self.session
            .call_tool_by_support(name, Some(arguments), support, &options)
            .await
            .map_err(|error| self.error("tools/call", error))
    }

    async fn call_tool_raw(
        &self,
        name: &str,
        arguments: Value,
        timeout: Duration,
        progress: Option<ProgressCallback>,
    ) -> Result<Value, CatalogError> {
        let mut options = CallOptions::default().with_timeout(timeout);
        options.progress = progress;
        let support = self.support_of(name).await;
        self.session
            .call_tool_value(name, Some(arguments), support, &options)
            .await
            .map_err(|error| self.error("tools/call", error))
    }

    async fn call_tool_relayed(
        &self,
        params: Value,
        rounds: InputRounds,
        timeout: Duration,
        progress: Option<ProgressCallback>,
    ) -> Result<Value, CatalogError> {
        let mut options = CallOptions::default().with_timeout(timeout);
        if rounds == InputRounds::HandedBack {
            options = options.with_input_rounds_handed_back();
        }
        options.progress = progress;
        self.session
            .call_tool_relayed(params, &options)
            .await
            .map_err(|error| self.error("tools/call", error))
    }

    fn rejected_tools(&self) -> Vec<RejectedTool> {
        self.session.rejected_tools()
    }

    fn identity(&self) -> Option<ServerIdentity> {
        let info = self.session.server_info();
        Some(ServerIdentity {
            protocol_version: self.session.protocol_version().to_owned(),
            name: info.name.clone(),
            version: info.version.clone(),
            instructions: self.session.initialize_result().instructions.clone(),
        })
    }

    async fn count_resources(&self) -> Result<usize, CatalogError> {
        self.session
            .list_resources()
            .await
            .map(|resources| resources.len())
            .map_err(|error| self.error("resources/list", error))
    }

    async fn count_prompts(&self) -> Result<usize, CatalogError> {
        self.session
            .list_prompts()
            .await
            .map(|prompts| prompts.len())
            .map_err(|error| self.error("prompts/list", error))
    }

    async fn list_resources(&self, cursor: Option<String>) -> Result<Value, CatalogError> {
        self.raw("resources/list", cursor_params(cursor)).await
    }

    async fn read_resource(&self, uri: &str) -> Result<Value, CatalogError> {
        self.raw("resources/read", json!({ "uri": uri })).await
    }

    async fn list_resource_templates(&self, cursor: Option<String>) -> Result<Value, CatalogError> {
        self.raw("resources/templates/list", cursor_params(cursor))
            .await
    }

    async fn list_prompts(&self, cursor: Option<String>) -> Result<Value, CatalogError> {
        self.raw("prompts/list", cursor_params(cursor)).await
    }

    async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, CatalogError> {
        self.raw(
            "prompts/get",
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, CatalogError> {
        // The session makes a subscription as its revision does
        // (`resources/subscribe`, or a renewed `subscriptions/listen`).
        let uri = params.get("uri").and_then(Value::as_str);
        let subscribed = match (method, uri) {
            ("resources/subscribe", Some(uri)) => self.session.subscribe_resource(uri).await,
            ("resources/unsubscribe", Some(uri)) => self.session.unsubscribe_resource(uri).await,
            _ => return self.raw(method, params).await,
        };
        subscribed
            .map(|()| json!({}))
            .map_err(|error| self.error(method, error))
    }

    async fn request_handing_back(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, CatalogError> {
        let options = CallOptions::default().with_input_rounds_handed_back();
        self.session
            .request_with(method, Some(params), &options)
            .await
            .map_err(|error| self.error(method, error))
    }

    async fn close(&self) {
        self.forwarder.abort();
        if let Err(error) = self.session.close().await {
            tracing::debug!(server = %self.server, %error, "closing the session failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connector_remembers_eras_in_memory_unless_given_a_memory() {
        let own = McpConnector::new(ConnectOptions::default());
        assert!(own.options.eras.is_some());
        let given = Arc::new(EraMemory::in_memory());
        let connector = McpConnector::new(ConnectOptions::default().with_eras(Arc::clone(&given)));
        assert!(
            connector
                .options
                .eras
                .as_ref()
                .is_some_and(|eras| Arc::ptr_eq(eras, &given))
        );
    }

    fn event_capacity_kept(requested: usize) -> usize {
        let mut options = ConnectOptions::default();
        options.session.event_capacity = requested;
        McpConnector::new(options).options.session.event_capacity
    }

    #[test]
    fn sessions_opened_by_the_catalog_keep_a_short_event_ring() {
        assert_eq!(
            McpConnector::default().options.session.event_capacity,
            CATALOG_EVENT_CAPACITY
        );
        assert_eq!(event_capacity_kept(1024), CATALOG_EVENT_CAPACITY);
        assert_eq!(event_capacity_kept(4), 4, "a smaller host choice is kept");
    }
}
