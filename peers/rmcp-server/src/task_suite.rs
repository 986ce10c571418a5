//! The conformance suite's task tools, on rmcp's `TaskManager`: the set
//! its `tasks-*` server scenarios call (SEP-2663), served by
//! `rmcp-peer-server task-suite` so the suite can run against a proxy
//! with a real tasks server behind it.
//!
//!     greet {name}             sync only: "Hello, {name}!"
//!     slow_compute {seconds,label}
//!                              a task when the request takes tasks: sleeps
//!                              `seconds`, settles `cancelled` on tasks/cancel;
//!                              otherwise answers in place
//!     failing_job              task required: a tool error after ~1 s
//!     protocol_error_job       a task that fails with a protocol error
//!     confirm_delete {filename}
//!                              a task that asks one elicitation question
//!     multi_input              a task that asks two questions at once
//!     test_tool_with_task      task required: an input round for user_name,
//!                              then a task whose result names the user
//!
//! Whether a request takes tasks is what it declares for itself (its
//! `_meta` capabilities at 2026-07-28), as rmcp reads it.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ContentBlock, CreateTaskResult, ElicitRequest, GetTaskParams, GetTaskResult, InputRequest,
    InputRequests, InputRequiredResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::{text, tool};

/// How often a client should poll, in milliseconds.
const POLL_INTERVAL_MS: u64 = 100;
/// How long a task stays observable, in milliseconds.
const TTL_MS: u64 = 60_000;

fn argument<'a>(request: &'a CallToolRequestParams, name: &str) -> Option<&'a Value> {
    request
        .arguments
        .as_ref()
        .and_then(|arguments| arguments.get(name))
}

/// An `elicitation/create` for `message`, asking for the string `field`
/// or, with `field` `None`, for a boolean `confirm`.
fn question(message: &str, field: Option<&str>) -> Result<ElicitRequest, ErrorData> {
    let schema = match field {
        Some(field) => json!({
            "type": "object",
            "properties": {field: {"type": "string"}},
            "required": [field]
        }),
        None => json!({
            "type": "object",
            "properties": {"confirm": {"type": "boolean"}},
            "required": ["confirm"]
        }),
    };
    serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema}
    }))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// What an elicitation answer accepted under `field`, if it accepted.
fn accepted(answer: &Value, field: &str) -> Option<Value> {
    (answer.get("action").and_then(Value::as_str) == Some("accept"))
        .then(|| answer.get("content").and_then(|c| c.get(field)).cloned())
        .flatten()
}

fn tasks_required() -> ErrorData {
    ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    )
}

/// The suite's task tools over one shared `TaskManager`.
#[derive(Clone, Default)]
pub struct TaskSuite {
    tasks: TaskManager,
}

impl TaskSuite {
    pub fn tools(&self) -> Result<Vec<Tool>, ErrorData> {
        let object = json!({"type": "object"});
        Ok(vec![
            tool(json!({"name": "greet", "description": "Greets, at once",
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}))?,
            tool(
                json!({"name": "slow_compute", "description": "Sleeps, then answers",
                "inputSchema": {"type": "object", "properties": {
                    "seconds": {"type": "number"}, "label": {"type": "string"}}},
                "execution": {"taskSupport": "optional"}}),
            )?,
            tool(
                json!({"name": "failing_job", "description": "Fails after a second",
                "inputSchema": object, "execution": {"taskSupport": "required"}}),
            )?,
            tool(
                json!({"name": "protocol_error_job", "description": "Fails with a protocol error",
                "inputSchema": object, "execution": {"taskSupport": "optional"}}),
            )?,
            tool(
                json!({"name": "confirm_delete", "description": "Asks before deleting a file",
                "inputSchema": {"type": "object", "properties": {"filename": {"type": "string"}}},
                "execution": {"taskSupport": "optional"}}),
            )?,
            tool(
                json!({"name": "multi_input", "description": "Asks two questions at once",
                "inputSchema": object, "execution": {"taskSupport": "optional"}}),
            )?,
            tool(
                json!({"name": "test_tool_with_task", "description": "Asks a name, then works on it",
                "inputSchema": object, "execution": {"taskSupport": "required"}}),
            )?,
        ])
    }

