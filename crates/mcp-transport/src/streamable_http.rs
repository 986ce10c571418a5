//! Streamable HTTP (MCP 2025-03-26 and later).
//!
//! Every outgoing message is one POST to the endpoint with
//! `Accept: application/json, text/event-stream`. A request's answer comes
//! back as a JSON body or as an SSE stream that may carry server requests
//! and notifications before the answer; notifications and responses get
//! 202 (200 and 204 are tolerated). The transport keeps the
//! `Mcp-Session-Id` the server assigns at initialize and, once it has seen
//! the initialize answer, sends `MCP-Protocol-Version` with the negotiated
//! version: it reads both from the exchange itself, so the session needs no
//! extra hook.
//!
//! - **Concurrency:** requests are posted from background tasks, so a slow
//!   tool call never holds up other messages. `initialize`, notifications
//!   and responses are posted inline, which keeps `initialize` →
//!   `notifications/initialized` → first request in order on the wire.
//! - **Server stream:** after `notifications/initialized` the transport
//!   opens the optional GET stream for server-initiated messages (405 means
//!   the server offers none). Once open, it is reopened when it ends; three
//!   failed reopenings in a row (no connection, or 502/504 from a proxy in
//!   front of the server) end the session, so a dead server is noticed
//!   with nothing in flight.
//! - **Resumption:** when an SSE stream ends before the answer it carries,
//!   the transport waits the server's `retry:` delay (1 s if none was sent)
//!   and resumes with GET and `Last-Event-ID` (SEP-1699), up to five times.
//! - **Expired session:** a 404 for a known session re-initializes once,
//!   transparently: the same `initialize` and `notifications/initialized`
//!   are sent again, then the failed message.
//! - **Lost answers:** a request whose POST fails or whose stream breaks for
//!   good gets an error response (code [`TRANSPORT_ERROR_CODE`]) so its
//!   caller learns at once.
//! - **Close:** DELETE with the session id (405 tolerated).
//!
//! A request of MCP 2026-07-28 or later (its `params._meta` names the
//! protocol version) goes the way `streamable_http/modern.rs` describes instead: request
//! metadata headers, no session, no GET stream, no resumption. The era is
//! read from each request, so one transport serves the `server/discover`
//! probe and, when the server turns out older, the `initialize` fallback.
//!
//! [`TRANSPORT_ERROR_CODE`]: crate::failure::TRANSPORT_ERROR_CODE

mod modern;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio::sync::oneshot;

use crate::codec::{Codec, DEFAULT_MAX_MESSAGE_BYTES};
use crate::error::{TransportError, TransportErrorKind};
use crate::event_stream::SseItem;
use crate::failure::{strip_failure_marker, synthetic_error};
use crate::http::{
    HttpOptions, RequestHeaders, build_client, decode_payload, encode, io_error,
    is_gateway_failure, is_message_event, media_type, read_body_capped, sse_events,
    too_large_answers, unexpected_status, within,
};
use crate::inbox::{Delivery, Inbox, Tasks};
use crate::lock;
use crate::message::{Incoming, JsonRpcMessage, Notification, RawAnswer, Request, RequestId};
use crate::param_headers::ToolHeaderTable;
use crate::protocol::KNOWN_PROTOCOL_VERSIONS;
use crate::request_meta::RequestMeta;
use crate::transport::{
    AnswerRoute, ModernRoute, ModernSender, SessionIdReader, Transport, TransportInfo,
};

/// What a POST accepts.
const ACCEPTED: &str = "application/json, text/event-stream";
/// Room for the headers of a POST besides a modern request's own: what it
/// accepts, its type, the session's two, a host, a length, configured ones
/// and credentials.
const HEADER_ROOM: usize = 8;

/// The headers every POST carries, with `own` (a modern request's) and
/// room for the rest, so none is moved as they are added; the constant
/// values are static, so no text is copied.
fn post_headers(own: &[(HeaderName, HeaderValue)]) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(own.len() + HEADER_ROOM);
    headers.insert(ACCEPT, HeaderValue::from_static(ACCEPTED));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for (name, value) in own {
        headers.append(name.clone(), value.clone());
    }
    headers
}

