//! An in-process MCP server made of named async functions: the host
//! registers each tool with its definition and handler, and the
//! [`ToolRouter`] answers the protocol around them, so a host never writes
//! `initialize`, `tools/list` or `tools/call` over the raw channels of
//! [`SdkServer`].
//!
//! A router speaks every revision the session knows: it answers
//! `initialize` (up to 2025-11-25) and `server/discover` with per-request
//! `_meta` and `subscriptions/listen` (2026-07-28), so the same router
//! serves a pinned older session and a modern one alike. It validates
//! nothing the host did not ask for: schemas are the host's JSON, passed
//! on as given, and a handler sees the arguments the client sent (or, for
//! [`ToolRouter::with_typed_tool`], them read into its own type). Tools can
//! be added and removed while clients are connected; each connected client
//! is told with `notifications/tools/list_changed`.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::lock;

use async_trait::async_trait;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use crate::error_codes;
use crate::message::{ErrorObject, JsonRpcMessage, Notification, Request, RequestId};
use crate::protocol::{META_SERVER_INFO, META_SUBSCRIPTION_ID};
use crate::sdk::{SdkServer, SdkServerConnection};
use crate::serving::{self, Revision};

/// A tool's definition as `tools/list` shows it: a name and an input
/// schema, with an optional description, title, output schema and
/// annotations. Every part is passed on as given.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    name: String,
    input_schema: Value,
    description: Option<String>,
    title: Option<String>,
    output_schema: Option<Value>,
    annotations: Option<Value>,
}

impl ToolSpec {
    /// A tool called `name` taking arguments described by `input_schema`
    /// (a JSON Schema object, such as `{"type": "object", "properties":
    /// {...}}`).
    pub fn new(name: impl Into<String>, input_schema: Value) -> Self {
        ToolSpec {
            name: name.into(),
            input_schema,
            description: None,
            title: None,
            output_schema: None,
            annotations: None,
        }
    }

    /// What the tool does, for the model choosing it.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A name to show people.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The schema of the tool's structured content.
    pub fn with_output_schema(mut self, output_schema: Value) -> Self {
        self.output_schema = Some(output_schema);
        self
    }

    /// Behaviour hints such as `{"readOnlyHint": true}`.
    pub fn with_annotations(mut self, annotations: Value) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The entry of `tools/list`.
    fn to_value(&self) -> Value {
        let mut tool = Map::new();
        tool.insert("name".into(), Value::from(self.name.as_str()));
        if let Some(title) = &self.title {
            tool.insert("title".into(), Value::from(title.as_str()));
        }
        if let Some(description) = &self.description {
            tool.insert("description".into(), Value::from(description.as_str()));
        }
        tool.insert("inputSchema".into(), self.input_schema.clone());
        if let Some(output_schema) = &self.output_schema {
            tool.insert("outputSchema".into(), output_schema.clone());
        }
        if let Some(annotations) = &self.annotations {
            tool.insert("annotations".into(), annotations.clone());
        }
        Value::Object(tool)
    }
}

/// What a tool returns: content blocks for the model, optionally
/// structured content, and whether it is an error the model should see.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    content: Vec<Value>,
    structured: Option<Value>,
    is_error: bool,
}

impl ToolOutput {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput::content(vec![json!({"type": "text", "text": text.into()})])
    }

    /// Structured content, also given as a text block of its JSON for
    /// clients that read only content blocks (as the spec recommends).
    pub fn structured(value: Value) -> Self {
        ToolOutput::text(value.to_string()).with_structured(value)
    }

    /// These content blocks (`text`, `image`, `audio`, `resource_link`,
    /// `resource`), as given.
    pub fn content(blocks: Vec<Value>) -> Self {
        ToolOutput {
            content: blocks,
            structured: None,
            is_error: false,
        }
    }

    /// A failure the model should see and may recover from: one text
    /// block, with `isError: true`.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            is_error: true,
            ..ToolOutput::text(text)
        }
    }

    /// Adds structured content (replacing any).
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// Appends one content block.
    pub fn with_block(mut self, block: Value) -> Self {
        self.content.push(block);
        self
    }

    /// The `tools/call` result.
    fn into_value(self) -> Value {
        let mut result = Map::new();
        result.insert("content".into(), Value::Array(self.content));
        if let Some(structured) = self.structured {
            result.insert("structuredContent".into(), structured);
        }
        if self.is_error {
            result.insert("isError".into(), Value::Bool(true));
        }
        Value::Object(result)
    }
}

