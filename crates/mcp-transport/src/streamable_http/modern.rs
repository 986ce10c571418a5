//! Streamable HTTP at MCP 2026-07-28 and later, for one request: the
//! request metadata headers, the answer (JSON or a response stream scoped
//! to the request), refusals, and a broken stream.
//!
//! A modern session posts its requests through the transport's
//! [`crate::transport::ModernSender`], from the caller's task: each is written from
//! borrows with the session's `_meta` spliced in as encoded once
//! ([`Prepared::spliced`]), and the session keeps the parameters for an
//! input round without a copy. A request handed to `send` is modern when
//! its `params._meta` carries `io.modelcontextprotocol/protocolVersion`
//! (the `server/discover` probe, a request built by hand). Such a POST
//! carries `MCP-Protocol-Version` (the revision), `Mcp-Method`, `Mcp-Name`
//! (`tools/call`, `prompts/get`: `params.name`; `resources/read`:
//! `params.uri`; `tasks/get`, `tasks/update`, `tasks/cancel`:
//! `params.taskId`, as SEP-2663's binding asks) and the tool's
//! `Mcp-Param-*` headers from the [`ToolHeaderTable`], never
//! `Mcp-Session-Id` or `Last-Event-ID`.
//!
//! - **Refusals:** a 4xx or 5xx whose body is a JSON-RPC error is that
//!   request's answer (the session reads `-32022` unsupported version,
//!   `-32020` header mismatch, `-32021` missing capability, `-32601`);
//!   without one (and always for 401/403, whose meaning is HTTP's) the
//!   request fails with [`HttpFailure::Status`].
//! - **Broken stream:** streams cannot be resumed at this revision. A
//!   request safe to repeat ([`repeat_safe`]) is posted once more under a
//!   new id (the same bytes, the id rewritten), mapped back to the
//!   caller's; any other request, or a second break, fails at once with
//!   [`TransportErrorKind::StreamBroken`].
//! - **Cancellation:** closing the response stream is the signal, so
//!   `notifications/cancelled` for a modern request aborts its task and is
//!   not posted.
//! - **Long-lived streams:** nothing here bounds how long a stream may stay
//!   quiet (the client has no read timeout), so a `subscriptions/listen`
//!   stream lives until either side ends it, and its notifications go to
//!   the inbox like any other message.
//!
//! Failures reach the caller as answers made by
//! [`crate::failure::failure_answer`], which
//! [`crate::TransportError::from_error_response`] turns back into their kinds.

use std::borrow::Cow;

use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};

use super::{PROTOCOL_VERSION, Shared, post_headers, version_header};
use crate::codec::{Codec, DEFAULT_MAX_MESSAGE_BYTES};
use crate::error::{HttpFailure, TransportError, TransportErrorKind};
use crate::event_stream::SseItem;
use crate::failure::failure_answer;
use crate::http::{
    decode_payload, encode_serialized, excerpt, io_error, is_message_event, media_type,
    read_body_capped, read_refusal, sse_events,
};
use crate::lock;
use crate::message::{Incoming, JsonRpcMessage, Request, RequestId, RequestRef, Response};
use crate::param_headers::{ToolHeaderTable, encoded_header_value, name_member};
use crate::params::ParamsRef;
use crate::request_meta::RequestMeta;

use std::sync::Arc;

/// The `_meta` key that makes a request modern.
use crate::protocol::META_PROTOCOL_VERSION;

const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// How much of a refusal's body is read to find a JSON-RPC error in it.
const REFUSAL_BYTES: usize = 64 * 1024;

/// Methods whose repetition has no further effect, so a request whose
/// stream broke may be sent again.
const REPEAT_SAFE_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/get",
    "completion/complete",
    "subscriptions/listen",
    "tasks/get",
    "tasks/list",
];

/// A modern request ready to post: its body, encoded once (the session's
/// `_meta` spliced in as encoded once when it came apart), and what its
/// task needs besides.
pub(crate) struct Prepared {
    /// The caller's id, under which the answer is delivered.
    caller: RequestId,
    method: String,
    /// The JSON-RPC request under the caller's id.
    body: Bytes,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Whether it may be posted again after its stream broke.
    repeat_safe: bool,
}

impl Prepared {
    /// A request that names its revision in its own `_meta` (built with
    /// the session's entries, or by hand), sent as it is.
    pub(crate) fn named(
        request: &Request,
        version: &str,
        tools: &ToolHeaderTable,
    ) -> Result<Prepared, String> {
        let body = encode_serialized(&RequestRef {
            id: &request.id,
            method: &request.method,
            params: request.params.as_ref(),
        });
        let params = ParamsRef::from(request.params.as_ref());
        Prepared::new(&request.id, &request.method, params, version, tools, body)
    }