/// `version` as the `MCP-Protocol-Version` value: static for a known
/// revision; `None` when it is no header value.
fn version_header(version: &str) -> Option<HeaderValue> {
    match KNOWN_PROTOCOL_VERSIONS
        .iter()
        .find(|known| **known == version)
    {
        Some(known) => Some(HeaderValue::from_static(known)),
        None => HeaderValue::from_str(version).ok(),
    }
}

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: &str = "last-event-id";
/// Reconnection delay when the server sent no `retry:` field.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Resumption attempts for one stream before its request is failed.
const MAX_RESUMPTIONS: u32 = 5;
/// Longest reconnection delay honoured from a server's `retry:` field: a
/// hostile value must not park a resumption for days.
const MAX_RETRY: Duration = Duration::from_secs(30);
/// Consecutive GET-stream failures before the transport stops reopening it.
const MAX_GET_FAILURES: u32 = 3;

/// A streamable HTTP connection to one server.
#[derive(Debug)]
pub struct StreamableHttpTransport {
    shared: Arc<Shared>,
    /// Fed by the tasks that post requests and read streams.
    inbox: Inbox,
}

#[derive(Debug)]
pub(crate) struct Shared {
    server: String,
    kind: &'static str,
    url: reqwest::Url,
    client: reqwest::Client,
    headers: RequestHeaders,
    state: Mutex<State>,
    /// Serialises re-initialization after a 404.
    reinit: tokio::sync::Mutex<()>,
    inbox: Delivery,
    tasks: Tasks,
    /// Bound on one-way exchanges (the entry's connect timeout).
    one_way_timeout: Duration,
    /// Each tool's `x-mcp-header` parameters, filled by the session.
    tool_headers: ToolHeaderTable,
    /// Numbers the ids of re-issued modern requests.
    reissues: AtomicU64,
    /// Where a modern request's answer goes when it came alone (see
    /// [`ModernSender::route_answers`]); else, and until set, the inbox.
    answers: OnceLock<Weak<dyn AnswerRoute>>,
}

#[derive(Debug, Default)]
struct State {
    session_id: Option<String>,
    protocol_version: Option<String>,
    initialize: Option<Request>,
    initialized: Option<Notification>,
    /// Requests the client cancelled: their streams are not resumed.
    cancelled: HashSet<RequestId>,
    /// The protocol version of the latest modern request, once one was
    /// sent: notifications then carry it too.
    modern_version: Option<String>,
    /// The tasks of modern requests in flight, to close a request's stream
    /// when it is cancelled.
    modern_streams: HashMap<RequestId, tokio::task::AbortHandle>,
}

impl StreamableHttpTransport {
    /// Prepares a connection (validates headers, runs the `headersHelper`).
    /// Nothing is sent until the session's first message.
    pub async fn connect(options: HttpOptions) -> Result<Self, TransportError> {
        Self::connect_as(options, "http").await
    }

    /// [`connect`](Self::connect) with another kind name for errors and
    /// logs (the claude.ai proxy reuses this transport).
    pub(crate) async fn connect_as(
        options: HttpOptions,
        kind: &'static str,
    ) -> Result<Self, TransportError> {
        let url = reqwest::Url::parse(&options.url)
            .map_err(|e| io_error(&options.server, format!("invalid url: {e}")).with_source(e))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(io_error(
                &options.server,
                format!("url scheme must be http or https, not {}", url.scheme()),
            ));
        }
        let client = build_client(&options)?;
        let headers = RequestHeaders::new(&options).await?;
        let (inbox, delivery) = Inbox::new(&options.server);
        let shared = Arc::new(Shared {
            server: options.server.clone(),
            kind,
            url,
            client,
            headers,
            state: Mutex::new(State::default()),
            reinit: tokio::sync::Mutex::new(()),
            inbox: delivery,
            tasks: inbox.tasks().clone(),
            one_way_timeout: options.connect_timeout,
            tool_headers: ToolHeaderTable::new(),
            reissues: AtomicU64::new(0),
            answers: OnceLock::new(),
        });
        Ok(StreamableHttpTransport { shared, inbox })
    }

    /// The session id the server assigned, if any.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.shared.state).session_id.clone()
    }

    /// The protocol version negotiated at initialize, once known.
    pub fn protocol_version(&self) -> Option<String> {
        lock(&self.shared.state).protocol_version.clone()
    }
}

impl Shared {
    fn spawn(self: &Arc<Self>, fut: impl std::future::Future<Output = ()> + Send + 'static) {
        // A request's own task stays in the request's trace (an OAuth
        // refresh on its way is the request's child).
        #[cfg(feature = "otel")]
        let fut = crate::telemetry::in_current_context(fut);
        self.tasks.spawn(fut);
    }

