//! Tool calls run as tasks: the call path that decides by a tool's
//! `taskSupport`, and the bounded poll loops of both task generations
//! (see [`crate::task`]).
//!
//! A host sees a tool call either way: the loops below drive the task to
//! its end and hand back the `CallToolResult` the call would have given.
//! They run within the call's one deadline (see `deadlines`), started
//! before the `tools/call` that creates the task: its total bounds the
//! whole, and its inactivity limit restarts on a new status or an answered
//! input request, not on a status message that changes alone (which is
//! still reported as [`Progress`]). Each poll waits the server's
//! `pollInterval` (never less than [`MIN_POLL_INTERVAL`]) and is itself
//! bounded by the session's request timeout within what is left. A caller that
//! stops waiting, a timeout or an input the host cannot give leaves the
//! task running on the server, so those paths send `tasks/cancel`; a task
//! that ended on its own is not cancelled.
//!
//! At 2025-11-25 the server's requests of an `input_required` task arrive
//! as ordinary server→client requests while `tasks/result` waits, so the
//! session's [`ClientHandler`] answers them as it answers any other. From
//! 2026-07-28 they arrive inside `tasks/get` as `inputRequests`; the same
//! handler answers each key once and the answers go back in `tasks/update`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::error::{TransportError, TransportErrorKind};
use crate::message::ErrorObject;
use crate::protocol::CallToolResult;
use crate::task::{Task, TaskGeneration, TaskStatus, TaskSupport, states_tasks, task_generation};
use crate::time::later_tokio as later;

use super::deadlines::{Activity, Deadline};
use super::rounds::{MAX_INPUT_REQUESTS, too_many_inputs};
use super::{CallOptions, ClientSession, Progress, ProgressCallback, Shared};

/// Shortest wait between two polls: a `pollInterval` of 0 must not turn
/// into a busy loop.
const MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// Wait between polls when the server suggests none.
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Bound on the `tasks/cancel` sent for an abandoned task.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);

impl ClientSession {
    /// Which task generation this session can use for `tools/call`: the
    /// one of the negotiated revision, when the server offers it.
    pub fn task_generation(&self) -> Option<TaskGeneration> {
        task_generation(self.protocol_version(), self.server_capabilities())
    }