    /// A request written from borrows with the session's `_meta`
    /// spliced in: neither the parameters nor the entries are copied.
    pub(crate) fn spliced(
        id: &RequestId,
        method: &str,
        params: ParamsRef<'_>,
        meta: &RequestMeta,
        tools: &ToolHeaderTable,
    ) -> Result<Prepared, String> {
        let body = encode_serialized(&meta.request(id, method, params));
        Prepared::new(id, method, params, meta.version(), tools, body)
    }

    fn new(
        id: &RequestId,
        method: &str,
        params: ParamsRef<'_>,
        version: &str,
        tools: &ToolHeaderTable,
        body: String,
    ) -> Result<Prepared, String> {
        Ok(Prepared {
            caller: id.clone(),
            method: method.to_owned(),
            headers: request_headers(method, params, version, tools)?,
            repeat_safe: repeat_safe(method, params, tools),
            body: Bytes::from(body),
        })
    }

    /// The caller's id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.caller
    }
}

/// The protocol version a modern request names in its `_meta`; `None` for
/// a request of an older revision.
pub(crate) fn modern_version(request: &Request) -> Option<&str> {
    request
        .params
        .as_ref()?
        .get("_meta")?
        .get(META_PROTOCOL_VERSION)?
        .as_str()
}

/// Whether `request` may be sent again after its stream broke: the methods
/// of [`REPEAT_SAFE_METHODS`], and `tools/call` of a tool the table marks
/// read-only or idempotent.
fn repeat_safe(method: &str, params: ParamsRef<'_>, tools: &ToolHeaderTable) -> bool {
    match method {
        "tools/call" => params
            .str_member("name")
            .is_some_and(|name| tools.is_repeat_safe(name)),
        method => REPEAT_SAFE_METHODS.contains(&method),
    }
}

/// The request metadata headers of a modern request (SEP-2243), built once
/// for its posts; the revision's value is static, and the method and name
/// are copied once.
fn request_headers(
    method: &str,
    params: ParamsRef<'_>,
    version: &str,
    tools: &ToolHeaderTable,
) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
    let mut headers = Vec::with_capacity(4);
    let version = version_header(version)
        .ok_or_else(|| format!("protocol version {version:?} cannot be sent as a header"))?;
    headers.push((PROTOCOL_VERSION, version));
    let method_value = encoded(method).map_err(|_| "the method cannot be sent as a header")?;
    headers.push((MCP_METHOD, method_value));
    let name = name_member(method).and_then(|member| params.str_member(member));
    if let Some(name) = name {
        headers.push((MCP_NAME, encoded(name)?));
    }
    if method == "tools/call" {
        let arguments = params.member("arguments");
        for (name, value) in tools.headers_for(params.str_member("name").unwrap_or(""), arguments) {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("{name} is not a header name"))?;
            headers.push((name, plain(value)?));
        }
    }
    Ok(headers)
}

/// `text` in the value encoding as a header value, copied once.
fn encoded(text: &str) -> Result<HeaderValue, String> {
    match encoded_header_value(text) {
        Cow::Borrowed(text) => HeaderValue::from_str(text).map_err(|_| NOT_A_VALUE.to_owned()),
        Cow::Owned(text) => plain(text),
    }
}

/// An encoded value as a header value (always valid: visible ASCII).
fn plain(value: String) -> Result<HeaderValue, String> {
    HeaderValue::try_from(value).map_err(|_| NOT_A_VALUE.to_owned())
}

const NOT_A_VALUE: &str = "an encoded value is not a header value";

/// How one POST of a modern request ended without its answer.
enum Lost {
    /// The response stream (or JSON body) broke off before the answer.
    Broken(String),
    /// Anything else: the request fails with this error.
    Failed(TransportError),
}

impl Shared {
    /// Posts a modern request and delivers its answer (or a made-up one
    /// naming why there is none), re-issuing it once under a new id when
    /// its stream breaks and it is safe to repeat.
    pub(super) async fn modern_request(self: Arc<Self>, request: Prepared) {
        let mut attempt = request.caller.clone();
        let mut body = request.body.clone();
        loop {
            let lost = match self
                .modern_exchange(&body, &request.headers, &attempt, &request.caller)
                .await
            {
                Ok(()) => return,
                Err(lost) => lost,
            };
            let error = match lost {
                Lost::Failed(error) => error,
                Lost::Broken(cause) => {
                    if lock(&self.state).cancelled.remove(&request.caller) {
                        return;
                    }
                    let reissue = (attempt == request.caller && request.repeat_safe)
                        .then(|| self.fresh_id())
                        .and_then(|fresh| {
                            let again = with_request_id(&request.body, &request.caller, &fresh)?;
                            Some((fresh, again))
                        });
                    if let Some((fresh, again)) = reissue {
                        tracing::debug!(server = %self.server, method = %request.method, %cause, "response stream broke; re-issuing");
                        attempt = fresh;
                        body = again;
                        continue;
                    }
                    tracing::debug!(server = %self.server, method = %request.method, %cause, "response stream broke");
                    TransportError::new(
                        &*self.server,
                        TransportErrorKind::StreamBroken {
                            method: request.method.clone(),
                        },
                    )
                }
            };
            return self.fail(request.caller.clone(), &error);
        }
    }