/// A registered handler: the arguments in, the result out (a handler's
/// error already turned into an `isError` result).
type Handler = Arc<dyn Fn(Value) -> BoxFuture<'static, ToolOutput> + Send + Sync>;

struct Entry {
    spec: ToolSpec,
    handler: Handler,
}

struct State {
    name: String,
    version: String,
    instructions: Mutex<Option<String>>,
    /// In registration order, which `tools/list` keeps.
    tools: Mutex<Vec<Entry>>,
    /// Bumped on every change of the tool set; each connection watches it.
    changed: watch::Sender<u64>,
    /// How many clients would hear a change now.
    listeners: AtomicUsize,
}

/// An in-process MCP server offering the tools registered on it.
///
/// Cheap to clone: clones share the tools, so a host keeps one to add and
/// remove tools after registering another in an [`crate::sdk::SdkRegistry`].
///
/// ```
/// use std::sync::Arc;
/// use mcp_transport::kinds::{SdkRegistry, ToolOutput, ToolRouter, ToolSpec};
/// use serde_json::{Value, json};
///
/// #[derive(serde::Deserialize)]
/// struct Add { a: f64, b: f64 }
///
/// let numbers = json!({"type": "object", "properties": {
///     "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]});
/// let router = ToolRouter::new("calc", "1.0.0")
///     .with_typed_tool(ToolSpec::new("add", numbers).with_description("Adds a and b"),
///         |Add { a, b }| async move { Ok::<_, String>(ToolOutput::text((a + b).to_string())) })
///     .with_tool(ToolSpec::new("echo", json!({"type": "object"})).with_description("Echoes its arguments"),
///         |args: Value| async move { Ok::<_, String>(ToolOutput::structured(args)) });
///
/// // A config entry `{"type": "sdk", "name": "calc"}` now reaches it.
/// let mut registry = SdkRegistry::new();
/// registry.register("calc", Arc::new(router.clone()));
/// assert_eq!(router.tool_names(), ["add", "echo"]);
/// ```
#[derive(Clone)]
pub struct ToolRouter {
    state: Arc<State>,
}

impl fmt::Debug for ToolRouter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRouter")
            .field("name", &self.state.name)
            .field("tools", &self.tool_names())
            .finish_non_exhaustive()
    }
}