    /// `tools/call` run as a task, polled until it ends. Fails with
    /// [`TransportErrorKind::TasksUnsupported`] when the server offers no
    /// tasks for `tools/call`, [`TransportErrorKind::TaskFailed`] or
    /// [`TransportErrorKind::TaskCancelled`] when the task ends that way.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Option<Value>,
        options: &CallOptions,
    ) -> Result<CallToolResult, TransportError> {
        self.call_tool_by_support(name, arguments, TaskSupport::Required, options)
            .await
    }

    /// `tools/call` as the tool's listing says (`execution.taskSupport`):
    /// a `required` tool runs as a task, any other is called plainly (and a
    /// task the server starts on its own is followed all the same).
    pub async fn call_tool_by_support(
        &self,
        name: &str,
        arguments: Option<Value>,
        support: TaskSupport,
        options: &CallOptions,
    ) -> Result<CallToolResult, TransportError> {
        let result = self
            .call_tool_value(name, arguments, support, options)
            .await?;
        self.parse("tools/call", result)
    }

    /// [`ClientSession::call_tool_by_support`], answering with the final
    /// result as the server sent it.
    pub async fn call_tool_value(
        &self,
        name: &str,
        arguments: Option<Value>,
        support: TaskSupport,
        options: &CallOptions,
    ) -> Result<Value, TransportError> {
        let mut params = json!({ "name": name });
        if let Some(arguments) = arguments {
            params["arguments"] = arguments;
        }
        // One deadline from the first request to the task's end.
        let mut deadline = self.shared.deadline("tools/call", options);
        if support != TaskSupport::Required {
            let result = self
                .shared
                .request_within("tools/call", Some(params), options, &mut deadline)
                .await?;
            return self
                .settle_tool_result(name, result, options, deadline)
                .await;
        }
        match self.task_generation() {
            None => Err(TransportError::new(
                &*self.shared.server,
                TransportErrorKind::TasksUnsupported {
                    tool: name.to_owned(),
                    protocol_version: self.protocol_version().to_owned(),
                },
            )),
            Some(TaskGeneration::Experimental) => {
                // The request's own opt-in; the server picks the TTL.
                params["task"] = json!({});
                let created = self
                    .shared
                    .request_within("tools/call", Some(params), options, &mut deadline)
                    .await?;
                self.shared
                    .task_step(name)
                    .run(self.run_experimental(name, created, options, deadline))
                    .await
            }
            // The server alone decides to start a task; the extension in
            // the request's capabilities is all the client says.
            Some(TaskGeneration::Extension) => {
                let result = self
                    .shared
                    .request_within("tools/call", Some(params), options, &mut deadline)
                    .await?;
                self.settle_tool_result(name, result, options, deadline)
                    .await
            }
        }
    }

    /// `tools/call` with `params` as a host relaying its own client's call
    /// gives them (see [`states_tasks`]): the server's answer as it came,
    /// save a task handle for a request that does not state it takes
    /// tasks, which the session follows to its end within the call's one
    /// deadline (the server started it on the session's own
    /// announcement, which the relaying host's client never made).
    pub async fn call_tool_relayed(
        &self,
        params: Value,
        options: &CallOptions,
    ) -> Result<Value, TransportError> {
        let takes_tasks = states_tasks(&params);
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut deadline = self.shared.deadline("tools/call", options);
        let result = self
            .shared
            .request_within("tools/call", Some(params), options, &mut deadline)
            .await?;
        match takes_tasks {
            true => Ok(result),
            false => {
                self.settle_tool_result(&name, result, options, deadline)
                    .await
            }
        }
    }

    /// A `tools/call` answer with a task handle in it (`resultType:
    /// "task"`, which only the extension sends) is followed to its end
    /// within the call's `deadline`; any other answer is the result.
    pub(super) async fn settle_tool_result(
        &self,
        name: &str,
        result: Value,
        options: &CallOptions,
        deadline: Deadline,
    ) -> Result<Value, TransportError> {
        if result.get("resultType").and_then(Value::as_str) != Some("task") {
            return Ok(result);
        }
        if self.protocol_version() < crate::task::FIRST_EXTENSION_REVISION {
            return Err(TransportError::protocol(
                &*self.shared.server,
                format!(
                    "tools/call of {name:?}: a task handle (resultType \"task\") at {}, where the tasks extension is not defined",
                    self.protocol_version()
                ),
            ));
        }
        self.shared
            .task_step(name)
            .run(self.run_extension(name, result, options, deadline))
            .await
    }

    /// `tasks/get` of a task this session's server holds, read in the
    /// negotiated revision's shape.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, TransportError> {
        let value = self
            .request("tasks/get", Some(json!({ "taskId": task_id })))
            .await?;
        self.read_task("tasks/get", &value)
    }

    /// `tasks/cancel`: asks the server to stop a task (it may finish anyway).
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), TransportError> {
        self.request("tasks/cancel", Some(json!({ "taskId": task_id })))
            .await
            .map(|_| ())
    }

    fn read_task(&self, method: &str, value: &Value) -> Result<Task, TransportError> {
        let task = if self.protocol_version() >= crate::task::FIRST_EXTENSION_REVISION {
            Task::from_extension(value)
        } else {
            Task::from_experimental(value)
        };
        task.ok_or_else(|| {
            TransportError::protocol(
                &*self.shared.server,
                format!("{method}: the result is not a task (no taskId or status)"),
            )
        })
    }

    /// The 2025-11-25 loop: `tasks/get` until the task ends or waits for
    /// input, then `tasks/result`, which waits for the end while the
    /// server's requests reach the handler.
    async fn run_experimental(
        &self,
        tool: &str,
        created: Value,
        options: &CallOptions,
        deadline: Deadline,
    ) -> Result<Value, TransportError> {
        let Some(seed) = created.get("task") else {
            // A server that does not run this call as a task answers it
            // normally, ignoring the opt-in (2025-11-25).
            return Ok(created);
        };
        let mut task = Task::from_experimental(seed).ok_or_else(|| {
            TransportError::protocol(
                &*self.shared.server,
                format!("tools/call of {tool:?}: the task in the answer has no taskId or status"),
            )
        })?;
        let cancellable = self
            .server_capabilities()
            .pointer("/tasks/cancel")
            .is_some_and(|cancel| !cancel.is_null());
        let mut guard = CancelOnDrop::new(&self.shared, &task.task_id, cancellable);
        let mut poll = Poll::new(self, options, deadline);
        poll.observe(&task);
        loop {
            match task.status {
                TaskStatus::Completed | TaskStatus::InputRequired => {
                    let payload = self.task_payload(&task, &poll).await?;
                    guard.disarm();
                    return Ok(payload);
                }
                TaskStatus::Failed => {
                    guard.disarm();
                    return Err(self.experimental_failure(tool, &task, &poll).await);
                }
                TaskStatus::Cancelled => {
                    guard.disarm();
                    return Err(self.cancelled(tool, &task));
                }
                TaskStatus::Working | TaskStatus::Other(_) => {}
            }
            task = self
                .poll_once(tool, &task, &mut poll, Task::from_experimental)
                .await?;
        }
    }

    /// `tasks/result`: the payload of a task that ended, or, for one that
    /// waits for input, the wait for its end (the server sends its requests
    /// meanwhile). Bounded by what is left of the call's deadline.
    async fn task_payload(&self, task: &Task, poll: &Poll<'_>) -> Result<Value, TransportError> {
        let mut deadline = poll.deadline.within(Instant::now(), Duration::MAX);
        self.shared
            .request_within(
                "tasks/result",
                Some(json!({ "taskId": task.task_id })),
                &CallOptions::default(),
                &mut deadline,
            )
            .await
            .map_err(|error| poll.call_error(error))
    }

    /// A failed 2025-11-25 task: `tasks/result` holds the JSON-RPC error it
    /// failed with; without it the status message says what went wrong.
    async fn experimental_failure(
        &self,
        tool: &str,
        task: &Task,
        poll: &Poll<'_>,
    ) -> TransportError {
        let answer = poll
            .request("tasks/result", json!({ "taskId": task.task_id }))
            .await;
        let (code, message) = match answer {
            Err(error) => match error.into_kind() {
                TransportErrorKind::Rpc { code, message, .. } => (Some(code), Some(message)),
                _ => (None, None),
            },
            Ok(_) => (None, None),
        };
        self.failed(tool, task, code, message)
    }

    /// The 2026-07-28 loop: `tasks/get` until the task ends, answering its
    /// `inputRequests` through `tasks/update` on the way.
    async fn run_extension(
        &self,
        tool: &str,
        created: Value,
        options: &CallOptions,
        deadline: Deadline,
    ) -> Result<Value, TransportError> {
        let mut task = Task::from_extension(&created).ok_or_else(|| {
            TransportError::protocol(
                &*self.shared.server,
                format!("tools/call of {tool:?}: the task handle has no taskId or status"),
            )
        })?;
        let mut guard = CancelOnDrop::new(&self.shared, &task.task_id, true);
        let mut poll = Poll::new(self, options, deadline);
        let mut answered: HashSet<String> = HashSet::new();
        poll.observe(&task);
        loop {
            match task.status {
                TaskStatus::Completed => {
                    guard.disarm();
                    return task.result.take().ok_or_else(|| {
                        TransportError::protocol(
                            &*self.shared.server,
                            format!(
                                "tasks/get: task {:?} of {tool:?} completed without a result",
                                task.task_id
                            ),
                        )
                    });
                }
                TaskStatus::Failed => {
                    guard.disarm();
                    let (code, message) = task.error_parts();
                    return Err(self.failed(tool, &task, code, message));
                }
                TaskStatus::Cancelled => {
                    guard.disarm();
                    return Err(self.cancelled(tool, &task));
                }
                TaskStatus::InputRequired => {
                    let asked = task
                        .input_requests
                        .keys()
                        .filter(|key| !answered.contains(*key))
                        .count();
                    let responses = self
                        .shared
                        .input_round_step("tasks/update", asked)
                        .run(self.answer_inputs(tool, &task, &mut answered))
                        .await?;
                    if !responses.is_empty() {
                        poll.request(
                            "tasks/update",
                            json!({
                                "taskId": task.task_id,
                                "inputResponses": responses,
                            }),
                        )
                        .await?;
                        // The host's answer is the task moving on; the
                        // time the user took to give it is not idleness.
                        poll.answered();
                    }
                }
                TaskStatus::Working | TaskStatus::Other(_) => {}
            }
            task = self
                .poll_once(tool, &task, &mut poll, Task::from_extension)
                .await?;
        }
    }

    /// Answers the input requests not answered yet, each through the
    /// session's handler, keyed as the server keyed them. A request the
    /// host cannot answer ends the call (and so cancels the task): the task
    /// could only wait for it until its timeout.
    async fn answer_inputs(
        &self,
        tool: &str,
        task: &Task,
        answered: &mut HashSet<String>,
    ) -> Result<Map<String, Value>, TransportError> {
        let mut responses = Map::new();
        for (key, request) in &task.input_requests {
            if answered.contains(key) {
                continue;
            }
            if answered.len() >= MAX_INPUT_REQUESTS {
                return Err(too_many_inputs(
                    &self.shared.server,
                    &format!("task {:?} of {tool:?}", task.task_id),
                ));
            }
            let method = request
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let params = request.get("params").cloned();
            let answer = match &self.shared.options.handler {
                Some(handler) => handler.handle_request(method, params).await,
                None => Err(ErrorObject::method_not_found(method)),
            };
            match answer {
                Ok(result) => {
                    responses.insert(key.clone(), result);
                    answered.insert(key.clone());
                }
                Err(error) => {
                    return Err(self.failed(
                        tool,
                        task,
                        Some(error.code),
                        Some(format!(
                            "the host could not answer the task's {method} request: {}",
                            error.message
                        )),
                    ));
                }
            }
        }
        Ok(responses)
    }

    /// Waits the task's poll interval, asks `tasks/get` and reads the
    /// answer with `read` (the generation's shape).
    async fn poll_once(
        &self,
        tool: &str,
        task: &Task,
        poll: &mut Poll<'_>,
        read: fn(&Value) -> Option<Task>,
    ) -> Result<Task, TransportError> {
        poll.wait(task.poll_interval).await?;
        let value = poll
            .request("tasks/get", json!({ "taskId": task.task_id }))
            .await?;
        let next = self.next_task(tool, task, read(&value))?;
        poll.observe(&next);
        Ok(next)
    }

    fn next_task(
        &self,
        tool: &str,
        previous: &Task,
        next: Option<Task>,
    ) -> Result<Task, TransportError> {
        match next {
            Some(next) if next.task_id == previous.task_id => Ok(next),
            Some(next) => Err(TransportError::protocol(
                &*self.shared.server,
                format!(
                    "tasks/get for task {:?} of {tool:?} answered for task {:?}",
                    previous.task_id, next.task_id
                ),
            )),
            None => Err(TransportError::protocol(
                &*self.shared.server,
                format!(
                    "tasks/get for task {:?} of {tool:?}: the result is not a task",
                    previous.task_id
                ),
            )),
        }
    }

    fn failed(
        &self,
        tool: &str,
        task: &Task,
        code: Option<i64>,
        message: Option<String>,
    ) -> TransportError {
        TransportError::new(
            &*self.shared.server,
            TransportErrorKind::TaskFailed {
                tool: tool.to_owned(),
                task_id: task.task_id.as_str().into(),
                code,
                message: message
                    .or_else(|| task.status_message.clone())
                    .unwrap_or_else(|| "the task failed".to_owned())
                    .into(),
            },
        )
    }

    fn cancelled(&self, tool: &str, task: &Task) -> TransportError {
        TransportError::new(
            &*self.shared.server,
            TransportErrorKind::TaskCancelled {
                tool: tool.to_owned(),
                task_id: task.task_id.clone(),
                message: task.status_message.clone(),
            },
        )
    }
}