    /// Runs the modern request `id` in its own task, remembered until it
    /// ends so a cancellation can close its stream; a request that could
    /// not be prepared fails at once. `Err` once the connection closed.
    fn post_modern(
        self: &Arc<Self>,
        id: &RequestId,
        prepared: Result<modern::Prepared, String>,
        version: &str,
    ) -> Result<(), ()> {
        let request = match prepared {
            Ok(request) => request,
            Err(message) => {
                self.fail(id.clone(), &io_error(&self.server, message));
                return Ok(());
            }
        };
        let task = Arc::clone(self);
        let mut state = lock(&self.state);
        if state.modern_version.as_deref() != Some(version) {
            state.modern_version = Some(version.to_owned());
        }
        // Held across the spawn so the task cannot end before it is noted.
        let run = async move {
            let id = request.id().clone();
            Arc::clone(&task).modern_request(request).await;
            lock(&task.state).modern_streams.remove(&id);
        };
        // The request's own task stays in the request's trace.
        #[cfg(feature = "otel")]
        let run = crate::telemetry::in_current_context(run);
        let handle = self.tasks.spawn(run);
        state.modern_streams.insert(id.clone(), handle.ok_or(())?);
        Ok(())
    }

    /// See [`ModernSender::route_answers`].
    pub(crate) fn route_answers(&self, route: Weak<dyn AnswerRoute>) {
        let _ = self.answers.set(route);
    }

    /// Hands an answer that came alone (never `initialize`'s, which the
    /// transport reads) to the route, or to the inbox when there is none
    /// (yet, or any more).
    fn answer_alone(&self, answer: RawAnswer) {
        match self.answers.get().and_then(Weak::upgrade) {
            Some(route) => route.answer(answer),
            None => self.deliver_incoming(Incoming::Answer(answer)),
        }
    }

    /// Whether `answer` answers `initialize`, whose result the transport
    /// reads too (the negotiated version).
    fn answers_initialize(&self, answer: &RawAnswer) -> bool {
        lock(&self.state)
            .initialize
            .as_ref()
            .is_some_and(|init| init.id == answer.id)
    }

    /// Posts a request of a modern session from the caller's task (see
    /// [`crate::transport::ModernSender`]): written from borrows, the session's
    /// `_meta` spliced in. Fails once the transport is closing.
    pub(crate) fn post_spliced(
        self: &Arc<Self>,
        id: &RequestId,
        method: &str,
        params: crate::params::ParamsRef<'_>,
        meta: &RequestMeta,
    ) -> Result<(), ()> {
        let prepared = modern::Prepared::spliced(id, method, params, meta, &self.tool_headers);
        self.post_modern(id, prepared, meta.version())
    }

    /// Runs a one-way exchange (a notification or response POST, the
    /// closing DELETE) within the connect timeout. These go out on the
    /// session's driver, which must not wait forever on a server that takes
    /// nothing (a stuck or slow-loris server): such a server is treated as
    /// gone.
    async fn one_way<T>(
        &self,
        what: &str,
        exchange: impl std::future::Future<Output = Result<T, TransportError>>,
    ) -> Result<T, TransportError> {
        within(&self.server, what, self.one_way_timeout, exchange).await
    }

    /// Hands a message to the session, noting the negotiated version when
    /// it is the answer to `initialize`.
    /// [`Self::deliver`] for a message whose result may still be raw: only
    /// the answer to `initialize` is looked into.
    fn deliver_incoming(&self, incoming: Incoming) {
        let answer = match incoming {
            Incoming::Message(message) => return self.deliver(message),
            Incoming::Answer(answer) => answer,
        };
        if self.answers_initialize(&answer) {
            return self.deliver(Incoming::Answer(answer).into_message());
        }
        // The inbox is gone only after the transport was dropped.
        self.inbox.incoming(Incoming::Answer(answer));
    }

    fn deliver(&self, mut message: JsonRpcMessage) {
        // Only the transport's own answers may name a transport failure.
        strip_failure_marker(&mut message);
        if let JsonRpcMessage::Response(response) = &message {
            let mut state = lock(&self.state);
            let is_init = state
                .initialize
                .as_ref()
                .is_some_and(|init| Some(&init.id) == response.id.as_ref());
            let version = match &response.outcome {
                Ok(result) if is_init => result.get("protocolVersion").and_then(|v| v.as_str()),
                _ => None,
            };
            if let Some(version) = version {
                state.protocol_version = Some(version.to_owned());
            }
        }
        // The inbox is gone only after the transport was dropped.
        self.inbox.message(message);
    }

