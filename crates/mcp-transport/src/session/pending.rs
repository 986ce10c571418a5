//! Requests in flight: the table that matches answers to callers, the
//! request path (send, wait with timeout and progress, cancel on drop) and
//! how the end of a connection fails every waiting caller.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::error::{TimeoutLimit, TransportError, TransportErrorKind};
use crate::lock;
use crate::message::{ErrorObject, JsonRpcMessage, RawJson, Request, RequestId, RequestRef};
use crate::params::Params;
use crate::request_meta::{RequestMeta, with_meta};

use super::deadlines::Deadline;
use super::{CallOptions, Command, Progress, Shared};

/// What a waiting caller is handed: by the driver, or by the deadline
/// task.
pub(super) enum Reply {
    /// The server's answer: a result, or its error.
    Answer(Result<Body, ErrorObject>),
    /// The connection ended first.
    Ended(TransportError),
    /// The request's deadline passed first, on this limit; the entry is
    /// already gone.
    TimedOut(TimeoutLimit),
}

/// A result as it reaches its caller: still raw (the common case, decoded
/// once into the type the caller asked for), or a `Value` (from a transport
/// that decodes everything, or after the session had to look inside).
#[derive(Debug)]
pub(super) enum Body {
    /// Any result, decoded.
    Value(Value),
    /// The result's bytes as they arrived.
    Raw(RawJson),
}

/// A result's top-level `resultType`, for the session to know whether it
/// must look inside before the caller decodes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// No `resultType` (every result before 2026-07-28) or `"complete"`:
    /// the result is final and goes to its caller as it is.
    Complete,
    /// Anything else (`input_required`, a task handle, an unknown kind),
    /// or bytes the peek could not read: the session decodes the result
    /// and takes the path for what it finds (or reports why it cannot).
    Other,
}

/// The searcher for the key `resultType`, built once: every result of a
/// legacy session is searched for it.
static RESULT_TYPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new("resultType"));

/// Whether `text` holds the key `finder` searches for written out between
/// quotes (a key inside a JSON string has its quotes escaped, so it never
/// matches).
fn holds_quoted(text: &[u8], finder: &memchr::memmem::Finder<'_>) -> bool {
    let len = finder.needle().len();
    // One plain search first: most texts do not hold the key at all, and
    // an iterator costs more to set up.
    finder.find(text).is_some()
        && finder
            .find_iter(text)
            .any(|at| at > 0 && text[at - 1] == b'"' && text.get(at + len) == Some(&b'"'))
}

/// A result's top-level `resultType`, read by serde without building the
/// rest: every other member is skipped and the member itself borrowed,
/// which `serde_json` does without recursing, so any depth reads on the
/// default stack (the frame's depth was bounded already). A member given
/// twice, or a result that is not one valid object, reads as `Err`.
#[derive(serde::Deserialize)]
struct ResultTypePeek<'a> {
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<&'a serde_json::value::RawValue>,
}