/// The clock of one task's poll loop: the call's deadline, and what was
/// last reported as progress.
struct Poll<'a> {
    session: &'a ClientSession,
    progress: Option<ProgressCallback>,
    deadline: Deadline,
    last: Option<(TaskStatus, Option<String>)>,
    steps: u32,
}

impl<'a> Poll<'a> {
    fn new(session: &'a ClientSession, options: &CallOptions, deadline: Deadline) -> Self {
        Poll {
            session,
            progress: options.progress.clone(),
            deadline,
            last: None,
            steps: 0,
        }
    }

    /// A task read by a poll: the deadline decides whether it is real
    /// progress (a new status is, a new status message alone is not); a
    /// new status or status message is reported as progress either way.
    fn observe(&mut self, task: &Task) {
        self.deadline
            .observe(Instant::now(), Activity::Status(&task.status));
        let now = (task.status.clone(), task.status_message.clone());
        if self.last.as_ref() == Some(&now) {
            return;
        }
        self.steps += 1;
        if let Some(progress) = &self.progress {
            progress(Progress {
                progress: f64::from(self.steps),
                total: None,
                message: Some(
                    task.status_message
                        .clone()
                        .unwrap_or_else(|| task.status.as_str().to_owned()),
                ),
            });
        }
        self.last = Some(now);
    }