    /// Ends the connection: the server cannot be reached any more.
    fn lost(&self, error: TransportError) {
        self.inbox.lost(error);
    }

    /// Reports `error` as the end of the connection when it says the server
    /// is unreachable; hands it back either way.
    fn check_reachable(&self, error: TransportError) -> TransportError {
        if error.is_unreachable() {
            self.lost(self.connection_lost(&error));
        }
        error
    }

    /// The end of the connection, caused by `error`.
    fn connection_lost(&self, error: &TransportError) -> TransportError {
        let cause = Box::new(error.kind().clone());
        TransportError::new(&*self.server, TransportErrorKind::ConnectionLost { cause })
    }

    fn session_headers(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let mut headers = HeaderMap::new();
        self.add_session_headers(&mut headers);
        builder.headers(headers)
    }

    /// Adds the session id and the negotiated version, once known.
    fn add_session_headers(&self, headers: &mut HeaderMap) {
        let state = lock(&self.state);
        // The id was read from a header value, so it is one.
        if let Some(id) = state
            .session_id
            .as_deref()
            .and_then(|id| HeaderValue::from_str(id).ok())
        {
            headers.insert(SESSION_ID, id);
        }
        if let Some(version) = state.protocol_version.as_deref().and_then(version_header) {
            headers.insert(PROTOCOL_VERSION, version);
        }
    }

    /// A POST of `body` with `headers`.
    fn post_request(&self, body: &Bytes, headers: HeaderMap) -> reqwest::RequestBuilder {
        let mut request = reqwest::Request::new(reqwest::Method::POST, self.url.clone());
        *request.headers_mut() = headers;
        *request.body_mut() = Some(body.clone().into());
        reqwest::RequestBuilder::from_parts(self.client.clone(), request)
    }

    fn remember_session(&self, response: &reqwest::Response) {
        if let Some(id) = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
        {
            let mut state = lock(&self.state);
            if state.session_id.is_none() {
                state.session_id = Some(id.to_owned());
            }
        }
    }

    /// One POST of `body`; on 404 for a known session re-initializes once
    /// and posts again.
    async fn post(
        self: &Arc<Self>,
        body: &Bytes,
        may_reinit: bool,
    ) -> Result<reqwest::Response, TransportError> {
        let mut may_reinit = may_reinit;
        loop {
            let session = lock(&self.state).session_id.clone();
            let response = self
                .headers
                .send(|| {
                    let mut headers = post_headers(&[]);
                    self.add_session_headers(&mut headers);
                    self.post_request(body, headers)
                })
                .await?;
            if response.status() == reqwest::StatusCode::NOT_FOUND
                && session.is_some()
                && may_reinit
            {
                may_reinit = false;
                tracing::debug!(server = %self.server, "session expired (404); re-initializing");
                Box::pin(self.reinitialize(session)).await?;
                continue;
            }
            self.remember_session(&response);
            return Ok(response);
        }
    }

    /// GET on the endpoint for an SSE stream, resuming after `last_event_id`.
    async fn get(
        self: &Arc<Self>,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, TransportError> {
        self.headers
            .send(|| {
                let mut builder = self
                    .client
                    .get(self.url.clone())
                    .header(ACCEPT, "text/event-stream");
                if let Some(id) = last_event_id {
                    builder = builder.header(LAST_EVENT_ID, id);
                }
                self.session_headers(builder)
            })
            .await
    }

    /// Reads a POST answer: nothing (202/204), JSON, or an SSE stream.
    /// `expect` is the id of the request whose answer the body must carry.
    async fn read_answer(
        self: &Arc<Self>,
        response: reqwest::Response,
        expect: Option<&RequestId>,
    ) -> Result<(), TransportError> {
        let status = response.status();
        if !status.is_success() {
            return Err(unexpected_status(&self.server, "POST", response).await);
        }
        if status == reqwest::StatusCode::ACCEPTED || status == reqwest::StatusCode::NO_CONTENT {
            return Ok(());
        }
        match media_type(&response).as_str() {
            "text/event-stream" => self.read_stream(response, expect).await,
            kind => {
                let bytes =
                    read_body_capped(&self.server, response, DEFAULT_MAX_MESSAGE_BYTES).await?;
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    return match expect {
                        Some(_) => Err(io_error(&self.server, "POST: HTTP 200 with an empty body")),
                        None => Ok(()),
                    };
                }
                if kind != "application/json" {
                    tracing::debug!(server = %self.server, content_type = kind, "unexpected content type; reading as JSON");
                }
                let text = String::from_utf8_lossy(&bytes);
                let mut messages = Vec::new();
                let error = Codec::default()
                    .decode_incoming(text.as_bytes(), &mut messages)
                    .err();
                let mut answered = false;
                let alone = messages.len() == 1;
                for message in messages {
                    if let Some(want) = expect {
                        answered |= message.response_id() == Some(want);
                    }
                    match message {
                        Incoming::Answer(answer)
                            if alone
                                && expect == Some(&answer.id)
                                && !self.answers_initialize(&answer) =>
                        {
                            self.answer_alone(answer);
                        }
                        message => self.deliver_incoming(message),
                    }
                }
                match error {
                    Some(e) if !answered => {
                        Err(io_error(&self.server, format!("POST answer: {e}")))
                    }
                    Some(e) => {
                        tracing::warn!(server = %self.server, error = %e, "skipping part of an undecodable POST answer");
                        Ok(())
                    }
                    None => Ok(()),
                }
            }
        }
    }

