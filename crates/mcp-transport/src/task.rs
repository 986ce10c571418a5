//! Task payloads of both generations, read into one [`Task`] shape.
//!
//! MCP has had tasks twice. Revision 2025-11-25 made them an experimental
//! core feature: a tool's listing says `execution.taskSupport`, the server
//! advertises `capabilities.tasks.requests.tools.call`, the client opts in
//! per call with a `task` parameter, gets `{task: {...}}` back, polls
//! `tasks/get` (fields `ttl`, `pollInterval`) and fetches the payload with
//! `tasks/result`. From 2026-07-28 tasks are the `io.modelcontextprotocol/tasks`
//! extension (SEP-2663): negotiated in `capabilities.extensions`, the server
//! alone decides to answer a `tools/call` with `resultType: "task"`, and
//! `tasks/get` (fields `ttlMs`, `pollIntervalMs`) carries the final
//! `result` or `error` and any `inputRequests`, answered with `tasks/update`.
//! The two are not wire compatible, so each has its own reader here and the
//! session picks one by the negotiated revision; callers only see [`Task`].

use std::time::Duration;

use serde_json::{Map, Value};

use crate::protocol::Tool;

/// The extension's name in `capabilities.extensions` (SEP-2663).
pub(crate) use crate::protocol::TASKS_EXTENSION;

/// The first revision where tasks are the extension rather than the
/// experimental 2025-11-25 feature: the first modern one.
pub(crate) use crate::protocol::FIRST_MODERN_VERSION as FIRST_EXTENSION_REVISION;

/// The `_meta` key a 2025-11-25 server puts on messages that belong to a
/// task (for instance the elicitation it sends while a task waits).
pub const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";

/// Whether a request's `params` state, for that request alone, that its
/// client takes tasks: the extension in the capabilities of its `_meta`
/// (2026-07-28). A task handle may go back only to such a client; for any
/// other the one who relays the request follows the task to its end.
pub fn states_tasks(params: &Value) -> bool {
    params
        .get("_meta")
        .and_then(|meta| meta.get(crate::protocol::META_CLIENT_CAPABILITIES))
        .and_then(|capabilities| capabilities.get("extensions"))
        .and_then(|extensions| extensions.get(TASKS_EXTENSION))
        .is_some_and(Value::is_object)
}

/// How a tool may be run as a task (`execution.taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// The tool must not be called as a task (the default when absent).
    #[default]
    Forbidden,
    /// The tool may be called either way.
    Optional,
    /// The tool must be called as a task.
    Required,
}

impl TaskSupport {
    /// Reads `execution.taskSupport`; anything absent or unknown is
    /// [`TaskSupport::Forbidden`], which the spec names as the default.
    pub fn from_execution(execution: Option<&Value>) -> TaskSupport {
        match execution
            .and_then(|execution| execution.get("taskSupport"))
            .and_then(Value::as_str)
        {
            Some("required") => TaskSupport::Required,
            Some("optional") => TaskSupport::Optional,
            _ => TaskSupport::Forbidden,
        }
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

impl Tool {
    /// How this tool may be run as a task, from its listing.
    pub fn task_support(&self) -> TaskSupport {
        TaskSupport::from_execution(self.execution.as_ref())
    }
}

/// Where a task stands.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskStatus {
    /// In progress.
    Working,
    /// Waiting for the client to answer the server's requests.
    InputRequired,
    /// Finished with a result (which may be a tool error).
    Completed,
    /// Finished with a JSON-RPC error.
    Failed,
    /// Cancelled before it finished.
    Cancelled,
    /// A status this client does not know, as sent; treated as still running.
    Other(String),
}

impl TaskStatus {
    pub(crate) fn parse(text: &str) -> TaskStatus {
        match text {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            other => TaskStatus::Other(other.to_owned()),
        }
    }

    /// Whether the task can no longer change.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::Other(other) => other,
        }
    }
}

/// One observation of a task, from either generation.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// The server's handle.
    pub task_id: String,
    /// Where the task stands.
    pub status: TaskStatus,
    /// What the server says about the current status.
    pub status_message: Option<String>,
    /// When the server created it (ISO 8601, as sent).
    pub created_at: Option<String>,
    /// When its status last changed (ISO 8601, as sent).
    pub last_updated_at: Option<String>,
    /// How long the server keeps the task from its creation; `None` when
    /// unlimited or unsaid.
    pub ttl: Option<Duration>,
    /// How often the server asks to be polled.
    pub poll_interval: Option<Duration>,
    /// The final result (extension, `completed`).
    pub result: Option<Value>,
    /// The JSON-RPC error the task ended with (extension, `failed`).
    pub error: Option<Value>,
    /// Server→client requests waiting for an answer, by key (extension,
    /// `input_required`).
    pub input_requests: Map<String, Value>,
}