impl ToolRouter {
    /// A router without tools, introducing itself as `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ToolRouter {
            state: Arc::new(State {
                name: name.into(),
                version: version.into(),
                instructions: Mutex::new(None),
                tools: Mutex::new(Vec::new()),
                changed: watch::channel(0).0,
                listeners: AtomicUsize::new(0),
            }),
        }
    }

    /// Instructions for the model, sent with the server's identity (to
    /// clients that connect from then on).
    pub fn with_instructions(self, instructions: impl Into<String>) -> Self {
        *lock(&self.state.instructions) = Some(instructions.into());
        self
    }

    /// Adds a tool whose handler takes the call's `arguments` as JSON
    /// (`{}` when the client sent none). A handler's `Err` becomes an
    /// `isError` result carrying its text.
    pub fn with_tool<F, Fut, E>(self, spec: ToolSpec, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, E>> + Send + 'static,
        E: fmt::Display + 'static,
    {
        self.add_tool(spec, handler);
        self
    }

    /// Adds a tool whose handler takes the arguments read into `T`; when
    /// they do not fit `T`, the client gets an `isError` result saying why
    /// (so a model can correct its call) and the handler is not run.
    pub fn with_typed_tool<T, F, Fut, E>(self, spec: ToolSpec, handler: F) -> Self
    where
        T: DeserializeOwned + Send + 'static,
        F: Fn(T) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, E>> + Send + 'static,
        E: fmt::Display + 'static,
    {
        self.add_typed_tool(spec, handler);
        self
    }

    /// [`ToolRouter::with_tool`] on a router in use: connected clients are
    /// told the list changed. A tool of the same name is replaced.
    pub fn add_tool<F, Fut, E>(&self, spec: ToolSpec, handler: F)
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, E>> + Send + 'static,
        E: fmt::Display + 'static,
    {
        let handler: Handler = Arc::new(move |arguments| {
            let call = handler(arguments);
            async move {
                call.await
                    .unwrap_or_else(|e| ToolOutput::error(e.to_string()))
            }
            .boxed()
        });
        self.insert(Entry { spec, handler });
    }

    /// [`ToolRouter::with_typed_tool`] on a router in use: connected
    /// clients are told the list changed.
    pub fn add_typed_tool<T, F, Fut, E>(&self, spec: ToolSpec, handler: F)
    where
        T: DeserializeOwned + Send + 'static,
        F: Fn(T) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, E>> + Send + 'static,
        E: fmt::Display + 'static,
    {
        let name = spec.name.clone();
        let handler: Handler = Arc::new(move |arguments| match serde_json::from_value(arguments) {
            Ok(arguments) => {
                let call = handler(arguments);
                async move {
                    call.await
                        .unwrap_or_else(|e| ToolOutput::error(e.to_string()))
                }
                .boxed()
            }
            Err(error) => {
                let refusal = ToolOutput::error(format!("invalid arguments for {name}: {error}"));
                async move { refusal }.boxed()
            }
        });
        self.insert(Entry { spec, handler });
    }

    /// Removes the tool called `name`; connected clients are told the list
    /// changed. False when there was none.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = {
            let mut tools = lock(&self.state.tools);
            let before = tools.len();
            tools.retain(|entry| entry.spec.name != name);
            tools.len() != before
        };
        if removed {
            self.announce();
        }
        removed
    }

    /// The tools' names, in registration order.
    pub fn tool_names(&self) -> Vec<String> {
        lock(&self.state.tools)
            .iter()
            .map(|entry| entry.spec.name.clone())
            .collect()
    }

    /// How many connected clients hear a change now: each session at an
    /// older revision once initialized, each 2026-07-28 session once its
    /// `subscriptions/listen` for tool changes is open. A change made while
    /// it is 0 reaches no one (a client lists the tools when it connects).
    pub fn listeners(&self) -> usize {
        self.state.listeners.load(Ordering::SeqCst)
    }

    fn insert(&self, entry: Entry) {
        {
            let mut tools = lock(&self.state.tools);
            match tools.iter_mut().find(|e| e.spec.name == entry.spec.name) {
                Some(existing) => *existing = entry,
                None => tools.push(entry),
            }
        }
        self.announce();
    }

    fn announce(&self) {
        self.state.changed.send_modify(|version| *version += 1);
    }
}

#[async_trait]
impl SdkServer for ToolRouter {
    async fn serve(self: Arc<Self>, connection: SdkServerConnection) {
        let SdkServerConnection {
            mut incoming,
            outgoing,
        } = connection;
        let mut changes = self.state.changed.subscribe();
        changes.mark_unchanged();
        let mut connection = Connection {
            state: Arc::clone(&self.state),
            outgoing,
            initialized: false,
            listens: Vec::new(),
            calls: HashMap::new(),
        };
        loop {
            tokio::select! {
                message = incoming.recv() => match message {
                    Some(message) => {
                        if !connection.handle(message).await {
                            return;
                        }
                    }
                    None => return,
                },
                changed = changes.changed() => {
                    if changed.is_err() || !connection.announce().await {
                        return;
                    }
                }
            }
        }
    }
}

/// One client's connection: what it has opened, what runs for it.
struct Connection {
    state: Arc<State>,
    outgoing: mpsc::Sender<JsonRpcMessage>,
    /// A session at an older revision finished `initialize`.
    initialized: bool,
    /// The open `subscriptions/listen` requests asking for tool changes.
    listens: Vec<RequestId>,
    /// Tool calls running, so a cancellation can stop them.
    calls: HashMap<RequestId, AbortHandle>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        let heard = usize::from(self.initialized) + self.listens.len();
        self.state.listeners.fetch_sub(heard, Ordering::SeqCst);
        for call in self.calls.values() {
            call.abort();
        }
    }
}

impl Connection {
    /// Handles one message; false once the client is gone.
    async fn handle(&mut self, message: JsonRpcMessage) -> bool {
        match message {
            JsonRpcMessage::Request(request) => self.request(request).await,
            JsonRpcMessage::Notification(notification) => {
                self.notification(notification);
                true
            }
            // The router asks the client nothing.
            JsonRpcMessage::Response(_) => true,
        }
    }