    /// Delivers the messages of an SSE stream; when it ends before the answer
    /// to `expect`, resumes it with GET + `Last-Event-ID` after the server's
    /// retry delay.
    async fn read_stream(
        self: &Arc<Self>,
        response: reqwest::Response,
        expect: Option<&RequestId>,
    ) -> Result<(), TransportError> {
        let mut last_event_id: Option<String> = None;
        let mut retry = DEFAULT_RETRY;
        let mut resumptions = 0;
        let mut events = Box::pin(sse_events(response));
        loop {
            let mut answered = false;
            let mut broken = None;
            while let Some(item) = events.next().await {
                let event = match item {
                    Ok(SseItem::Event(event)) => event,
                    Ok(SseItem::TooLarge { max, .. }) => {
                        // The answer is lost, the session is not.
                        return Err(TransportError::new(
                            &*self.server,
                            TransportErrorKind::MessageTooLarge { max },
                        ));
                    }
                    Err(e) => {
                        tracing::debug!(server = %self.server, error = %e, "SSE stream broke");
                        broken = Some(e.to_string());
                        break;
                    }
                };
                if !event.id.is_empty() {
                    last_event_id = Some(event.id.clone());
                }
                if let Some(delay) = event.retry {
                    retry = delay.min(MAX_RETRY);
                }
                if !is_message_event(&event) {
                    continue;
                }
                for message in self.inbox.decode(event.data.as_bytes(), "SSE event") {
                    if let (JsonRpcMessage::Response(r), Some(want)) = (&message, expect) {
                        answered |= r.id.as_ref() == Some(want);
                    }
                    self.deliver(message);
                }
                if answered {
                    return Ok(());
                }
            }
            let Some(want) = expect else { return Ok(()) };
            if lock(&self.state).cancelled.remove(want) {
                return Ok(());
            }
            let Some(last) = last_event_id.clone() else {
                if let Some(cause) = broken {
                    // Cut mid-answer with no way to resume: the server died.
                    let message = format!("connection lost while waiting for the answer: {cause}");
                    self.lost(io_error(&self.server, message.clone()));
                    return Err(io_error(&self.server, message));
                }
                return Err(io_error(
                    &self.server,
                    "the response stream ended before the answer",
                ));
            };
            resumptions += 1;
            if resumptions > MAX_RESUMPTIONS {
                return Err(io_error(
                    &self.server,
                    "the response stream ended before the answer and could not be resumed",
                ));
            }
            tokio::time::sleep(retry).await;
            let response = self
                .get(Some(&last))
                .await
                .map_err(|e| self.check_reachable(e))?;
            if !response.status().is_success() || media_type(&response) != "text/event-stream" {
                return Err(unexpected_status(
                    &self.server,
                    "resuming the response stream",
                    response,
                )
                .await);
            }
            events = Box::pin(sse_events(response));
        }
    }