impl Task {
    /// Reads a 2025-11-25 task object (`tasks/get`'s result, or the `task`
    /// of a `CreateTaskResult`). `None` when it has no `taskId` or status.
    pub fn from_experimental(value: &Value) -> Option<Task> {
        Task::read(value, "ttl", "pollInterval")
    }

    /// Reads a 2026-07-28 extension task (a `CreateTaskResult` or a
    /// `tasks/get` result), with its inlined result, error or requests.
    pub fn from_extension(value: &Value) -> Option<Task> {
        let mut task = Task::read(value, "ttlMs", "pollIntervalMs")?;
        task.result = value.get("result").filter(|v| v.is_object()).cloned();
        task.error = value.get("error").filter(|v| v.is_object()).cloned();
        if let Some(Value::Object(requests)) = value.get("inputRequests") {
            task.input_requests = requests.clone();
        }
        Some(task)
    }

    fn read(value: &Value, ttl: &str, poll: &str) -> Option<Task> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let millis = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_f64)
                .filter(|ms| ms.is_finite() && *ms >= 0.0)
                .map(|ms| Duration::from_millis(ms.min(u64::MAX as f64) as u64))
        };
        Some(Task {
            task_id: text("taskId").filter(|id| !id.is_empty())?,
            status: TaskStatus::parse(value.get("status")?.as_str()?),
            status_message: text("statusMessage"),
            created_at: text("createdAt"),
            last_updated_at: text("lastUpdatedAt"),
            ttl: millis(ttl),
            poll_interval: millis(poll),
            result: None,
            error: None,
            input_requests: Map::new(),
        })
    }

    /// The error's `code` and `message`, for a failed extension task.
    pub fn error_parts(&self) -> (Option<i64>, Option<String>) {
        let Some(error) = &self.error else {
            return (None, None);
        };
        (
            error.get("code").and_then(Value::as_i64),
            error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
        )
    }
}

/// Which tasks a session can use with its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskGeneration {
    /// The experimental tasks of 2025-11-25.
    Experimental,
    /// The `io.modelcontextprotocol/tasks` extension (2026-07-28 on).
    Extension,
}

