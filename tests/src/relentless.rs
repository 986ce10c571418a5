//! The script of `mcp-relentless-server`: a stdio MCP server that never
//! lets a request end on its own, for the deadline and input-round tests.
//!
//! Each [`Pattern`] is one way to keep a client waiting or asking:
//!
//! - `stalled-progress`: a `tools/call` is never answered; a progress
//!   notification whose value never advances arrives every interval;
//! - `advancing-progress`: the same, with a value that goes up each time;
//! - `chatty-task`: a `tools/call` starts a task that stays `working` and
//!   whose `statusMessage` changes on every `tasks/get`;
//! - `input-loop`: the method named by `--at` is answered with an
//!   `input_required` result (state only, nothing to ask) every time;
//! - `input-flood=N`: the same, asking `N` `roots/list` inputs each round.
//!
//! The revision is the one given (`--revision`): a modern one (2026-07-28) answers
//! `server/discover`, an older one answers `initialize` and refuses
//! `server/discover`. Every request's method is appended to the `--log`
//! file as it arrives, so a test counts what the server saw.

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value, json};

/// The tasks extension's key (2026-07-28).
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// How the server keeps a request from ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Progress with the same value every interval, no answer.
    StalledProgress,
    /// Progress with a value that goes up every interval, no answer.
    AdvancingProgress,
    /// A task that stays `working`, its status message new on every poll.
    ChattyTask,
    /// `input_required` with a state to echo, every time.
    InputLoop,
    /// `input_required` asking this many `roots/list` inputs, every time.
    InputFlood(usize),
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::StalledProgress => f.write_str("stalled-progress"),
            Pattern::AdvancingProgress => f.write_str("advancing-progress"),
            Pattern::ChattyTask => f.write_str("chatty-task"),
            Pattern::InputLoop => f.write_str("input-loop"),
            Pattern::InputFlood(n) => write!(f, "input-flood={n}"),
        }
    }
}

impl FromStr for Pattern {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "stalled-progress" => Ok(Pattern::StalledProgress),
            "advancing-progress" => Ok(Pattern::AdvancingProgress),
            "chatty-task" => Ok(Pattern::ChattyTask),
            "input-loop" => Ok(Pattern::InputLoop),
            other => other
                .strip_prefix("input-flood=")
                .and_then(|n| n.parse().ok())
                .map(Pattern::InputFlood)
                .ok_or_else(|| format!("unknown pattern {other:?}")),
        }
    }
}

/// What the server does for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Answer with this message.
    Send(Value),
    /// Never answer; send progress for this token every interval, its
    /// value the same each time or going up.
    Progress {
        /// The request's `_meta.progressToken`.
        token: Value,
        /// Whether the value goes up.
        advancing: bool,
    },
    /// A notification or an answer: nothing to do.
    Nothing,
}

/// The server's state: its pattern, revision and the polls seen so far.
#[derive(Debug)]
pub struct Relentless {
    pattern: Pattern,
    version: String,
    at: String,
    polls: u64,
}

impl Relentless {
    /// A server following `pattern` at revision `version`; the input
    /// patterns answer requests of method `at`.
    pub fn new(pattern: Pattern, version: &str, at: &str) -> Self {
        Relentless {
            pattern,
            version: version.to_owned(),
            at: at.to_owned(),
            polls: 0,
        }
    }

    fn modern(&self) -> bool {
        self.version.as_str() >= "2026-07-28"
    }

    fn capabilities(&self) -> Value {
        let mut capabilities = json!({"tools": {}, "prompts": {}, "resources": {}});
        if self.pattern == Pattern::ChattyTask {
            if self.modern() {
                capabilities["extensions"] = json!({TASKS_EXTENSION: {}});
            } else {
                capabilities["tasks"] = json!({"requests": {"tools": {"call": {}}}, "cancel": {}});
            }
        }
        capabilities
    }

    fn tools(&self) -> Value {
        let mut tool = json!({"name": "work", "inputSchema": {"type": "object"}});
        if self.pattern == Pattern::ChattyTask && !self.modern() {
            tool["execution"] = json!({"taskSupport": "required"});
        }
        json!({"tools": [tool]})
    }

    /// The task as the next `tasks/get` sees it: still working, with a
    /// status message it has not had before.
    fn task(&mut self) -> Value {
        self.polls += 1;
        let message = format!("still busy (poll {})", self.polls);
        if self.modern() {
            json!({
                "taskId": "t1", "status": "working", "statusMessage": message,
                "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
                "ttlMs": 600_000, "pollIntervalMs": 300
            })
        } else {
            json!({
                "taskId": "t1", "status": "working", "statusMessage": message,
                "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
                "ttl": 600_000, "pollInterval": 300
            })
        }
    }

    fn input_required(&self) -> Option<Value> {
        let requests = match self.pattern {
            Pattern::InputLoop => None,
            Pattern::InputFlood(n) => Some(
                (0..n)
                    .map(|i| (format!("r{i}"), json!({"method": "roots/list"})))
                    .collect::<Map<String, Value>>(),
            ),
            _ => return None,
        };
        let mut result = json!({"resultType": "input_required", "requestState": "again"});
        if let Some(requests) = requests {
            result["inputRequests"] = Value::Object(requests);
        }
        Some(result)
    }