    /// The host answered the task's input requests.
    fn answered(&mut self) {
        self.deadline
            .observe(Instant::now(), Activity::InputAnswered);
    }

    /// Waits the server's interval before the next poll, or fails with a
    /// timeout when the call's time runs out first.
    async fn wait(&self, interval: Option<Duration>) -> Result<(), TransportError> {
        let interval = interval
            .unwrap_or(DEFAULT_POLL_INTERVAL)
            .max(MIN_POLL_INTERVAL);
        let next = later(Instant::now(), interval);
        let wake = self.deadline.at();
        if next >= wake {
            tokio::time::sleep_until(wake).await;
            return Err(self.timed_out());
        }
        tokio::time::sleep_until(next).await;
        Ok(())
    }

    /// One request on the way (`tasks/get`, `tasks/update`): the session's
    /// request timeout, within what is left of the call's deadline.
    async fn request(&self, method: &str, params: Value) -> Result<Value, TransportError> {
        let shared = &self.session.shared;
        let mut deadline = self
            .deadline
            .within(Instant::now(), shared.options.request_timeout);
        shared
            .request_within(method, Some(params), &CallOptions::default(), &mut deadline)
            .await
            .map_err(|error| self.call_error(error))
    }

    /// A request on the way that timed out because the call's time ran
    /// out is the call's timeout; any other error is its own.
    fn call_error(&self, error: TransportError) -> TransportError {
        match error.kind() {
            TransportErrorKind::Timeout { .. }
                if self.deadline.expired(Instant::now()).is_some() =>
            {
                self.timed_out()
            }
            _ => error,
        }
    }