/// Which generation applies at `protocol_version`, and whether the server
/// offers it for `tools/call` (`capabilities` as the server sent them).
pub fn task_generation(protocol_version: &str, capabilities: &Value) -> Option<TaskGeneration> {
    if protocol_version >= FIRST_EXTENSION_REVISION {
        // SEP-2663: the legacy `tasks` capability means nothing here.
        capabilities
            .get("extensions")
            .and_then(|extensions| extensions.get(TASKS_EXTENSION))
            .filter(|entry| entry.is_object())
            .map(|_| TaskGeneration::Extension)
    } else {
        // SEP-2663: the extension is not defined before 2026-07-28.
        capabilities
            .pointer("/tasks/requests/tools/call")
            .filter(|entry| !entry.is_null())
            .map(|_| TaskGeneration::Experimental)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn task_support_defaults_to_forbidden() {
        let check = |execution: Option<Value>, expect: TaskSupport| {
            assert_eq!(
                TaskSupport::from_execution(execution.as_ref()),
                expect,
                "{execution:?}"
            );
        };
        check(None, TaskSupport::Forbidden);
        check(Some(json!({})), TaskSupport::Forbidden);
        check(Some(json!("required")), TaskSupport::Forbidden);
        check(Some(json!({"taskSupport": 1})), TaskSupport::Forbidden);
        check(
            Some(json!({"taskSupport": "sometimes"})),
            TaskSupport::Forbidden,
        );
        check(
            Some(json!({"taskSupport": "forbidden"})),
            TaskSupport::Forbidden,
        );
        check(
            Some(json!({"taskSupport": "optional"})),
            TaskSupport::Optional,
        );
        check(
            Some(json!({"taskSupport": "required"})),
            TaskSupport::Required,
        );
    }

    #[test]
    fn a_listed_tool_keeps_its_execution() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "research",
            "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "required"}
        }))
        .unwrap();
        assert_eq!(tool.task_support(), TaskSupport::Required);
        let plain: Tool = serde_json::from_value(json!({"name": "echo"})).unwrap();
        assert_eq!(plain.task_support(), TaskSupport::Forbidden);
    }

    #[test]
    fn experimental_tasks_read_ttl_and_poll_interval() {
        let task = Task::from_experimental(&json!({
            "taskId": "t1", "status": "working", "ttl": 300000, "pollInterval": 1000,
            "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
            "statusMessage": "Gathering sources..."
        }))
        .unwrap();
        assert_eq!(task.task_id, "t1");
        assert_eq!(task.status, TaskStatus::Working);
        assert_eq!(task.ttl, Some(Duration::from_secs(300)));
        assert_eq!(task.poll_interval, Some(Duration::from_secs(1)));
        assert_eq!(task.status_message.as_deref(), Some("Gathering sources..."));
        // The extension's field names are not the experimental ones.
        let null_ttl = Task::from_experimental(&json!({
            "taskId": "t2", "status": "completed", "ttl": null, "pollIntervalMs": 5
        }))
        .unwrap();
        assert_eq!((null_ttl.ttl, null_ttl.poll_interval), (None, None));
        assert!(null_ttl.status.is_terminal());
    }

    #[test]
    fn extension_tasks_inline_their_outcome() {
        let done = Task::from_extension(&json!({
            "resultType": "complete", "taskId": "t", "status": "completed",
            "ttlMs": 60000, "pollIntervalMs": 5000,
            "result": {"content": [{"type": "text", "text": "Hello, Luca!"}], "isError": false}
        }))
        .unwrap();
        assert_eq!(done.poll_interval, Some(Duration::from_secs(5)));
        assert_eq!(done.result.unwrap()["content"][0]["text"], "Hello, Luca!");
        let failed = Task::from_extension(&json!({
            "taskId": "t", "status": "failed",
            "error": {"code": -32603, "message": "API rate limit exceeded"}
        }))
        .unwrap();
        assert_eq!(
            failed.error_parts(),
            (Some(-32603), Some("API rate limit exceeded".to_owned()))
        );
        let waiting = Task::from_extension(&json!({
            "taskId": "t", "status": "input_required",
            "inputRequests": {"name": {"method": "elicitation/create", "params": {}}}
        }))
        .unwrap();
        assert_eq!(waiting.input_requests.len(), 1);
        let odd = Task::from_extension(&json!({"taskId": "t", "status": "paused"})).unwrap();
        assert_eq!(odd.status, TaskStatus::Other("paused".to_owned()));
        assert!(!odd.status.is_terminal());
        assert_eq!(Task::from_extension(&json!({"status": "working"})), None);
        assert_eq!(
            Task::from_extension(&json!({"taskId": "", "status": "working"})),
            None
        );
        assert_eq!(Task::from_extension(&json!({"taskId": "t"})), None);
    }

    #[test]
    fn a_request_states_tasks_only_with_the_extension_in_its_own_capabilities() {
        use crate::protocol::META_CLIENT_CAPABILITIES as CAPS;
        let check = |params: Value, expected: bool| {
            assert_eq!(states_tasks(&params), expected, "{params}");
        };
        check(
            json!({"_meta": {CAPS: {"extensions": {TASKS_EXTENSION: {}}}}}),
            true,
        );
        check(
            json!({"_meta": {CAPS: {"extensions": {TASKS_EXTENSION: {"x": 1}}}}}),
            true,
        );
        check(
            json!({"_meta": {CAPS: {"extensions": {TASKS_EXTENSION: null}}}}),
            false,
        );
        check(
            json!({"_meta": {CAPS: {"extensions": {TASKS_EXTENSION: true}}}}),
            false,
        );
        check(
            json!({"_meta": {CAPS: {"extensions": {"other/ext": {}}}}}),
            false,
        );
        check(json!({"_meta": {CAPS: {"tasks": {}}}}), false);
        check(
            json!({"_meta": {"extensions": {TASKS_EXTENSION: {}}}}),
            false,
        );
        check(json!({"extensions": {TASKS_EXTENSION: {}}}), false);
        check(json!({"_meta": 1}), false);
        check(json!(null), false);
    }

    #[test]
    fn the_generation_follows_the_revision() {
        let legacy = json!({"tasks": {"requests": {"tools": {"call": {}}}}});
        let extension = json!({"extensions": {TASKS_EXTENSION: {}}});
        let both = json!({
            "tasks": {"requests": {"tools": {"call": {}}}},
            "extensions": {TASKS_EXTENSION: {}}
        });
        let check = |version: &str, caps: &Value, expect: Option<TaskGeneration>| {
            assert_eq!(task_generation(version, caps), expect, "{version} {caps}");
        };
        check("2025-11-25", &legacy, Some(TaskGeneration::Experimental));
        check("2025-11-25", &extension, None);
        check("2025-11-25", &both, Some(TaskGeneration::Experimental));
        check("2026-07-28", &legacy, None);
        check("2026-07-28", &extension, Some(TaskGeneration::Extension));
        check("2026-07-28", &both, Some(TaskGeneration::Extension));
        check("2025-06-18", &json!({}), None);
        check(
            "2025-11-25",
            &json!({"tasks": {"requests": {"tools": {}}}}),
            None,
        );
    }
}