    /// A request id no caller uses, for a re-issue.
    fn fresh_id(&self) -> RequestId {
        let n = self
            .reissues
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        RequestId::String(format!("mcp-transport-reissue-{n}"))
    }

    /// Fails the caller's request `id` with `error`.
    pub(super) fn fail(&self, id: RequestId, error: &TransportError) {
        // Not through `deliver`: that strips the marker this answer carries.
        self.inbox
            .message(failure_answer(id, error.kind(), error.to_string()));
    }

    /// One POST of a modern request under `attempt`; its answer is
    /// delivered under `caller`.
    async fn modern_exchange(
        self: &Arc<Self>,
        body: &Bytes,
        headers: &[(HeaderName, HeaderValue)],
        attempt: &RequestId,
        caller: &RequestId,
    ) -> Result<(), Lost> {
        let response = self
            .headers
            .send(|| self.post_request(body, post_headers(headers)))
            .await
            .map_err(|e| Lost::Failed(self.check_reachable(e)))?;
        let status = response.status();
        if !status.is_success() {
            return self.refused(response, caller).await.map_err(Lost::Failed);
        }
        if status == reqwest::StatusCode::ACCEPTED || status == reqwest::StatusCode::NO_CONTENT {
            return Err(Lost::Failed(io_error(
                &self.server,
                format!("POST: HTTP {status} without an answer to the request"),
            )));
        }
        if media_type(&response) == "text/event-stream" {
            return self.modern_stream(response, attempt, caller).await;
        }
        let bytes = match read_body_capped(&self.server, response, DEFAULT_MAX_MESSAGE_BYTES).await
        {
            Ok(bytes) => bytes,
            Err(e) if matches!(e.kind(), TransportErrorKind::Http { .. }) => {
                return Err(Lost::Broken(e.to_string()));
            }
            Err(e) => return Err(Lost::Failed(e)),
        };
        let mut messages = Vec::new();
        let error = Codec::default()
            .decode_incoming(&bytes, &mut messages)
            .err();
        let mut answered = false;
        let alone = messages.len() == 1;
        for message in messages {
            answered |= match message {
                Incoming::Answer(mut answer) => {
                    let ours = same_id(&answer.id, attempt) || same_id(&answer.id, caller);
                    if ours {
                        answer.id = caller.clone();
                    }
                    if ours && alone {
                        self.answer_alone(answer);
                    } else {
                        self.deliver_incoming(Incoming::Answer(answer));
                    }
                    ours
                }
                Incoming::Message(message) => self.deliver_mapped(message, attempt, caller, true),
            };
        }
        match (answered, error) {
            (true, _) => Ok(()),
            (false, Some(e)) => Err(Lost::Failed(io_error(
                &self.server,
                format!("POST answer: {e}"),
            ))),
            (false, None) => Err(Lost::Failed(io_error(
                &self.server,
                "POST: HTTP 200 without an answer to the request",
            ))),
        }
    }

    /// Delivers the messages of a response stream until the answer.
    async fn modern_stream(
        self: &Arc<Self>,
        response: reqwest::Response,
        attempt: &RequestId,
        caller: &RequestId,
    ) -> Result<(), Lost> {
        let mut events = Box::pin(sse_events(response));
        while let Some(item) = events.next().await {
            let event = match item {
                Ok(SseItem::Event(event)) => event,
                Ok(SseItem::TooLarge { max, .. }) => {
                    return Err(Lost::Failed(TransportError::new(
                        &*self.server,
                        TransportErrorKind::MessageTooLarge { max },
                    )));
                }
                Err(e) => return Err(Lost::Broken(e.to_string())),
            };
            if !is_message_event(&event) {
                continue;
            }
            let mut answered = false;
            for message in self.inbox.decode(event.data.as_bytes(), "SSE event") {
                answered |= self.deliver_mapped(message, attempt, caller, false);
            }
            if answered {
                return Ok(());
            }
        }
        Err(Lost::Broken("the stream ended".to_owned()))
    }

    /// Delivers `message`, the answer to `attempt` under the caller's id;
    /// true when it was that answer. In a JSON body (`whole_body`) an error
    /// without an id answers the request too: the body answers only it.
    fn deliver_mapped(
        &self,
        mut message: JsonRpcMessage,
        attempt: &RequestId,
        caller: &RequestId,
        whole_body: bool,
    ) -> bool {
        let mut answered = false;
        if let JsonRpcMessage::Response(response) = &mut message {
            let ours = match &response.id {
                // A server that answers a re-issue under the first id
                // still answers the caller.
                Some(id) => same_id(id, attempt) || same_id(id, caller),
                None => whole_body && response.outcome.is_err(),
            };
            if ours {
                response.id = Some(caller.clone());
                answered = true;
            }
        }
        self.deliver(message);
        answered
    }