    async fn send(&self, message: JsonRpcMessage) -> bool {
        self.outgoing.send(message).await.is_ok()
    }

    async fn request(&mut self, request: Request) -> bool {
        let Request { id, method, params } = request;
        let modern = match serving::request_revision(params.as_ref()) {
            Ok(revision) => revision != Revision::Session,
            Err(error) => return self.send(JsonRpcMessage::error(Some(id), error)).await,
        };
        let params = params.unwrap_or_else(serving::empty);
        let outcome = match method.as_str() {
            "initialize" => Ok(self.initialize(&params)),
            "server/discover" => Ok(self.discover()),
            "ping" => Ok(serving::empty()),
            "tools/list" => {
                let tools: Vec<Value> = lock(&self.state.tools)
                    .iter()
                    .map(|entry| entry.spec.to_value())
                    .collect();
                Ok(json!({ "tools": tools }))
            }
            "tools/call" => return self.call(id, &params, modern),
            "subscriptions/listen" if modern => return self.listen(id, &params).await,
            other => Err(ErrorObject::method_not_found(other)),
        };
        let reply = match outcome {
            Ok(result) if modern => JsonRpcMessage::result(id, serving::complete(result)),
            Ok(result) => JsonRpcMessage::result(id, result),
            Err(error) => JsonRpcMessage::error(Some(id), error),
        };
        self.send(reply).await
    }

    fn notification(&mut self, notification: Notification) {
        let Some(id) = serving::cancelled_request(&notification) else {
            return;
        };
        if let Some(call) = self.calls.remove(&id) {
            call.abort();
        }
        let before = self.listens.len();
        self.listens.retain(|listen| *listen != id);
        let closed = before - self.listens.len();
        self.state.listeners.fetch_sub(closed, Ordering::SeqCst);
    }

    /// The `initialize` answer, at the revision the client proposed when
    /// it is an older one this crate knows, else the newest older one.
    fn initialize(&mut self, params: &Value) -> Value {
        let version = serving::initialize_version(Some(params));
        if !self.initialized {
            self.initialized = true;
            self.state.listeners.fetch_add(1, Ordering::SeqCst);
        }
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": capabilities(),
            "serverInfo": self.server_info(),
        });
        if let Some(instructions) = lock(&self.state.instructions).as_deref() {
            result["instructions"] = Value::from(instructions);
        }
        result
    }

    fn discover(&self) -> Value {
        let mut result = json!({
            "supportedVersions": serving::supported_versions(),
            "capabilities": capabilities(),
            "_meta": { META_SERVER_INFO: self.server_info() },
        });
        if let Some(instructions) = lock(&self.state.instructions).as_deref() {
            result["instructions"] = Value::from(instructions);
        }
        result
    }

    fn server_info(&self) -> Value {
        json!({"name": self.state.name, "version": self.state.version})
    }

    /// Starts a `tools/call` in its own task, so calls run side by side
    /// and a slow one never holds up the connection; its answer is sent
    /// from there.
    fn call(&mut self, id: RequestId, params: &Value, modern: bool) -> bool {
        let name = params.get("name").and_then(Value::as_str);
        let handler = name.and_then(|name| {
            lock(&self.state.tools)
                .iter()
                .find(|entry| entry.spec.name == name)
                .map(|entry| Arc::clone(&entry.handler))
        });
        let Some(handler) = handler else {
            // The spec's answer to an unknown tool: a protocol error.
            let error = ErrorObject::new(
                error_codes::INVALID_PARAMS,
                match name {
                    Some(name) => format!("unknown tool: {name}"),
                    None => "tools/call without a tool name".to_owned(),
                },
            );
            let outgoing = self.outgoing.clone();
            // Sent from a task too, so its order among answers is the
            // same as a call's.
            tokio::spawn(async move {
                let _ = outgoing.send(JsonRpcMessage::error(Some(id), error)).await;
            });
            return true;
        };
        let arguments = params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let outgoing = self.outgoing.clone();
        let answer_id = id.clone();
        let task = tokio::spawn(async move {
            let output = AssertUnwindSafe(handler(arguments))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| ToolOutput::error("the tool failed unexpectedly"));
            let result = output.into_value();
            let result = if modern {
                serving::complete(result)
            } else {
                result
            };
            let _ = outgoing
                .send(JsonRpcMessage::result(answer_id, result))
                .await;
        });
        self.calls.retain(|_, call| !call.is_finished());
        self.calls.insert(id, task.abort_handle());
        true
    }

    /// `subscriptions/listen`: acknowledged with the part of the filter the
    /// router honours (tool list changes), then held open: it is answered
    /// only when the client cancels it or leaves.
    async fn listen(&mut self, id: RequestId, params: &Value) -> bool {
        let tools = params
            .pointer("/notifications/toolsListChanged")
            .and_then(Value::as_bool)
            == Some(true);
        let mut accepted = Map::new();
        if tools {
            accepted.insert("toolsListChanged".into(), Value::Bool(true));
        }
        let acknowledgement = JsonRpcMessage::notification(
            "notifications/subscriptions/acknowledged",
            Some(json!({"_meta": {META_SUBSCRIPTION_ID: id}, "notifications": accepted})),
        );
        if !self.send(acknowledgement).await {
            return false;
        }
        if tools {
            self.listens.push(id);
            self.state.listeners.fetch_add(1, Ordering::SeqCst);
        }
        true
    }

    /// Tells the client the tool list changed: on each open subscription
    /// at 2026-07-28, once on the connection before.
    async fn announce(&self) -> bool {
        const METHOD: &str = "notifications/tools/list_changed";
        if self.initialized && !self.send(JsonRpcMessage::notification(METHOD, None)).await {
            return false;
        }
        for id in &self.listens {
            let params = json!({"_meta": {META_SUBSCRIPTION_ID: id}});
            if !self
                .send(JsonRpcMessage::notification(METHOD, Some(params)))
                .await
            {
                return false;
            }
        }
        true
    }
}