    /// Runs the optional server-to-client GET stream, reopening it (with
    /// `Last-Event-ID`) when the server ends it.
    ///
    /// `opened` is told once the first GET has an answer (a stream, a
    /// refusal or an error). Servers drop messages that are not tied to a
    /// request while no GET stream is open, so the handshake waits for it
    /// before the first request goes out.
    async fn run_get_stream(self: Arc<Self>, mut opened: Option<oneshot::Sender<()>>) {
        let mut last_event_id: Option<String> = None;
        let mut retry = DEFAULT_RETRY;
        let mut failures = 0;
        // Whether a stream was open before: only then does a gateway's
        // refusal say the server went away.
        let mut reopening = false;
        loop {
            let answer = self.get(last_event_id.as_deref()).await;
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            // A failed attempt, and whether it says the server is gone.
            let attempt = match answer {
                Ok(response) if reopening && is_gateway_failure(response.status()) => {
                    // The stream was open and a gateway in front of the
                    // server now says it cannot reach it: a dead server, as
                    // surely as a refused connection is.
                    let error =
                        unexpected_status(&self.server, "reopening the server's stream", response)
                            .await;
                    Err((true, error))
                }
                Ok(response) => Ok(response),
                Err(e) => Err((e.is_unreachable(), e)),
            };
            let response = match attempt {
                Ok(response) => response,
                Err((gone, error)) => {
                    tracing::debug!(server = %self.server, %error, "GET stream failed");
                    failures += 1;
                    if failures >= MAX_GET_FAILURES {
                        // Gone several times in a row: the session ends.
                        if gone {
                            self.lost(self.connection_lost(&error));
                        }
                        return;
                    }
                    tokio::time::sleep(retry).await;
                    continue;
                }
            };
            let status = response.status();
            if !status.is_success() || media_type(&response) != "text/event-stream" {
                // 405: the server offers no GET stream; anything else: it
                // does not want one now. Server messages then come on POSTs.
                tracing::debug!(server = %self.server, %status, "no GET stream");
                return;
            }
            reopening = true;
            let mut events = Box::pin(sse_events(response));
            let mut got_any = false;
            while let Some(item) = events.next().await {
                let event = match item {
                    Ok(SseItem::Event(event)) => event,
                    Ok(SseItem::TooLarge { max, answers }) => {
                        // The stream goes on past the skipped event; the
                        // requests it answered fail now.
                        got_any = true;
                        tracing::warn!(server = %self.server, max, "skipping an SSE event past the size cap");
                        too_large_answers(&self.server, max, answers).for_each(|m| self.deliver(m));
                        continue;
                    }
                    Err(_) => break,
                };
                got_any = true;
                if !event.id.is_empty() {
                    last_event_id = Some(event.id.clone());
                }
                if let Some(delay) = event.retry {
                    retry = delay.min(MAX_RETRY);
                }
                if is_message_event(&event) {
                    for message in self.inbox.decode(event.data.as_bytes(), "SSE event") {
                        self.deliver(message);
                    }
                }
            }
            failures = if got_any { 0 } else { failures + 1 };
            if failures >= MAX_GET_FAILURES {
                return;
            }
            tokio::time::sleep(retry).await;
        }
    }

    /// After a 404 for `expired`: initializes a new session with the same
    /// `initialize` request, then reopens the GET stream.
    async fn reinitialize(self: &Arc<Self>, expired: Option<String>) -> Result<(), TransportError> {
        let _guard = self.reinit.lock().await;
        let (init, initialized) = {
            let mut state = lock(&self.state);
            if state.session_id != expired {
                // Another task already re-initialized.
                return Ok(());
            }
            state.session_id = None;
            (state.initialize.clone(), state.initialized.clone())
        };
        let Some(init) = init else {
            return Err(io_error(
                &self.server,
                "session expired (HTTP 404) before initialize",
            ));
        };
        let response = self
            .post(
                &encode(&JsonRpcMessage::Request(init.clone())).into(),
                false,
            )
            .await?;
        if !response.status().is_success() {
            return Err(unexpected_status(
                &self.server,
                "re-initializing after the session expired",
                response,
            )
            .await);
        }
        // Read the new initialize answer here: the session already has one.
        let messages = read_all(self, response).await?;
        let mut ok = false;
        for message in messages {
            match message {
                JsonRpcMessage::Response(r) if r.id.as_ref() == Some(&init.id) => {
                    if let Err(e) = r.outcome {
                        return Err(io_error(
                            &self.server,
                            format!("re-initializing failed: {}", e.message),
                        ));
                    }
                    ok = true;
                }
                other => self.deliver(other),
            }
        }
        if !ok {
            return Err(io_error(
                &self.server,
                "re-initializing failed: no answer to initialize",
            ));
        }
        if let Some(note) = initialized {
            let response = self
                .post(&encode(&JsonRpcMessage::Notification(note)).into(), false)
                .await?;
            if !response.status().is_success() {
                return Err(unexpected_status(
                    &self.server,
                    "re-initializing after the session expired",
                    response,
                )
                .await);
            }
            let this = Arc::clone(self);
            let (opened, wait) = oneshot::channel();
            self.spawn(this.run_get_stream(Some(opened)));
            wait_for_get_stream(wait).await;
        }
        Ok(())
    }
}