    /// A refusal: its JSON-RPC error body as the caller's answer, else an
    /// [`HttpFailure::Status`] failure.
    async fn refused(
        &self,
        response: reqwest::Response,
        caller: &RequestId,
    ) -> Result<(), TransportError> {
        let status = response.status().as_u16();
        let body = read_refusal(response, REFUSAL_BYTES).await;
        if let Some(error) = rpc_error(&body).filter(|_| !matches!(status, 401 | 403)) {
            self.deliver(JsonRpcMessage::Response(Response {
                id: Some(caller.clone()),
                outcome: Err(error),
            }));
            return Ok(());
        }
        Err(TransportError::new(
            &*self.server,
            TransportErrorKind::Http {
                failure: HttpFailure::Status(status),
                detail: excerpt(&body),
            },
        ))
    }
}

/// The JSON-RPC error a refusal's body holds, if it is one error response.
fn rpc_error(body: &[u8]) -> Option<crate::message::ErrorObject> {
    let messages = decode_payload(body).ok()?;
    match messages.as_slice() {
        [
            JsonRpcMessage::Response(Response {
                outcome: Err(error),
                ..
            }),
        ] => Some(error.clone()),
        _ => None,
    }
}

/// `body`, a request encoded under `old` (as [`RequestRef`] writes one:
/// `jsonrpc`, then `id`), under `new` instead; the rest of its bytes are
/// kept as they are. `None` if the body does not start that way.
fn with_request_id(body: &Bytes, old: &RequestId, new: &RequestId) -> Option<Bytes> {
    const START: &[u8] = crate::message::REQUEST_START;
    let old = serde_json::to_vec(old).ok()?;
    let rest = body.strip_prefix(START)?.strip_prefix(old.as_slice())?;
    let new = serde_json::to_vec(new).ok()?;
    let mut again = Vec::with_capacity(START.len() + new.len() + rest.len());
    again.extend_from_slice(START);
    again.extend_from_slice(&new);
    again.extend_from_slice(rest);
    Some(Bytes::from(again))
}

/// Ids match, also when a bridge turned a numeric id into a string.
fn same_id(a: &RequestId, b: &RequestId) -> bool {
    match (a, b) {
        (RequestId::Number(n), RequestId::String(s))
        | (RequestId::String(s), RequestId::Number(n)) => s.parse::<i64>().ok() == Some(*n),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn mcp_name(method: &str, params: Value) -> Option<String> {
        let tools = ToolHeaderTable::default();
        let headers = request_headers(method, Some(&params).into(), "2026-07-28", &tools);
        // A tool call the session keeps apart gets the same headers.
        if let Some(name) = params.get("name").and_then(Value::as_str) {
            let apart = ParamsRef::ToolCall {
                name,
                arguments: params.get("arguments"),
            };
            assert_eq!(
                request_headers(method, apart, "2026-07-28", &tools),
                headers,
                "{params}"
            );
        }
        headers
            .ok()?
            .into_iter()
            .find(|(name, _)| *name == MCP_NAME)
            .and_then(|(_, value)| value.to_str().ok().map(str::to_owned))
    }

    #[test]
    fn task_requests_name_their_task() {
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            assert_eq!(
                mcp_name(method, json!({"taskId": "t-1"})).as_deref(),
                Some("t-1"),
                "{method}"
            );
        }
        assert_eq!(
            mcp_name("tools/call", json!({"name": "echo"})).as_deref(),
            Some("echo")
        );
        assert_eq!(mcp_name("tools/list", json!({})), None);
    }

    #[test]
    fn a_reissue_changes_the_id_and_nothing_else() {
        let request = Request {
            id: RequestId::Number(12),
            method: "tools/list".to_owned(),
            params: Some(json!({"cursor": "c", "_meta": {"id": 12}})),
        };
        let prepared =
            Prepared::named(&request, "2026-07-28", &ToolHeaderTable::default()).unwrap();
        let fresh = RequestId::String("mcp-transport-reissue-0".to_owned());
        let again = with_request_id(&prepared.body, prepared.id(), &fresh).unwrap();
        let mut expected: Value = serde_json::from_slice(&prepared.body).unwrap();
        expected["id"] = json!("mcp-transport-reissue-0");
        assert_eq!(serde_json::from_slice::<Value>(&again).unwrap(), expected);
        // a body under another id is not rewritten
        assert!(with_request_id(&prepared.body, &fresh, &RequestId::Number(1)).is_none());
    }
}
