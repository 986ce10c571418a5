//! The input-round table: a server that answers one method with
//! `input_required` every time, at each revision, counted by how many
//! times it received that method. The rounds are followed only for
//! `tools/call`, `prompts/get` and `resources/read` at 2026-07-28 (up to
//! the session's bound); any other method, and any revision before, is an
//! error naming the method after one request. One round's inputs are
//! capped as a task's are: past the cap nothing is answered or re-sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use mcp_transport::types::is_modern;
use mcp_transport::{
    ClientHandler, ClientSession, ErrorObject, SessionOptions, TransportError, TransportErrorKind,
};
use serde_json::{Value, json};
use support::relentless::{Relentless, Script, connect};

/// The rounds a session follows before it gives up.
const ROUNDS: usize = 3;
/// The most inputs one round may ask for (the tasks path's cap).
const CAP: usize = 64;

const REVISIONS: [&str; 4] = ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"];

/// Every request a host can send that a server might answer so.
const METHODS: [&str; 8] = [
    "tools/call",
    "prompts/get",
    "resources/read",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "completion/complete",
];

/// Answers `roots/list`, counting the calls.
#[derive(Default)]
struct Roots(AtomicUsize);

#[async_trait]
impl ClientHandler for Roots {
    fn capabilities(&self) -> Value {
        json!({"roots": {}})
    }

    async fn list_roots(&self, _params: Option<Value>) -> Result<Value, ErrorObject> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"roots": []}))
    }
}

/// Sends `method` the way a host does.
async fn send(session: &ClientSession, method: &str) -> Result<(), TransportError> {
    match method {
        "tools/call" => session.call_tool("t", None).await.map(drop),
        "prompts/get" => session.get_prompt("p", None).await.map(drop),
        "resources/read" => session.read_resource("r://x").await.map(drop),
        "tools/list" => session.list_tools().await.map(drop),
        "prompts/list" => session.list_prompts().await.map(drop),
        "resources/list" => session.list_resources().await.map(drop),
        "resources/templates/list" => session.list_resource_templates().await.map(drop),
        other => session.request(other, Some(json!({}))).await.map(drop),
    }
}

/// What a row expects.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// Followed for every round the session allows.
    Followed,
    /// Refused at once, the error saying this.
    Refused(&'static str),
}

/// One row: `method` answered with `input_required` asking `inputs`
/// `roots/list` each time, at `revision`.
async fn check(method: &'static str, revision: &'static str, inputs: usize, expect: Expect) {
    let row = format!("{method} at {revision}, {inputs} inputs");
    let server = Relentless::new(Script {
        revision,
        input_on: Some(method),
        inputs,
        ..Script::default()
    });
    let roots = Arc::new(Roots::default());
    let options = SessionOptions::default()
        .with_max_input_rounds(ROUNDS)
        .with_handler(roots.clone());
    let session = connect(&server, options).await;
    let error = send(&session, method).await.expect_err(&row);
    let sent = server.count(method);
    let answered = roots.0.load(Ordering::SeqCst);
    match expect {
        Expect::Followed => {
            assert!(
                matches!(error.kind(), TransportErrorKind::InputRoundsExceeded { method: m, rounds } if m == method && *rounds == ROUNDS),
                "{row}: {error}"
            );
            assert_eq!(
                sent,
                ROUNDS + 1,
                "{row}: the first request and one per round"
            );
            assert_eq!(answered, ROUNDS * inputs, "{row}: inputs answered");
        }
        Expect::Refused(why) => {
            let text = error.to_string();
            assert!(
                text.starts_with("relentless: ") && text.contains(method) && text.contains(why),
                "{row}: {text}"
            );
            if !is_modern(revision) {
                assert!(text.contains(revision), "{row}: names the revision: {text}");
            }
            assert_eq!(sent, 1, "{row}: sent again");
            assert_eq!(answered, 0, "{row}: inputs answered");
        }
    }
}

#[tokio::test]
async fn input_required_is_followed_only_where_the_revision_and_method_allow() {
    let mut followed = 0;
    for revision in REVISIONS {
        for method in METHODS {
            let allowed = revision == "2026-07-28"
                && ["tools/call", "prompts/get", "resources/read"].contains(&method);
            let expect = match (allowed, revision) {
                (true, _) => Expect::Followed,
                (false, "2026-07-28") => Expect::Refused("allows only on tools/call"),
                (false, _) => Expect::Refused("does not exist at"),
            };
            followed += usize::from(allowed);
            check(method, revision, 0, expect).await;
        }
    }
    assert_eq!(followed, 3);
}

#[tokio::test]
async fn one_round_asks_for_no_more_inputs_than_the_cap() {
    let rows = [
        ("tools/call", 1, Expect::Followed),
        ("tools/call", CAP, Expect::Followed),
        (
            "tools/call",
            CAP + 1,
            Expect::Refused("more than 64 inputs"),
        ),
        ("tools/call", 2_000, Expect::Refused("more than 64 inputs")),
        ("prompts/get", CAP, Expect::Followed),
        (
            "resources/read",
            CAP + 1,
            Expect::Refused("more than 64 inputs"),
        ),
    ];
    for (method, inputs, expect) in rows {
        check(method, "2026-07-28", inputs, expect).await;
    }
}
