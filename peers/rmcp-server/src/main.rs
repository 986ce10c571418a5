//! A small MCP server on rmcp 3.11 for the peer tests. It speaks 2026-07-28
//! (server/discover, per-request _meta, subscriptions/listen, input_required
//! results, the tasks extension) and the 2025 handshake to older clients, as
//! rmcp serves both.
//!
//!     rmcp-peer-server stdio
//!     rmcp-peer-server http PORT   streamable HTTP on 127.0.0.1:PORT/mcp
//!                                  (stateless at 2026-07-28, sessions before)
//!     rmcp-peer-server task-suite  the conformance suite's task tools over
//!                                  stdio (see `task_suite`)
//!
//! Tools:
//!     echo {text}  returns `text`
//!     toggle       adds the tool `extra` when it is absent, removes it when
//!                  present, and tells the client the tool list changed
//!     extra        present only while toggled on; returns "extra"
//!     confirm      asks the client for {confirm: boolean}: an input_required
//!                  result at 2026-07-28, an elicitation/create request before;
//!                  returns "confirmed: true|false" or "declined"
//!     slow {ms}    waits `ms` (default 200) and returns "done"; a task
//!                  (`resultType: "task"`, polled with tasks/get) when the
//!                  client declares the tasks extension

mod task_suite;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CreateTaskResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, GetTaskParams, GetTaskResult,
    InputRequest, InputRequests, InputRequiredResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool, UpdateTaskParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::task_manager::{TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::broadcast;

/// State every connection and every per-request instance shares: the HTTP
/// entry builds a fresh handler per request at 2026-07-28.
#[derive(Clone)]
struct Peer {
    extra_on: Arc<AtomicBool>,
    tools_changed: broadcast::Sender<()>,
    tasks: TaskManager,
}

fn tool(value: Value) -> Result<Tool, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn text(value: &str) -> CallToolResult {
    CallToolResult::success(vec![rmcp::model::ContentBlock::text(value)])
}

fn answer(result: &ElicitResult) -> CallToolResult {
    match result.action {
        ElicitationAction::Accept => {
            let confirmed = result
                .content
                .as_ref()
                .and_then(|content| content.get("confirm"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            text(&format!("confirmed: {confirmed}"))
        }
        _ => text("declined"),
    }
}

fn confirm_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "description": "Go ahead?"}},
        "required": ["confirm"]
    })
}

fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

impl Peer {
    fn tools(&self) -> Result<Vec<Tool>, ErrorData> {
        let mut tools = vec![
            tool(json!({"name": "echo", "description": "Returns its text",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}))?,
            tool(
                json!({"name": "toggle", "description": "Adds or removes the tool `extra`",
                "inputSchema": {"type": "object"}}),
            )?,
            tool(
                json!({"name": "confirm", "description": "Asks the user to confirm",
                "inputSchema": {"type": "object"}}),
            )?,
            tool(
                json!({"name": "slow", "description": "Waits, then answers (a task when the client takes tasks)",
                "inputSchema": {"type": "object", "properties": {"ms": {"type": "integer"}}}}),
            )?,
        ];
        if self.extra_on.load(Ordering::SeqCst) {
            tools.push(tool(
                json!({"name": "extra", "description": "Listed while toggled on",
                "inputSchema": {"type": "object"}}),
            )?);
        }
        Ok(tools)
    }

    async fn toggle(&self, context: &RequestContext<RoleServer>) -> CallToolResult {
        let now_on = !self.extra_on.fetch_xor(true, Ordering::SeqCst);
        if is_modern(context) {
            // Delivered on every open subscriptions/listen stream.
            let _ = self.tools_changed.send(());
        } else {
            let _ = context.peer.notify_tool_list_changed().await;
        }
        text(if now_on { "added" } else { "removed" })
    }

    async fn confirm(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form", "message": "Confirm?", "requestedSchema": confirm_schema()
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        if is_modern(context) {
            if let Some(response) = request
                .input_responses
                .as_ref()
                .and_then(|responses| responses.get("confirm"))
            {
                let result: ElicitResult = serde_json::from_value(response.clone())
                    .map_err(|_| ErrorData::invalid_params("invalid confirm response", None))?;
                return Ok(answer(&result).into());
            }
            let request: rmcp::model::ElicitRequest = serde_json::from_value(json!({
                "method": "elicitation/create", "params": params
            }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            let mut requests = InputRequests::new();
            requests.insert("confirm".to_owned(), InputRequest::Elicitation(request));
            return Ok(InputRequiredResult::from_input_requests(requests).into());
        }
        let result = context
            .peer
            .create_elicitation(params)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(answer(&result).into())
    }

    fn slow(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<CallToolResponse> {
        let ms = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get("ms"))
            .and_then(Value::as_u64)
            .unwrap_or(200);
        let takes_tasks = is_modern(context)
            && context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.supports_tasks());
        if !takes_tasks {
            return None;
        }
        let task = self.tasks.spawn(
            TaskOptions::new().with_poll_interval_ms(50),
            move |_context| {
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(text("done"))
                })
            },
        );
        Some(CallToolResponse::Task(CreateTaskResult::new(task)))
    }
}

impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks()
            .build();
        let mut info = ServerConfig::new(capabilities);
        info.server_info.name = "rmcp-peer".into();
        info.server_info.version = "3.11.0".into();
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match request.name.as_ref() {
            "echo" => {
                let value = request
                    .arguments
                    .as_ref()
                    .and_then(|arguments| arguments.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                Ok(text(&value).into())
            }
            "toggle" => Ok(self.toggle(&context).await.into()),
            "extra" if self.extra_on.load(Ordering::SeqCst) => Ok(text("extra").into()),
            "confirm" => self.confirm(&request, &context).await,
            "slow" => match self.slow(&request, &context) {
                Some(task) => Ok(task),
                None => {
                    let ms = request
                        .arguments
                        .as_ref()
                        .and_then(|arguments| arguments.get("ms"))
                        .and_then(Value::as_u64)
                        .unwrap_or(200);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(text("done").into())
                }
            },
            other => Err(ErrorData::invalid_params(
                format!("unknown tool {other}"),
                None,
            )),
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.tools_changed.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                change = changes.recv() => match change {
                    Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        if context.sink().notify_tool_list_changed().await.is_err() {
                            return Ok(());
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return Ok(()),
                },
            }
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let peer = Peer {
        extra_on: Arc::new(AtomicBool::new(false)),
        tools_changed: broadcast::channel(16).0,
        tasks: TaskManager::new(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] | ["stdio"] => {
            let running = peer.serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
        }
        ["task-suite"] => {
            let running = task_suite::TaskSuite::default()
                .serve(rmcp::transport::stdio())
                .await?;
            running.waiting().await?;
        }
        ["http", port] => {
            let port: u16 = port.parse()?;
            let service = StreamableHttpService::new(
                move || Ok(peer.clone()),
                LocalSessionManager::default().into(),
                StreamableHttpServerConfig::default(),
            );
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
            eprintln!("listening on 127.0.0.1:{port}");
            loop {
                let (stream, _) = listener.accept().await?;
                let service = TowerToHyperService::new(service.clone());
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
        _ => {
            eprintln!("usage: rmcp-peer-server stdio | http PORT | task-suite");
            std::process::exit(2);
        }
    }
    Ok(())
}