/// Every message of a JSON or SSE body, read to its end.
/// How long the handshake waits for the server to answer the GET that opens
/// its stream; a server that does not answer by then gets requests anyway.
const GET_STREAM_OPEN_WAIT: Duration = Duration::from_secs(5);

async fn wait_for_get_stream(opened: oneshot::Receiver<()>) {
    let _ = tokio::time::timeout(GET_STREAM_OPEN_WAIT, opened).await;
}

async fn read_all(
    shared: &Arc<Shared>,
    response: reqwest::Response,
) -> Result<Vec<JsonRpcMessage>, TransportError> {
    if media_type(&response) == "text/event-stream" {
        let mut out = Vec::new();
        let mut events = Box::pin(sse_events(response));
        while let Some(item) = events.next().await {
            let event = match item {
                Ok(SseItem::Event(event)) => event,
                Ok(SseItem::TooLarge { max, .. }) => {
                    return Err(TransportError::new(
                        &*shared.server,
                        TransportErrorKind::MessageTooLarge { max },
                    ));
                }
                Err(e) => return Err(io_error(&shared.server, format!("SSE stream broke: {e}"))),
            };
            if is_message_event(&event) {
                let messages = decode_payload(event.data.as_bytes())
                    .map_err(|u| io_error(&shared.server, u.error.to_string()))?;
                let done = messages
                    .iter()
                    .any(|m| matches!(m, JsonRpcMessage::Response(_)));
                out.extend(messages);
                if done {
                    break;
                }
            }
        }
        Ok(out)
    } else {
        let bytes = read_body_capped(&shared.server, response, DEFAULT_MAX_MESSAGE_BYTES).await?;
        decode_payload(String::from_utf8_lossy(&bytes).as_bytes())
            .map_err(|u| io_error(&shared.server, u.error.to_string()))
    }
}

impl ModernRoute for Arc<Shared> {
    fn send_request(
        &self,
        id: &RequestId,
        method: &str,
        params: crate::params::ParamsRef<'_>,
        meta: &RequestMeta,
    ) -> Result<(), ()> {
        self.post_spliced(id, method, params, meta)
    }

    fn route_answers(&self, route: Weak<dyn AnswerRoute>) {
        Shared::route_answers(self, route);
    }
}