fn peek_result_type(text: &str) -> Result<Option<std::borrow::Cow<'_, str>>, ()> {
    let peek: ResultTypePeek<'_> = serde_json::from_str(text).map_err(|_| ())?;
    // A `resultType` that is not a string names no kind.
    Ok(peek
        .result_type
        .and_then(|kind| serde_json::from_str::<std::borrow::Cow<'_, str>>(kind.get()).ok()))
}

impl Body {
    /// Whether the result is final, read from its top-level `resultType`
    /// without decoding the rest ([`peek_result_type`]).
    pub(super) fn outcome(&self) -> Outcome {
        let complete = |kind: Option<&str>| match kind {
            None | Some("complete") => Outcome::Complete,
            Some(_) => Outcome::Other,
        };
        match self {
            Body::Value(value) => complete(value.get("resultType").and_then(Value::as_str)),
            // Only an object has members; anything else is the caller's
            // decode to refuse.
            Body::Raw(raw) if !raw.get().trim_start().starts_with('{') => Outcome::Complete,
            Body::Raw(raw) => match peek_result_type(raw.get()) {
                Ok(kind) => complete(kind.as_deref()),
                // Given twice: the decoded result then says what it is.
                Err(()) => Outcome::Other,
            },
        }
    }

    /// [`Body::outcome`] in a session of the given era. Before 2026-07-28
    /// a result names `resultType` only if a server sends it anyway, and
    /// one whose bytes hold neither the quoted key nor a backslash (the
    /// only ways to spell it) cannot: two vectorised searches instead of a
    /// peek. A modern result always names it, so the peek runs at once.
    pub(super) fn outcome_in_era(&self, modern: bool) -> Outcome {
        if !modern
            && let Body::Raw(raw) = self
            && !holds_quoted(raw.get().as_bytes(), &RESULT_TYPE)
            && memchr::memchr(b'\\', raw.get().as_bytes()).is_none()
        {
            // The bytes are valid JSON already (the envelope was parsed).
            return Outcome::Complete;
        }
        self.outcome()
    }

    /// Whether the result may hold the member `key` at some level: always
    /// for a decoded value, for raw bytes only if the quoted key occurs.
    pub(super) fn may_have(&self, key: &str) -> bool {
        match self {
            Body::Value(_) => true,
            Body::Raw(raw) => holds_quoted(raw.get().as_bytes(), &memchr::memmem::Finder::new(key)),
        }
    }
}

pub(super) struct Pending {
    pub(super) reply: oneshot::Sender<Reply>,
    pub(super) progress: Option<mpsc::UnboundedSender<Progress>>,
    pub(super) deadline: Deadline,
}

/// Requests in flight, and why the connection ended once it has.
#[derive(Default)]
pub(super) struct PendingTable {
    pub(super) entries: HashMap<i64, Pending, BuildHasherDefault<IdHasher>>,
    pub(super) ended: Option<TransportError>,
    /// The deadline the session's deadline task sleeps towards (see
    /// `deadlines`); `None` while it waits for one.
    pub(super) armed: Option<Instant>,
}

/// Hashes the table's keys, ids this session counts up itself, with one
/// multiplication instead of SipHash: only the session inserts keys (a
/// server's ids are only looked up), so there is no flooding to resist.
#[derive(Default)]
pub(super) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i64(&mut self, id: i64) {
        // Fibonacci hashing spreads consecutive ids over the high bits too.
        self.0 = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Shared {
    pub(super) fn closed_error(&self) -> TransportError {
        TransportError::closed(&*self.server)
    }

    pub(super) fn send(&self, message: JsonRpcMessage) -> Result<(), TransportError> {
        self.send_hinted(message, true)
    }

    /// Sends a message; `alone` says no other request is in flight (so the
    /// transport need not wait to batch it with others).
    pub(super) fn send_hinted(
        &self,
        message: JsonRpcMessage,
        alone: bool,
    ) -> Result<(), TransportError> {
        if let Some(direct) = &self.direct {
            return direct
                .send_hinted(message, alone)
                .map_err(|_| self.ended_error());
        }
        self.commands
            .send(Command::Send(message, super::observe::carried()))
            .map_err(|_| self.ended_error())
    }

    /// Whether requests are encoded from a borrow (stdio's queue; a modern
    /// session's requests over streamable HTTP), so the caller keeps its
    /// parameters without a copy: the choice [`Shared::exchange_keeping`]
    /// makes, in the same order.
    pub(super) fn sends_by_reference(&self, modern: bool) -> bool {
        match (&self.direct, &self.modern_direct) {
            (Some(direct), _) => direct.sends_by_reference(),
            (None, Some(_)) => modern,
            (None, None) => false,
        }
    }

    pub(super) fn ended_error(&self) -> TransportError {
        lock(&self.pending)
            .ended
            .clone()
            .unwrap_or_else(|| self.closed_error())
    }

    /// Marks the connection ended and fails every request in flight.
    pub(super) fn end(&self, reason: TransportError) {
        let drained: Vec<Pending> = {
            let mut table = lock(&self.pending);
            if table.ended.is_none() {
                table.ended = Some(reason.clone());
            }
            table.entries.drain().map(|(_, pending)| pending).collect()
        };
        let reason = self.ended_error();
        #[cfg(feature = "otel")]
        self.telemetry.ended(match reason.kind() {
            TransportErrorKind::Closed => None,
            kind => Some(crate::telemetry::span::error_type(kind)),
        });
        for pending in drained {
            let _ = pending.reply.send(Reply::Ended(reason.clone()));
        }
        self.ended.send_replace(Some(reason));
    }

    /// The deadline of a `method` call with `options`, starting now: the
    /// caller's limits, or the session's default total for the method.
    pub(super) fn deadline(&self, method: &str, options: &CallOptions) -> Deadline {
        let default = match method {
            "initialize" => self.options.connect_timeout,
            "tools/call" => self.options.tool_call_timeout,
            _ => self.options.request_timeout,
        };
        Deadline::for_call(Instant::now(), options, default)
    }

    /// [`Shared::exchange_body`] decoded into a `Value`.
    pub(super) async fn exchange(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
        options: &CallOptions,
    ) -> Result<Value, TransportError> {
        let body = self.exchange_body(method, params, options).await?;
        self.body_value(method, body)
    }

    /// The result as a `Value`; a raw one past [`crate::depth::MAX_DEPTH`] fails
    /// the request as an undecodable answer does.
    pub(super) fn body_value(&self, method: &str, body: Body) -> Result<Value, TransportError> {
        match body {
            Body::Value(value) => Ok(value),
            Body::Raw(raw) => match crate::codec::decode_result::<Value>(raw.get()) {
                Ok(value) => Ok(value),
                Err(crate::codec::ResultError::Refused(kind)) => {
                    Err(self.answer_error(method, crate::codec::undecodable_error(&kind)))
                }
                Err(crate::codec::ResultError::Invalid(e)) => {
                    Err(self.answer_error(method, crate::codec::undecodable_error(&e)))
                }
            },
        }
    }

    /// The result decoded into `T`, in one pass from raw bytes.
    pub(super) fn body_typed<T: DeserializeOwned>(
        &self,
        method: &str,
        body: Body,
    ) -> Result<T, TransportError> {
        let invalid = |e: serde_json::Error| {
            TransportError::protocol(&*self.server, format!("invalid {method} result: {e}"))
                .with_source(e)
        };
        match body {
            Body::Value(value) => crate::depth::from_value(value).map_err(invalid),
            Body::Raw(raw) => match crate::codec::decode_result::<T>(raw.get()) {
                Ok(value) => Ok(value),
                Err(crate::codec::ResultError::Refused(kind)) => {
                    Err(self.answer_error(method, crate::codec::undecodable_error(&kind)))
                }
                Err(crate::codec::ResultError::Invalid(e)) => Err(invalid(e)),
            },
        }
    }

    /// The error a request fails with when the server (or the transport,
    /// for its own failures) answered `error`.
    pub(super) fn answer_error(&self, method: &str, error: ErrorObject) -> TransportError {
        // A transport's own failures of one request (a refused HTTP status,
        // a broken stream) arrive as marked error answers and become their
        // own kinds.
        if self.marks_own_failures {
            TransportError::from_error_response(&*self.server, method, error)
        } else {
            TransportError::new(
                &*self.server,
                TransportErrorKind::Rpc {
                    method: method.to_string(),
                    code: error.code,
                    message: error.message,
                    data: error.data.map(Box::new),
                },
            )
        }
    }

    /// One request and its answer: no `_meta` added, no input rounds (see
    /// `rounds` for the path callers take).
    pub(super) async fn exchange_body(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
        options: &CallOptions,
    ) -> Result<Body, TransportError> {
        let deadline = self.deadline(method, options);
        self.exchange_keeping(method, params.into(), options, deadline, false, None)
            .await
            .map(|(body, _)| body)
    }

    /// [`Shared::exchange_body`] within `deadline`, with the session's
    /// modern `_meta`, when given, added to the parameters (spliced in as
    /// encoded once, when the transport encodes from a borrow); with
    /// `keep`, also the parameters as the caller gave them when the
    /// transport encoded them from a borrow (see
    /// [`Shared::sends_by_reference`]), for a later input round. The
    /// progress delivered meanwhile moves the table's copy of the deadline.
    pub(super) async fn exchange_keeping<'p>(
        self: &Arc<Self>,
        method: &str,
        params: Params<'p>,
        options: &CallOptions,
        deadline: Deadline,
        keep: bool,
        meta: Option<&RequestMeta>,
    ) -> Result<(Body, Option<Params<'p>>), TransportError> {
        let now = Instant::now();
        if let Some(limit) = deadline.expired(now) {
            // Its time ran out on the way (an input the user took long to
            // give, a poll at the very end): not sent at all.
            return Err(deadline.error(&self.server, method, now, limit));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply_tx, mut reply_rx) = oneshot::channel();
        let (progress_tx, mut progress_rx) = match options.progress {
            Some(_) => {
                let (tx, rx) = mpsc::unbounded_channel();
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        let params = if progress_tx.is_some() {
            Params::Value(Some(with_progress_token(params.into_value(), id)))
        } else {
            params
        };
        let at = deadline.at();
        // The table's copy moves with progress; this one names the limits.
        let limits = deadline.clone();
        let (alone, wake) = {
            let mut table = lock(&self.pending);
            if let Some(reason) = &table.ended {
                return Err(reason.clone());
            }
            table.entries.insert(
                id,
                Pending {
                    reply: reply_tx,
                    progress: progress_tx,
                    deadline,
                },
            );
            (table.entries.len() == 1, table.arm(at))
        };
        if wake {
            self.deadlines.notify_one();
        }
        let (observed, params) = self.observe(method, id, params);
        let mut guard = InFlight {
            shared: self,
            id,
            cancel_reason: Some("the client stopped waiting"),
            cancellable: method != "initialize" && method != "server/discover",
        };
        let request_id = RequestId::Number(id);
        // What the transport does while it takes the request (an OAuth
        // refresh, a task it starts for the request) runs in the request's
        // trace.
        let kept = {
            let _attached = observed.attach();
            // Written from borrows where the transport encodes at once (the
            // parameters stay the caller's), else handed over as a message.
            let view = params.view();
            let sent = match (meta, &self.direct, &self.modern_direct) {
                (Some(meta), Some(direct), _) => {
                    direct.send_serialized(&meta.request(&request_id, method, view), alone)
                }
                (Some(meta), None, Some(modern)) => {
                    Some(modern.send(&request_id, method, view, meta))
                }
                (None, Some(direct), _) => direct.send_serialized(
                    &RequestRef {
                        id: &request_id,
                        method,
                        params: view.present().as_ref(),
                    },
                    alone,
                ),
                _ => None,
            };
            match sent {
                Some(sent) => {
                    sent.map_err(|()| self.ended_error())?;
                    keep.then_some(params)
                }
                None => {
                    let params = params.into_value();
                    let params = match meta {
                        Some(meta) => Some(meta.apply(params)),
                        None => params,
                    };
                    let message = JsonRpcMessage::Request(Request {
                        id: request_id,
                        method: method.to_string(),
                        params,
                    });
                    self.send_hinted(message, alone)?;
                    None
                }
            }
        };

        loop {
            tokio::select! {
                reply = &mut reply_rx => {
                    guard.cancel_reason = None;
                    // Progress sent before the answer is delivered before it.
                    if let (Some(rx), Some(callback)) = (&mut progress_rx, &options.progress) {
                        while let Ok(progress) = rx.try_recv() {
                            callback(progress);
                        }
                    }
                    let outcome = match reply {
                        Ok(Reply::Answer(answer)) => answer
                            .map(|body| (body, kept))
                            .map_err(|error| self.answer_error(method, error)),
                        Ok(Reply::Ended(reason)) => Err(reason),
                        Err(_) => Err(self.ended_error()),
                        Ok(Reply::TimedOut(limit)) => {
                            if guard.cancellable {
                                self.cancel(id, "timed out");
                            }
                            Err(limits.error(&self.server, method, Instant::now(), limit))
                        }
                    };
                    observed.end(self, &outcome);
                    return outcome;
                }
                // The driver moves the deadline as it delivers progress.
                Some(progress) = recv_progress(&mut progress_rx) => {
                    if let Some(callback) = &options.progress {
                        callback(progress);
                    }
                }
            }
        }
    }
}

async fn recv_progress(rx: &mut Option<mpsc::UnboundedReceiver<Progress>>) -> Option<Progress> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

fn with_progress_token(params: Option<Value>, id: i64) -> Value {
    with_meta(params, [("progressToken".to_owned(), Value::from(id))])
}

/// Removes a request from the table when its caller stops waiting, and
/// tells the server with `notifications/cancelled` unless it was answered.
struct InFlight<'a> {
    shared: &'a Arc<Shared>,
    id: i64,
    cancel_reason: Option<&'static str>,
    cancellable: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let removed = lock(&self.shared.pending).entries.remove(&self.id);
        if let (Some(_), Some(reason), true) = (removed, self.cancel_reason, self.cancellable) {
            self.shared.cancel(self.id, reason);
        }
    }
}

impl Shared {
    /// Tells the server the client stopped waiting for request `id`.
    fn cancel(&self, id: i64, reason: &str) {
        let _ = self.send(JsonRpcMessage::notification(
            "notifications/cancelled",
            Some(json!({ "requestId": id, "reason": reason })),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::value::RawValue;

    fn check(result: &str, expect: Outcome) {
        let raw = Body::Raw(RawValue::from_string(result.to_owned()).unwrap().into());
        assert_eq!(raw.outcome(), expect, "raw {result}");
        assert_eq!(raw.outcome_in_era(false), expect, "raw, legacy {result}");
        let value = Body::Value(serde_json::from_str(result).unwrap());
        assert_eq!(value.outcome(), expect, "decoded {result}");
    }

    #[test]
    fn only_a_top_level_result_type_other_than_complete_needs_a_look() {
        check(r#"{"content":[]}"#, Outcome::Complete);
        check(
            r#"{"resultType":"complete","content":[]}"#,
            Outcome::Complete,
        );
        check(
            r#"{"content":[],"resultType":"complete"}"#,
            Outcome::Complete,
        );
        check(
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            Outcome::Other,
        );
        check(
            r#"{"resultType":"task","task":{"taskId":"t"}}"#,
            Outcome::Other,
        );
        check(r#"{"resultType":"some_future_kind"}"#, Outcome::Other);
        // the key nested deeper, or inside a string, is not the result's
        check(
            r#"{"structuredContent":{"resultType":"input_required"}}"#,
            Outcome::Complete,
        );
        check(
            r#"{"content":[{"type":"text","text":"\"resultType\""}]}"#,
            Outcome::Complete,
        );
        // an escaped value or key is read as what it means
        check(r#"{"resultType":"comp\u006cete"}"#, Outcome::Complete);
        check(r#"{"result\u0054ype":"input_required"}"#, Outcome::Other);
        check(
            " {\n\t\"content\" : [ ] ,\r\n \"resultType\" :\"task\" } ",
            Outcome::Other,
        );
        // a result that is not an object has no members: the caller's
        // decode refuses it, whichever way it arrived
        check(r#"["resultType"]"#, Outcome::Complete);
        check(r#""resultType""#, Outcome::Complete);
        // a resultType that is not a string is no known kind
        check(r#"{"resultType":7}"#, Outcome::Complete);
        // a key given twice: the peek refuses, and the decoded result (the
        // last one wins) is what the session reads
        check(
            r#"{"resultType":"complete","resultType":"input_required"}"#,
            Outcome::Other,
        );
    }

    /// What a parser reads as the top-level `resultType` from the decoded
    /// value: the reference the peek must agree with (the peek refuses a
    /// field given twice, where the decoded value keeps the last).
    fn parsed_outcome(text: &str) -> Outcome {
        #[derive(Deserialize)]
        struct Peek<'a> {
            #[serde(rename = "resultType", borrow, default)]
            result_type: Option<&'a RawValue>,
        }
        if !text.trim_start().starts_with('{') {
            return Outcome::Complete;
        }
        match serde_json::from_str::<Peek<'_>>(text) {
            Ok(peek) => match peek
                .result_type
                .and_then(|kind| serde_json::from_str::<String>(kind.get()).ok())
                .as_deref()
            {
                None | Some("complete") => Outcome::Complete,
                Some(_) => Outcome::Other,
            },
            Err(_) => Outcome::Other,
        }
    }

    /// JSON text of any shape, with keys and strings that look like the
    /// peek's (escaped, quoted, nested) and whitespace anywhere.
    fn json_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let space = prop::sample::select(vec!["", " ", "\n\t", "\r\n  "]);
        let string = prop::sample::select(vec![
            r#""resultType""#,
            r#""result\u0054ype""#,
            r#""complete""#,
            r#""comp\u006cete""#,
            r#""input_required""#,
            r#""task""#,
            r#""\"resultType\"""#,
            r#""a\\""#,
            r#""}]{[,:""#,
            r#""é \ud83d\ude00""#,
            // long enough to be searched past its first bytes, with an
            // escape across that boundary
            r#""aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"],\"resultType\":{[\\bbbbbbbbbbbbbbbbbbbbbbbbbb""#,
            r#""""#,
        ]);
        let scalar = prop::sample::select(vec!["0", "-1.5e3", "true", "false", "null"]);
        let leaf = prop_oneof![
            string.clone().prop_map(str::to_owned),
            scalar.prop_map(str::to_owned)
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            let member = (space.clone(), string.clone(), space.clone(), inner.clone());
            prop_oneof![
                prop::collection::vec(member, 0..6).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(before, key, after, value)| format!("{before}{key}{after}:{value}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
                prop::collection::vec(inner, 0..4)
                    .prop_map(|items| format!("[{}]", items.join(" , "))),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn the_scan_reads_resulttype_as_a_parser_does(text in json_text()) {
            let raw = RawValue::from_string(text.clone()).unwrap();
            let body = Body::Raw(raw.into());
            let parsed = parsed_outcome(&text);
            proptest::prop_assert_eq!(body.outcome(), parsed, "{}", text);
            proptest::prop_assert_eq!(body.outcome_in_era(false), parsed, "legacy {}", text);
            proptest::prop_assert_eq!(body.outcome_in_era(true), parsed, "modern {}", text);
        }
    }

    #[test]
    fn the_peek_reads_past_any_depth_without_building_it() {
        // Skipped members are read without recursing, so a result deeper
        // than serde's default limit is peeked like any other; the
        // caller's decode then applies the depth ceiling.
        for (kind, expect) in [("complete", Outcome::Complete), ("task", Outcome::Other)] {
            let deep = format!(
                r#"{{"x":{}{},"resultType":"{kind}"}}"#,
                "[".repeat(5_000),
                "]".repeat(5_000)
            );
            // (the codec keeps such a result raw, read past serde's limit)
            let mut deserializer = serde_json::Deserializer::from_str(&deep);
            deserializer.disable_recursion_limit();
            let raw = Box::<RawValue>::deserialize(&mut deserializer).unwrap();
            assert_eq!(Body::Raw(raw.into()).outcome(), expect, "{kind}");
        }
    }
}