    /// Answers a call to one of the suite's tools; `None` for any other.
    pub async fn call(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        let takes_tasks = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        let answer = match request.name.as_ref() {
            "greet" => {
                let name = argument(request, "name")
                    .and_then(Value::as_str)
                    .unwrap_or("world");
                Ok(text(&format!("Hello, {name}!")).into())
            }
            "slow_compute" => Ok(self.slow_compute(request, takes_tasks).await),
            "failing_job" if !takes_tasks => Err(tasks_required()),
            "failing_job" => Ok(self.spawn(|_| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Ok(CallToolResult::error(vec![ContentBlock::text(
                    "the job failed",
                )]))
            })),
            "protocol_error_job" => {
                let failure = || ErrorData::internal_error("the job broke", None);
                match takes_tasks {
                    true => Ok(self.spawn(move |_| async move { Err(TaskExit::Error(failure())) })),
                    false => Err(failure()),
                }
            }
            "confirm_delete" => self.confirm_delete(request, takes_tasks),
            "multi_input" => self.multi_input(takes_tasks),
            "test_tool_with_task" if !takes_tasks => Err(tasks_required()),
            "test_tool_with_task" => self.tool_with_task(request),
            _ => return None,
        };
        Some(answer)
    }

    fn spawn<F, Fut>(&self, work: F) -> CallToolResponse
    where
        F: FnOnce(TaskContext) -> Fut,
        Fut: Future<Output = Result<CallToolResult, TaskExit>> + Send + 'static,
    {
        let options = TaskOptions::new()
            .with_ttl_ms(TTL_MS)
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        let task = self.tasks.spawn(options, |context| Box::pin(work(context)));
        CallToolResponse::Task(CreateTaskResult::new(task))
    }

    async fn slow_compute(
        &self,
        request: &CallToolRequestParams,
        takes_tasks: bool,
    ) -> CallToolResponse {
        let seconds = argument(request, "seconds")
            .and_then(Value::as_f64)
            .unwrap_or(1.0)
            .clamp(0.0, 600.0);
        let label = argument(request, "label")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let wait = Duration::from_secs_f64(seconds);
        let done = move || text(&format!("computed {label} in {seconds}s"));
        if !takes_tasks {
            tokio::time::sleep(wait).await;
            return done().into();
        }
        self.spawn(move |context| async move {
            tokio::select! {
                () = tokio::time::sleep(wait) => Ok(done()),
                () = context.cancelled() => Err(TaskExit::Cancelled),
            }
        })
    }

    fn confirm_delete(
        &self,
        request: &CallToolRequestParams,
        takes_tasks: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        let filename = argument(request, "filename")
            .and_then(Value::as_str)
            .unwrap_or("the file")
            .to_owned();
        let ask = question(&format!("Delete {filename}?"), None)?;
        let verdict = move |answer: &Value| match accepted(answer, "confirm") {
            Some(Value::Bool(true)) => text(&format!("deleted {filename}")),
            _ => text(&format!("kept {filename}")),
        };
        if !takes_tasks {
            // Without tasks the question is an input round of the call.
            if let Some(answer) = request
                .input_responses
                .as_ref()
                .and_then(|r| r.get("confirm"))
            {
                return Ok(verdict(answer).into());
            }
            let mut requests = InputRequests::new();
            requests.insert("confirm".to_owned(), InputRequest::Elicitation(ask));
            return Ok(InputRequiredResult::from_input_requests(requests).into());
        }
        Ok(self.spawn(move |context| async move {
            let answer = context
                .request_input("confirm", InputRequest::Elicitation(ask))
                .await?;
            Ok(verdict(&answer))
        }))
    }

    fn multi_input(&self, takes_tasks: bool) -> Result<CallToolResponse, ErrorData> {
        if !takes_tasks {
            return Err(tasks_required());
        }
        let first = question("Your name?", Some("name"))?;
        let second = question("Your colour?", Some("colour"))?;
        Ok(self.spawn(move |context| async move {
            let (name, colour) = tokio::join!(
                context.request_input("name", InputRequest::Elicitation(first)),
                context.request_input("colour", InputRequest::Elicitation(second)),
            );
            let (name, colour) = (name?, colour?);
            let name = accepted(&name, "name").unwrap_or(Value::Null);
            let colour = accepted(&colour, "colour").unwrap_or(Value::Null);
            Ok(text(&format!("{name} likes {colour}")))
        }))
    }

    fn tool_with_task(
        &self,
        request: &CallToolRequestParams,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(answer) = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get("user_name"))
        else {
            let mut requests = InputRequests::new();
            let ask = question("What is your name?", Some("name"))?;
            requests.insert("user_name".to_owned(), InputRequest::Elicitation(ask));
            return Ok(InputRequiredResult::from_input_requests(requests).into());
        };
        let name = match accepted(answer, "name") {
            Some(Value::String(name)) => name,
            _ => {
                return Err(ErrorData::invalid_params(
                    "user_name was not answered with a name",
                    None,
                ));
            }
        };
        Ok(self.spawn(move |_| async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(text(&format!("Hello, {name}, from a task")))
        }))
    }
}

impl ServerHandler for TaskSuite {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .build();
        let mut info = ServerConfig::new(capabilities);
        info.server_info.name = "rmcp-task-suite".into();
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
        match self.call(&request, &context).await {
            Some(answer) => answer,
            None => Err(ErrorData::invalid_params(
                format!("unknown tool {}", request.name),
                None,
            )),
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