/// The router always lets its tools change, so it always says so.
fn capabilities() -> Value {
    json!({"tools": {"listChanged": true}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ContentBlock;
    use crate::error::TransportErrorKind;
    use crate::error_codes::UNSUPPORTED_PROTOCOL_VERSION;
    use crate::protocol::{KNOWN_PROTOCOL_VERSIONS, META_PROTOCOL_VERSION, is_modern};
    use crate::sdk::{SdkOptions, SdkTransport};
    use crate::session::{ClientSession, ListKind, ServerEvent, SessionOptions};
    use std::time::Duration;

    #[derive(serde::Deserialize)]
    struct Add {
        a: i64,
        b: i64,
    }

    fn numbers() -> Value {
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})
    }

    /// The two-tool server of the docs: `add` typed, `fail` always failing.
    fn router() -> ToolRouter {
        ToolRouter::new("calc", "1.2.3")
            .with_instructions("Adds numbers.")
            .with_typed_tool(
                ToolSpec::new("add", numbers()).with_description("Adds a and b"),
                |Add { a, b }| async move {
                    Ok::<_, String>(ToolOutput::structured(json!({"sum": a + b})))
                },
            )
            .with_tool(
                ToolSpec::new("fail", json!({"type": "object"}))
                    .with_annotations(json!({"readOnlyHint": true})),
                |_| async { Err::<ToolOutput, _>("the disk is full") },
            )
    }

    async fn connect(router: &ToolRouter, version: &str) -> ClientSession {
        let transport = SdkTransport::connect(
            "calc",
            Arc::new(router.clone()) as Arc<dyn SdkServer>,
            SdkOptions {
                // what a wire transport would carry, both ways
                roundtrip_through_codec: true,
                ..SdkOptions::default()
            },
        );
        let options = SessionOptions {
            protocol_version: version.to_owned(),
            pin_protocol: true,
            ..SessionOptions::default()
        };
        ClientSession::initialize(Box::new(transport), "calc", options)
            .await
            .unwrap()
    }

    async fn check(version: &str) {
        let router = router();
        let session = connect(&router, version).await;
        assert_eq!(session.protocol_version(), version);
        assert_eq!(session.is_modern(), is_modern(version));
        let init = session.initialize_result();
        assert_eq!(init.server_info.name, "calc", "{version}");
        assert_eq!(init.server_info.version, "1.2.3");
        assert_eq!(init.instructions.as_deref(), Some("Adds numbers."));
        assert_eq!(init.capabilities, json!({"tools": {"listChanged": true}}));

        let tools = session.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["add", "fail"], "{version}");
        assert_eq!(tools[0].description.as_deref(), Some("Adds a and b"));
        assert_eq!(tools[0].input_schema, numbers());
        assert_eq!(tools[1].annotations, Some(json!({"readOnlyHint": true})));

        let sum = session
            .call_tool("add", Some(json!({"a": 2, "b": 3})))
            .await
            .unwrap();
        assert!(!sum.is_error);
        assert_eq!(sum.structured_content, Some(json!({"sum": 5})));
        assert_eq!(sum.content, [ContentBlock::text("{\"sum\":5}")]);

        // A handler's error and arguments that do not fit are results the
        // model sees, not protocol errors.
        let failed = session.call_tool("fail", None).await.unwrap();
        assert!(failed.is_error);
        assert_eq!(failed.content, [ContentBlock::text("the disk is full")]);
        let misfit = session
            .call_tool("add", Some(json!({"a": "two"})))
            .await
            .unwrap();
        assert!(misfit.is_error);
        let text = misfit.content[0].as_text().unwrap();
        assert!(text.starts_with("invalid arguments for add:"), "{text}");

        let unknown = session.call_tool("nope", None).await.unwrap_err();
        assert!(
            matches!(unknown.kind(), TransportErrorKind::Rpc { code, .. } if *code == error_codes::INVALID_PARAMS),
            "{unknown:?}"
        );
        let refused = session.request("resources/list", None).await.unwrap_err();
        assert!(
            matches!(refused.kind(), TransportErrorKind::Rpc { code, .. } if *code == error_codes::METHOD_NOT_FOUND),
            "{refused:?}"
        );
        session.ping().await.unwrap();

        // A tool added while connected is announced and listed.
        let mut events = session.events();
        wait_for(|| router.listeners() == 1).await;
        router.add_tool(
            ToolSpec::new("late", json!({"type": "object"})),
            |_| async { Ok::<_, String>(ToolOutput::text("here")) },
        );
        expect_tools_changed(&mut events, version).await;
        let names: Vec<String> = session
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["add", "fail", "late"]);
        assert!(router.remove_tool("late"));
        assert!(!router.remove_tool("late"));
        expect_tools_changed(&mut events, version).await;

        drop(session);
        wait_for(|| router.listeners() == 0).await;
    }

    async fn wait_for(condition: impl Fn() -> bool) {
        tokio::time::timeout(Duration::from_secs(5), async {
            while !condition() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap();
    }

    async fn expect_tools_changed(
        events: &mut tokio::sync::broadcast::Receiver<ServerEvent>,
        version: &str,
    ) {
        let event = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match events.recv().await.unwrap() {
                    ServerEvent::ListChanged(kind) => break kind,
                    _ => continue,
                }
            }
        })
        .await
        .unwrap();
        assert_eq!(event, ListKind::Tools, "{version}");
    }

    #[tokio::test]
    async fn a_router_serves_an_older_and_a_modern_session() {
        check("2025-11-25").await;
        check("2026-07-28").await;
        check("2024-11-05").await;
    }

    #[tokio::test]
    async fn a_modern_request_at_an_unknown_revision_is_refused() {
        let (to_router, incoming) = mpsc::unbounded_channel();
        let (outgoing, mut from_router) = mpsc::channel(8);
        let served =
            tokio::spawn(Arc::new(router()).serve(SdkServerConnection { incoming, outgoing }));
        let params = json!({"_meta": {META_PROTOCOL_VERSION: "2099-01-01"}});
        to_router
            .send(JsonRpcMessage::request(
                RequestId::Number(1),
                "tools/list",
                Some(params),
            ))
            .unwrap();
        let Some(JsonRpcMessage::Response(answer)) = from_router.recv().await else {
            panic!("no answer");
        };
        let error = answer.outcome.unwrap_err();
        assert_eq!(error.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            error.data.unwrap()["supported"][0],
            json!(KNOWN_PROTOCOL_VERSIONS[0])
        );
        drop(to_router);
        served.await.unwrap();
    }
}