    fn timed_out(&self) -> TransportError {
        let now = Instant::now();
        let limit = self
            .deadline
            .expired(now)
            .unwrap_or_else(|| self.deadline.next_limit());
        self.deadline
            .error(&self.session.shared.server, "tools/call", now, limit)
    }
}

/// Sends `tasks/cancel` for a task its caller gave up on (dropped, timed
/// out, or failed before the task ended), unless disarmed.
struct CancelOnDrop {
    shared: Arc<Shared>,
    task_id: Option<String>,
}

impl CancelOnDrop {
    /// `cancellable` is false when the server did not offer `tasks/cancel`.
    fn new(shared: &Arc<Shared>, task_id: &str, cancellable: bool) -> Self {
        CancelOnDrop {
            shared: Arc::clone(shared),
            task_id: cancellable.then(|| task_id.to_owned()),
        }
    }

    /// The task ended on its own: nothing to cancel.
    fn disarm(&mut self) {
        self.task_id = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else {
            return;
        };
        // A drop outside a runtime (the runtime itself shutting down) has
        // no way to send; the task then runs out its TTL on the server.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let shared = Arc::clone(&self.shared);
        runtime.spawn(async move {
            let options = CallOptions::default().with_timeout(CANCEL_TIMEOUT);
            if let Err(error) = shared
                .request(
                    "tasks/cancel",
                    Some(json!({ "taskId": task_id })),
                    &options,
                )
                .await
            {
                tracing::debug!(server = %shared.server, task = %task_id, %error, "tasks/cancel of an abandoned task");
            }
        });
    }
}

// The scripted server is an in-process (`sdk`) one.
#[cfg(test)]
#[cfg(feature = "sdk")]
mod tests {
    //! The 2026-07-28 loop against an in-process server that answers as
    //! the extension text (SEP-2663) says, one scripted `tasks/get` answer
    //! after another; and the named errors of both generations.

    use std::collections::VecDeque;
    use std::sync::atomic::AtomicUsize;

    use std::sync::Mutex;
    use std::sync::atomic::Ordering;

    use async_trait::async_trait;

    use super::super::{ClientHandler, SessionOptions};
    use crate::lock;
    use crate::message::JsonRpcMessage;
    use crate::sdk::{SdkOptions, SdkServer, SdkServerConnection, SdkTransport};
    use crate::task::TASKS_EXTENSION;

    use super::*;

    /// Answers `initialize` with `capabilities`, `tools/call` with
    /// `created`, each `tasks/get` with the next scripted task (the last
    /// one again once the script runs out), and acknowledges `tasks/update`
    /// and `tasks/cancel`; records every request.
    struct TaskServer {
        capabilities: Value,
        created: Value,
        script: Mutex<VecDeque<Value>>,
        log: Mutex<Vec<(String, Value)>>,
    }