#[async_trait]
impl Transport for StreamableHttpTransport {
    async fn send(&mut self, message: JsonRpcMessage) -> Result<(), TransportError> {
        if self.inbox.is_closed() {
            return Err(TransportError::closed(&*self.shared.server));
        }
        let shared = Arc::clone(&self.shared);
        // A modern request is encoded by its own task, once per attempt
        // under that attempt's id.
        let message = match message {
            JsonRpcMessage::Request(request) if request.method != "initialize" => {
                if let Some(version) = modern::modern_version(&request) {
                    let prepared = modern::Prepared::named(&request, version, &shared.tool_headers);
                    return shared
                        .post_modern(&request.id, prepared, version)
                        .map_err(|()| TransportError::closed(&*shared.server));
                }
                JsonRpcMessage::Request(request)
            }
            message => message,
        };
        // Shared by every send of the body (a retry after a 401 or a
        // re-initialisation) without a copy.
        let body = Bytes::from(encode(&message));
        match message {
            JsonRpcMessage::Request(request) if request.method == "initialize" => {
                lock(&shared.state).initialize = Some(request.clone());
                let response = shared.post(&body, false).await?;
                if !response.status().is_success() {
                    return Err(unexpected_status(&shared.server, "initialize", response).await);
                }
                let task = Arc::clone(&shared);
                shared.spawn(async move {
                    if let Err(e) = task.read_answer(response, Some(&request.id)).await {
                        task.deliver(synthetic_error(request.id, e.to_string()));
                    }
                });
                Ok(())
            }
            JsonRpcMessage::Request(request) => {
                let task = Arc::clone(&shared);
                shared.spawn(async move {
                    let result = match task.post(&body, true).await {
                        Ok(response) => task.read_answer(response, Some(&request.id)).await,
                        Err(e) => Err(task.check_reachable(e)),
                    };
                    if let Err(e) = result {
                        task.deliver(synthetic_error(request.id, e.to_string()));
                    }
                });
                Ok(())
            }
            JsonRpcMessage::Notification(note) => {
                let cancelled = (note.method == "notifications/cancelled")
                    .then(|| note.params.as_ref()?.get("requestId").cloned())
                    .flatten()
                    .and_then(|id| serde_json::from_value::<RequestId>(id).ok());
                if let Some(id) = cancelled {
                    let mut state = lock(&shared.state);
                    if let Some(stream) = state.modern_streams.remove(&id) {
                        // At 2026-07-28 closing the stream is the
                        // cancellation; nothing is posted.
                        stream.abort();
                        return Ok(());
                    }
                    if state.modern_version.is_some() && state.initialize.is_none() {
                        // A modern request that already ended: nothing
                        // to close, and no notification is expected.
                        return Ok(());
                    }
                    state.cancelled.insert(id);
                }
                let initialized = note.method == "notifications/initialized";
                if initialized {
                    lock(&shared.state).initialized = Some(note.clone());
                }
                let post = async {
                    let response = shared.post(&body, true).await?;
                    self.finish_one_way(response, "notification").await
                };
                shared.one_way("POST of a notification", post).await?;
                if initialized {
                    let task = Arc::clone(&shared);
                    let (opened, wait) = oneshot::channel();
                    shared.spawn(task.run_get_stream(Some(opened)));
                    wait_for_get_stream(wait).await;
                }
                Ok(())
            }
            JsonRpcMessage::Response(_) => {
                let post = async {
                    let response = shared.post(&body, true).await?;
                    self.finish_one_way(response, "response").await
                };
                shared.one_way("POST of a response", post).await
            }
        }
    }

    async fn receive(
        &mut self,
        out: &mut Vec<crate::message::Incoming>,
    ) -> Result<bool, TransportError> {
        self.inbox.receive(out).await
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        if self.inbox.is_closed() {
            return Ok(());
        }
        self.inbox.close();
        let session = lock(&self.shared.state).session_id.clone();
        if let Some(session) = session {
            let shared = &self.shared;
            let delete = shared
                .headers
                .send(|| shared.session_headers(shared.client.delete(shared.url.clone())));
            let result = shared.one_way("DELETE", delete).await;
            match result {
                Ok(response) if response.status().is_success() => {}
                // 405: the server does not let clients end sessions.
                Ok(response) if response.status() == reqwest::StatusCode::METHOD_NOT_ALLOWED => {}
                Ok(response) => {
                    tracing::debug!(server = %shared.server, status = %response.status(), session = %session, "DELETE refused");
                }
                Err(e) => tracing::debug!(server = %shared.server, error = %e, "DELETE failed"),
            }
        }
        Ok(())
    }

    fn info(&self) -> TransportInfo {
        TransportInfo::new(self.shared.kind)
            .with_tool_headers(self.shared.tool_headers.clone())
            .with_modern_sender(ModernSender::new(Arc::new(Arc::clone(&self.shared))))
            .marking_own_failures()
            .with_session_id(SessionIdReader::new({
                let shared = Arc::downgrade(&self.shared);
                move || {
                    shared
                        .upgrade()
                        .and_then(|shared| lock(&shared.state).session_id.clone())
                }
            }))
    }
}

impl StreamableHttpTransport {
    /// Checks the answer to a notification or response POST; a body, if the
    /// server sent one anyway, is read in the background.
    async fn finish_one_way(
        &self,
        response: reqwest::Response,
        what: &str,
    ) -> Result<(), TransportError> {
        let status = response.status();
        if !status.is_success() {
            return Err(unexpected_status(
                &self.shared.server,
                &format!("POST of a {what}"),
                response,
            )
            .await);
        }
        if status == reqwest::StatusCode::OK && response.content_length() != Some(0) {
            let task = Arc::clone(&self.shared);
            self.shared.spawn(async move {
                if let Err(e) = task.read_answer(response, None).await {
                    tracing::debug!(server = %task.server, error = %e, "ignoring the body of a one-way POST");
                }
            });
        }
        Ok(())
    }
}