    /// What to do for one message from the client.
    pub fn reply(&mut self, message: &Value) -> Reply {
        let (Some(id), Some(method)) = (
            message.get("id"),
            message.get("method").and_then(Value::as_str),
        ) else {
            return Reply::Nothing;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let ok = |mut result: Value, modern: bool| {
            if modern && result.get("resultType").is_none() {
                result["resultType"] = json!("complete");
            }
            Reply::Send(json!({"jsonrpc": "2.0", "id": id, "result": result}))
        };
        let refuse = |code: i64, text: String| {
            Reply::Send(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}}),
            )
        };
        let modern = self.modern();
        if method == self.at
            && let Some(result) = self.input_required()
        {
            return ok(result, modern);
        }
        let info = json!({"name": "relentless", "version": "1.0.0"});
        match method {
            "server/discover" if modern => ok(
                json!({
                    "supportedVersions": [self.version],
                    "capabilities": self.capabilities(),
                    "_meta": {"io.modelcontextprotocol/serverInfo": info},
                }),
                true,
            ),
            "initialize" if !modern => ok(
                json!({
                    "protocolVersion": self.version,
                    "capabilities": self.capabilities(),
                    "serverInfo": info,
                }),
                false,
            ),
            "ping" => ok(json!({}), modern),
            "tools/list" => ok(self.tools(), modern),
            "prompts/list" => ok(json!({"prompts": []}), modern),
            "resources/list" => ok(json!({"resources": []}), modern),
            "resources/templates/list" => ok(json!({"resourceTemplates": []}), modern),
            "prompts/get" => ok(json!({"messages": []}), modern),
            "resources/read" => ok(json!({"contents": []}), modern),
            "tools/call" => match self.pattern {
                Pattern::StalledProgress | Pattern::AdvancingProgress => Reply::Progress {
                    token: params
                        .pointer("/_meta/progressToken")
                        .cloned()
                        .unwrap_or(Value::Null),
                    advancing: self.pattern == Pattern::AdvancingProgress,
                },
                Pattern::ChattyTask if modern => {
                    let mut task = self.task();
                    task["resultType"] = json!("task");
                    ok(task, true)
                }
                Pattern::ChattyTask => ok(json!({"task": self.task()}), false),
                _ => ok(
                    json!({"content": [{"type": "text", "text": "done"}]}),
                    modern,
                ),
            },
            "tasks/get" => ok(self.task(), modern),
            "tasks/cancel" => ok(json!({}), modern),
            other => refuse(-32601, format!("method not found: {other}")),
        }
    }
}

/// The progress notification number `step` for `token`.
pub fn progress(token: &Value, step: u64, advancing: bool) -> Value {
    let value = if advancing { step } else { 1 };
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": value, "message": "still working"},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_read_back_as_written() {
        for pattern in [
            Pattern::StalledProgress,
            Pattern::AdvancingProgress,
            Pattern::ChattyTask,
            Pattern::InputLoop,
            Pattern::InputFlood(65),
        ] {
            assert_eq!(pattern.to_string().parse::<Pattern>(), Ok(pattern));
        }
        assert!("input-flood=x".parse::<Pattern>().is_err());
    }

    #[test]
    fn the_revision_decides_the_handshake_and_the_task_shape() {
        let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"});
        let call =
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "work"}});
        let mut old = Relentless::new(Pattern::ChattyTask, "2025-11-25", "");
        let Reply::Send(refused) = old.reply(&discover) else {
            panic!("no answer")
        };
        assert_eq!(refused["error"]["code"], -32601);
        let Reply::Send(created) = old.reply(&call) else {
            panic!("no answer")
        };
        assert_eq!(created["result"]["task"]["pollInterval"], 300);
        let mut new = Relentless::new(Pattern::ChattyTask, "2026-07-28", "");
        let Reply::Send(found) = new.reply(&discover) else {
            panic!("no answer")
        };
        assert_eq!(found["result"]["supportedVersions"], json!(["2026-07-28"]));
        let Reply::Send(created) = new.reply(&call) else {
            panic!("no answer")
        };
        assert_eq!(created["result"]["resultType"], "task");
        let get =
            json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "t1"}});
        let Reply::Send(first) = new.reply(&get) else {
            panic!("no answer")
        };
        let Reply::Send(second) = new.reply(&get) else {
            panic!("no answer")
        };
        assert_ne!(
            first["result"]["statusMessage"],
            second["result"]["statusMessage"]
        );
    }

    #[test]
    fn input_patterns_answer_only_the_named_method() {
        let mut server = Relentless::new(Pattern::InputFlood(3), "2026-07-28", "tools/list");
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let Reply::Send(answer) = server.reply(&list) else {
            panic!("no answer")
        };
        assert_eq!(answer["result"]["resultType"], "input_required");
        assert_eq!(
            answer["result"]["inputRequests"].as_object().map(Map::len),
            Some(3)
        );
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}});
        let Reply::Send(answer) = server.reply(&call) else {
            panic!("no answer")
        };
        assert_eq!(answer["result"]["content"][0]["text"], "done");
        let stalled = Relentless::new(Pattern::StalledProgress, "2024-11-05", "").reply(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"_meta": {"progressToken": 7}}}),
        );
        assert_eq!(
            stalled,
            Reply::Progress {
                token: json!(7),
                advancing: false
            }
        );
        assert_eq!(progress(&json!(7), 5, false)["params"]["progress"], 1);
        assert_eq!(progress(&json!(7), 5, true)["params"]["progress"], 5);
    }
}