    impl TaskServer {
        fn new(capabilities: Value, created: Value, script: Vec<Value>) -> Arc<TaskServer> {
            Arc::new(TaskServer {
                capabilities,
                created,
                script: Mutex::new(script.into()),
                log: Mutex::new(Vec::new()),
            })
        }

        fn requests(&self, method: &str) -> Vec<Value> {
            lock(&self.log)
                .iter()
                .filter(|(m, _)| m == method)
                .map(|(_, params)| params.clone())
                .collect()
        }

        fn answer(&self, method: &str) -> Value {
            match method {
                "initialize" => json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": self.capabilities,
                    "serverInfo": {"name": "task-server", "version": "1"}
                }),
                "tools/call" => self.created.clone(),
                "tasks/get" => {
                    let mut script = lock(&self.script);
                    if script.len() > 1 {
                        script.pop_front().unwrap_or_default()
                    } else {
                        script.front().cloned().unwrap_or_default()
                    }
                }
                _ => json!({"resultType": "complete"}),
            }
        }
    }

    #[async_trait]
    impl SdkServer for TaskServer {
        async fn serve(self: Arc<Self>, mut connection: SdkServerConnection) {
            while let Some(message) = connection.incoming.recv().await {
                let JsonRpcMessage::Request(request) = message else {
                    continue;
                };
                let params = request.params.clone().unwrap_or_default();
                lock(&self.log).push((request.method.clone(), params));
                let result = self.answer(&request.method);
                let reply = JsonRpcMessage::result(request.id, result);
                if connection.outgoing.send(reply).await.is_err() {
                    return;
                }
            }
        }
    }

    /// Answers elicitation with a name, counting the calls.
    #[derive(Default)]
    struct Names(AtomicUsize);

    #[async_trait]
    impl ClientHandler for Names {
        async fn elicit(&self, _params: Option<Value>) -> Result<Value, ErrorObject> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"action": "accept", "content": {"name": "Luca"}}))
        }
    }

    fn extension_caps() -> Value {
        json!({"tools": {}, "extensions": {TASKS_EXTENSION: {}}})
    }

    fn task(status: &str, extra: Value) -> Value {
        let mut task = json!({
            "resultType": "complete",
            "taskId": "786512e2",
            "status": status,
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:50:00Z",
            "ttlMs": 3_600_000,
            "pollIntervalMs": 10
        });
        if let (Value::Object(task), Value::Object(extra)) = (&mut task, extra) {
            task.extend(extra);
        }
        task
    }

    fn created() -> Value {
        let mut created = task("working", json!({}));
        created["resultType"] = json!("task");
        created
    }

    fn elicitation() -> Value {
        json!({"name": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Please enter your name.",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }
        }})
    }

    fn hello() -> Value {
        json!({"content": [{"type": "text", "text": "Hello, Luca!"}], "isError": false})
    }

    async fn connect(
        server: &Arc<TaskServer>,
        handler: Option<Arc<dyn ClientHandler>>,
    ) -> ClientSession {
        let transport = SdkTransport::connect(
            "tasks",
            Arc::clone(server) as Arc<dyn SdkServer>,
            SdkOptions::default(),
        );
        let options = SessionOptions {
            handler,
            ..SessionOptions::default()
        };
        ClientSession::initialize(Box::new(transport), "tasks", options)
            .await
            .unwrap()
    }

    /// Runs the extension loop on what the server's `tools/call` answers.
    async fn run(session: &ClientSession, options: &CallOptions) -> Result<Value, TransportError> {
        let mut deadline = session.shared.deadline("tools/call", options);
        let created = session
            .shared
            .request_within(
                "tools/call",
                Some(json!({"name": "hello_world"})),
                options,
                &mut deadline,
            )
            .await?;
        session
            .run_extension("hello_world", created, options, deadline)
            .await
    }

    #[tokio::test]
    async fn the_extension_flow_answers_input_once_and_returns_the_result() {
        let server = TaskServer::new(
            extension_caps(),
            created(),
            vec![
                task("working", json!({"statusMessage": "Working on it"})),
                task("input_required", json!({"inputRequests": elicitation()})),
                // Polled again before the update took effect: the same key.
                task("input_required", json!({"inputRequests": elicitation()})),
                task("working", json!({})),
                task("completed", json!({"result": hello()})),
            ],
        );
        let names = Arc::new(Names::default());
        let session = connect(&server, Some(names.clone())).await;
        let messages = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&messages);
        let options = CallOptions::default().with_progress(move |progress| {
            lock(&seen).push(progress.message.unwrap_or_default());
        });
        let result = run(&session, &options).await.unwrap();
        assert_eq!(result, hello());
        assert_eq!(names.0.load(Ordering::SeqCst), 1);
        let updates = server.requests("tasks/update");
        assert_eq!(
            updates,
            vec![json!({
                "taskId": "786512e2",
                "inputResponses": {"name": {"action": "accept", "content": {"name": "Luca"}}}
            })]
        );
        assert_eq!(server.requests("tasks/get").len(), 5);
        assert!(
            server
                .requests("tasks/get")
                .iter()
                .all(|p| p == &json!({"taskId": "786512e2"}))
        );
        // A task that ended on its own is not cancelled.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(server.requests("tasks/cancel").is_empty());
        assert_eq!(
            lock(&messages).clone(),
            [
                "working",
                "Working on it",
                "input_required",
                "working",
                "completed"
            ]
        );
    }

    #[tokio::test]
    async fn a_task_created_complete_needs_no_poll() {
        let mut done = task("completed", json!({"result": hello()}));
        done["resultType"] = json!("task");
        let server = TaskServer::new(extension_caps(), done, vec![]);
        let session = connect(&server, None).await;
        assert_eq!(
            run(&session, &CallOptions::default()).await.unwrap(),
            hello()
        );
        assert!(server.requests("tasks/get").is_empty());
    }

    #[tokio::test]
    async fn timeouts_and_intervals_of_any_size_are_waited_not_added_up() {
        // A host's "never time out" and a server's absurd interval used to
        // overflow `Instant + Duration` and panic.
        let server = TaskServer::new(
            extension_caps(),
            created(),
            vec![
                task("working", json!({})),
                task("completed", json!({"result": hello()})),
            ],
        );
        let session = connect(&server, None).await;
        let endless = CallOptions::default()
            .with_timeout(Duration::MAX)
            .with_idle_timeout(Duration::MAX);
        assert_eq!(run(&session, &endless).await.unwrap(), hello());

        let mut created = created();
        created["pollIntervalMs"] = json!(1.0e300);
        let server = TaskServer::new(extension_caps(), created, vec![task("working", json!({}))]);
        let session = connect(&server, None).await;
        let options = CallOptions::default().with_timeout(Duration::from_millis(100));
        let error = run(&session, &options).await.unwrap_err();
        assert!(
            matches!(error.kind(), TransportErrorKind::Timeout { .. }),
            "{error}"
        );
    }

    #[tokio::test]
    async fn failed_and_cancelled_tasks_are_named_errors() {
        let failed = task(
            "failed",
            json!({
                "statusMessage": "Tool execution failed: API rate limit exceeded",
                "error": {"code": -32603, "message": "API rate limit exceeded"}
            }),
        );
        let server = TaskServer::new(extension_caps(), created(), vec![failed]);
        let session = connect(&server, None).await;
        let error = run(&session, &CallOptions::default()).await.unwrap_err();
        let TransportErrorKind::TaskFailed {
            tool,
            task_id,
            code,
            message,
        } = error.kind()
        else {
            panic!("{error}");
        };
        assert_eq!(
            (tool.as_str(), &**task_id, *code, &**message),
            (
                "hello_world",
                "786512e2",
                Some(-32603),
                "API rate limit exceeded"
            )
        );
        assert_eq!(
            error.to_string(),
            "tasks: tool \"hello_world\" failed as task \"786512e2\": API rate limit exceeded (code -32603)"
        );
        assert!(!error.is_fatal());

        let cancelled = task(
            "cancelled",
            json!({"statusMessage": "Stopped by an operator"}),
        );
        let server = TaskServer::new(extension_caps(), created(), vec![cancelled]);
        let session = connect(&server, None).await;
        let error = run(&session, &CallOptions::default()).await.unwrap_err();
        assert!(
            matches!(error.kind(), TransportErrorKind::TaskCancelled { message: Some(m), .. } if m == "Stopped by an operator"),
            "{error}"
        );
        let missing = task("completed", json!({}));
        let server = TaskServer::new(extension_caps(), created(), vec![missing]);
        let session = connect(&server, None).await;
        let error = run(&session, &CallOptions::default()).await.unwrap_err();
        assert!(
            error.to_string().contains("completed without a result"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn an_input_the_host_cannot_give_cancels_the_task() {
        let server = TaskServer::new(
            extension_caps(),
            created(),
            vec![task(
                "input_required",
                json!({"inputRequests": elicitation()}),
            )],
        );
        let session = connect(&server, None).await;
        let error = run(&session, &CallOptions::default()).await.unwrap_err();
        let TransportErrorKind::TaskFailed { code, message, .. } = error.kind() else {
            panic!("{error}");
        };
        assert_eq!(*code, Some(-32601));
        assert!(message.contains("elicitation/create"), "{message}");
        wait_for_cancel(&server).await;
        assert!(server.requests("tasks/update").is_empty());
    }

    #[tokio::test]
    async fn a_caller_that_stops_waiting_or_times_out_cancels_the_task() {
        let server = TaskServer::new(
            extension_caps(),
            created(),
            vec![task("working", json!({}))],
        );
        let session = connect(&server, None).await;
        let gave_up = tokio::time::timeout(
            Duration::from_millis(200),
            run(&session, &CallOptions::default()),
        )
        .await;
        assert!(gave_up.is_err());
        wait_for_cancel(&server).await;

        let server = TaskServer::new(
            extension_caps(),
            created(),
            vec![task("working", json!({}))],
        );
        let session = connect(&server, None).await;
        let options = CallOptions::default().with_timeout(Duration::from_millis(300));
        let error = run(&session, &options).await.unwrap_err();
        assert!(
            matches!(error.kind(), TransportErrorKind::Timeout { method, .. } if method == "tools/call"),
            "{error}"
        );
        wait_for_cancel(&server).await;
        // Polled at the server's interval (10 ms, raised to the floor),
        // not in a busy loop.
        let polls = server.requests("tasks/get").len();
        assert!((2..=8).contains(&polls), "{polls} polls in 300 ms");
    }

    async fn wait_for_cancel(server: &TaskServer) {
        for _ in 0..100 {
            if !server.requests("tasks/cancel").is_empty() {
                assert_eq!(
                    server.requests("tasks/cancel"),
                    vec![json!({"taskId": "786512e2"})]
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no tasks/cancel");
    }

    #[tokio::test]
    async fn too_many_inputs_end_the_call() {
        let requests: Map<String, Value> = (0..=MAX_INPUT_REQUESTS)
            .map(|i| (format!("k{i}"), elicitation()["name"].clone()))
            .collect();
        let server = TaskServer::new(
            extension_caps(),
            created(),
            vec![task("input_required", json!({"inputRequests": requests}))],
        );
        let session = connect(&server, Some(Arc::new(Names::default()))).await;
        let error = run(&session, &CallOptions::default()).await.unwrap_err();
        assert!(error.to_string().contains("more than 64 inputs"), "{error}");
    }

    #[tokio::test]
    async fn the_revision_decides_what_a_task_call_may_do() {
        // At 2025-11-25 without the tasks capability a required tool
        // cannot run, and a task handle is not an answer.
        let server = TaskServer::new(extension_caps(), created(), vec![]);
        let session = connect(&server, None).await;
        assert_eq!(session.task_generation(), None);
        let error = session
            .call_tool_as_task("hello_world", None, &CallOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), TransportErrorKind::TasksUnsupported { tool, .. } if tool == "hello_world"),
            "{error}"
        );
        assert!(server.requests("tools/call").is_empty());
        let error = session.call_tool("hello_world", None).await.unwrap_err();
        assert!(
            error.to_string().contains("tasks extension is not defined"),
            "{error}"
        );

        // An experimental server that answers an opted-in call plainly.
        let legacy = json!({"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}});
        let server = TaskServer::new(legacy, hello(), vec![]);
        let session = connect(&server, None).await;
        assert_eq!(
            session.task_generation(),
            Some(TaskGeneration::Experimental)
        );
        let result = session
            .call_tool_as_task("hello_world", None, &CallOptions::default())
            .await
            .unwrap();
        assert_eq!(result.content[0].as_text(), Some("Hello, Luca!"));
        assert_eq!(
            server.requests("tools/call"),
            vec![json!({"name": "hello_world", "task": {}})]
        );
        // Optional and forbidden tools are called plainly.
        session
            .call_tool_by_support(
                "hello_world",
                None,
                TaskSupport::Optional,
                &CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(
            server.requests("tools/call")[1],
            json!({"name": "hello_world"})
        );
    }
}
