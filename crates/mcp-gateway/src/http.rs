//! The gateway over streamable HTTP, at one path (`/mcp`).
//!
//! Every request passes the same gate first ([`Gate`]): the `Host` must
//! be one the listener answers for (loopback names when it binds
//! loopback: the DNS-rebinding rule), an `Origin`, when sent, must be an
//! allowed one (loopback origins by default), a bearer token must match
//! when one is set (compared in constant time), and the body must fit the
//! cap. Then:
//!
//! - A 2026-07-28 request (its revision in `_meta`) is answered on its
//!   own, with no session: the `MCP-Protocol-Version` and `Mcp-Method`
//!   headers must agree with the body, and the answer is JSON, or an
//!   event stream when something (progress) comes before it;
//!   `subscriptions/listen` stays open as an event stream. Nothing is
//!   kept between requests, so replicas behind a load balancer need no
//!   affinity.
//! - Older revisions open a session with `initialize` (`Mcp-Session-Id`);
//!   its notices (list changes) go on the `GET` stream, `DELETE` ends it.
//!   A session lives in one process: replicas need affinity on that
//!   header.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Method, Request as HttpRequest, Response as HttpResponse, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_transport::error_codes::{
    INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
};
use mcp_transport::serving;
use mcp_transport::wire::{Codec, Decoded};
use mcp_transport::{ErrorObject, JsonRpcMessage, RequestId};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::downstream::{Downstream, Handled, News};
use crate::gateway::Gateway;

/// Default cap on one request body.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Default cap on connections served at once; more wait to be accepted.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// Default cap on open sessions of older-revision clients.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// Default time an older-revision session lives unused (no request, no
/// open stream) before it is ended.
pub const DEFAULT_SESSION_IDLE_TTL: Duration = Duration::from_secs(30 * 60);

/// Messages queued for one response stream, at most.
const REPLY_CAPACITY: usize = 64;

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// How the HTTP side is guarded.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The path served (`/mcp`).
    pub path: String,
    /// `Origin` values accepted besides loopback ones.
    pub allowed_origins: Vec<String>,
    /// `Host` names accepted besides loopback ones (a listener bound to
    /// a non-loopback address adds its own).
    pub allowed_hosts: Vec<String>,
    /// The bearer token every request must carry, when set.
    pub bearer_token: Option<String>,
    /// Cap on one request body.
    pub max_body_bytes: usize,
    /// Cap on connections served at once: more wait in the listener's
    /// queue, so memory and file descriptors stay bounded whatever a
    /// client opens.
    pub max_connections: usize,
    /// Cap on open sessions of older-revision clients: an `initialize`
    /// past it is refused (503) until one ends.
    pub max_sessions: usize,
    /// A session unused this long is ended (clients rarely send DELETE).
    pub session_idle_ttl: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            path: "/mcp".into(),
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            bearer_token: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_ttl: DEFAULT_SESSION_IDLE_TTL,
        }
    }
}

impl HttpOptions {
    /// The same options, requiring `token` as a bearer token.
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// The same options, also accepting `origin` (`https://app.example`).
    pub fn with_allowed_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// The same options, also answering for `host` (a name, no port).
    pub fn with_allowed_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// The same options, serving at most `max` connections at once.
    pub fn with_max_connections(mut self, max: usize) -> Self {
        self.max_connections = max;
        self
    }

    /// The same options, keeping at most `max` sessions, each ended after
    /// `idle_ttl` unused.
    pub fn with_sessions(mut self, max: usize, idle_ttl: Duration) -> Self {
        self.max_sessions = max;
        self.session_idle_ttl = idle_ttl;
        self
    }

    /// The same options, capping a request body at `max_bytes`.
    pub fn with_max_body_bytes(mut self, max_bytes: usize) -> Self {
        self.max_body_bytes = max_bytes;
        self
    }
}

/// What every connection shares.
struct Shared {
    gateway: Arc<Gateway>,
    options: HttpOptions,
    codec: Codec,
    /// Sessions of clients at older revisions, by `Mcp-Session-Id`.
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

/// One older-revision client's session.
struct Session {
    downstream: Downstream,
    /// Ends the task announcing catalog changes to it.
    announcer: tokio::task::AbortHandle,
    /// When a request last used it.
    last_used: Mutex<Instant>,
}

impl Session {
    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Unused for `ttl`: no request since, no notice stream open.
    fn is_idle(&self, now: Instant, ttl: Duration) -> bool {
        let last = *self.last_used.lock().unwrap_or_else(|e| e.into_inner());
        now.saturating_duration_since(last) >= ttl && !self.downstream.has_open_notices()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.announcer.abort();
    }
}

/// Serves `gateway` on `listener` until the future `until` resolves;
/// connections then in progress are dropped.
pub async fn serve_http(
    gateway: Arc<Gateway>,
    listener: TcpListener,
    options: HttpOptions,
    until: impl std::future::Future<Output = ()>,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(options.max_connections.max(1)));
    let shared = Arc::new(Shared {
        gateway,
        options,
        codec: Codec::new(mcp_transport::wire::DEFAULT_MAX_MESSAGE_BYTES),
        sessions: Mutex::new(HashMap::new()),
    });
    let mut connections = tokio::task::JoinSet::new();
    let sweeper = tokio::spawn(sweep_sessions(Arc::downgrade(&shared)));
    let _sweeper = AbortOnDrop(sweeper.abort_handle());
    tokio::pin!(until);
    loop {
        // A connection is accepted only with a free slot: the rest wait
        // in the listener's queue.
        let slot = tokio::select! {
            () = &mut until => break,
            slot = Arc::clone(&slots).acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        tokio::select! {
            () = &mut until => break,
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(error) => {
                        // Out of descriptors, most often: wait for some to
                        // close instead of spinning.
                        tracing::warn!(%error, "accepting a connection failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let shared = Arc::clone(&shared);
                connections.spawn(async move {
                    let _slot = slot;
                    let service = hyper::service::service_fn(move |request| {
                        let shared = Arc::clone(&shared);
                        async move { Ok::<_, Infallible>(shared.serve(request).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .max_buf_size(64 * 1024)
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.abort_all();
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Ends the sessions unused for the idle TTL, checking a few times per
/// TTL, for as long as the server lives.
async fn sweep_sessions(shared: std::sync::Weak<Shared>) {
    loop {
        let Some(ttl) = shared
            .upgrade()
            .map(|shared| shared.options.session_idle_ttl)
        else {
            return;
        };
        tokio::time::sleep((ttl / 4).max(Duration::from_millis(10))).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let now = Instant::now();
        shared
            .lock()
            .retain(|_, session| !session.is_idle(now, ttl));
    }
}

/// Whether `addr` is a loopback address (the default bind).
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

impl Shared {
    async fn serve(self: Arc<Self>, request: HttpRequest<Incoming>) -> HttpResponse<Body> {
        if request.uri().path() != self.options.path {
            return plain(StatusCode::NOT_FOUND, "not found");
        }
        if let Some(refusal) = self.gate(request.headers()) {
            return refusal;
        }
        match *request.method() {
            Method::POST => self.post(request).await,
            Method::GET => self.get(request.headers()),
            Method::DELETE => self.delete(request.headers()),
            _ => plain(StatusCode::METHOD_NOT_ALLOWED, "POST, GET or DELETE"),
        }
    }

    /// The checks every request passes before its body is read: the
    /// refusal of one that fails them.
    fn gate(&self, headers: &HeaderMap) -> Option<HttpResponse<Body>> {
        let host = header(headers, "host").unwrap_or("");
        if !self.host_allowed(host) {
            return Some(refused(
                StatusCode::FORBIDDEN,
                None,
                INVALID_REQUEST,
                "this Host is not served (DNS rebinding protection)",
            ));
        }
        if let Some(origin) = header(headers, "origin")
            && !self.origin_allowed(origin)
        {
            return Some(refused(
                StatusCode::FORBIDDEN,
                None,
                INVALID_REQUEST,
                "this Origin is not allowed",
            ));
        }
        if let Some(token) = &self.options.bearer_token {
            let given = header(headers, "authorization")
                .and_then(|value| value.strip_prefix("Bearer "))
                .unwrap_or("");
            if !bool::from(given.as_bytes().ct_eq(token.as_bytes())) {
                let mut response = refused(
                    StatusCode::UNAUTHORIZED,
                    None,
                    INVALID_REQUEST,
                    "a valid bearer token is required",
                );
                response
                    .headers_mut()
                    .insert("www-authenticate", HeaderValue::from_static("Bearer"));
                return Some(response);
            }
        }
        None
    }

    fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host);
        is_loopback_name(name)
            || self
                .options
                .allowed_hosts
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(name))
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let loopback = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|rest| is_loopback_name(host_name(rest)));
        loopback
            || self
                .options
                .allowed_origins
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(origin))
    }

    async fn post(self: Arc<Self>, request: HttpRequest<Incoming>) -> HttpResponse<Body> {
        let (parts, body) = request.into_parts();
        let headers = parts.headers;
        let json = header(&headers, "content-type")
            .is_some_and(|value| value.starts_with("application/json"));
        if !json {
            return refused(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                None,
                INVALID_REQUEST,
                "Content-Type must be application/json",
            );
        }
        let body = match Limited::new(body, self.options.max_body_bytes)
            .collect()
            .await
        {
            Ok(body) => body.to_bytes(),
            Err(_) => {
                return refused(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    None,
                    INVALID_REQUEST,
                    &format!(
                        "the request body is larger than {} bytes",
                        self.options.max_body_bytes
                    ),
                );
            }
        };
        let messages: Vec<JsonRpcMessage> = match self.codec.decode(&body) {
            Ok(Decoded::Single(message)) => vec![message],
            Ok(Decoded::Batch(messages)) => messages,
            Err(error) => {
                return refused(
                    StatusCode::BAD_REQUEST,
                    None,
                    PARSE_ERROR,
                    &error.to_string(),
                );
            }
        };
        let Ok([message]) = <[JsonRpcMessage; 1]>::try_from(messages) else {
            return refused(
                StatusCode::BAD_REQUEST,
                None,
                INVALID_REQUEST,
                "one JSON-RPC message per request",
            );
        };
        let modern = match &message {
            JsonRpcMessage::Request(request) => {
                if let Some(error) = serving::header_contradicts_meta(
                    request.params.as_ref(),
                    header(&headers, "mcp-protocol-version"),
                ) {
                    return answer_error(StatusCode::BAD_REQUEST, Some(request.id.clone()), error);
                }
                let revision = serving::request_revision(request.params.as_ref());
                match revision {
                    Err(error) => {
                        return answer_error(
                            StatusCode::BAD_REQUEST,
                            Some(request.id.clone()),
                            error,
                        );
                    }
                    Ok(serving::Revision::Modern(version)) => Some(version),
                    Ok(serving::Revision::Session) => None,
                }
            }
            _ => None,
        };
        match modern {
            Some(version) => self.modern(message, version, &headers).await,
            None => self.legacy(message, &headers).await,
        }
    }

    /// A 2026-07-28 request, answered on its own.
    async fn modern(
        self: Arc<Self>,
        message: JsonRpcMessage,
        version: &'static str,
        headers: &HeaderMap,
    ) -> HttpResponse<Body> {
        let JsonRpcMessage::Request(request) = &message else {
            return accepted();
        };
        let id = Some(request.id.clone());
        let tool_headers = match request.method.as_str() {
            "tools/call" => self.gateway.param_headers(request.params.as_ref()).await,
            _ => None,
        };
        if let Some(problem) = serving::check_modern_request(
            request,
            version,
            |name| header(headers, name),
            tool_headers.as_ref(),
        ) {
            return answer_error(StatusCode::BAD_REQUEST, id, problem);
        }
        let downstream = Downstream::new(Arc::clone(&self.gateway)).over("tcp");
        let (reply, replies) = mpsc::channel(REPLY_CAPACITY);
        let request_id = request.id.clone();
        match downstream.handle(message, &reply).await {
            Handled::Nothing => accepted(),
            Handled::Answering => answer(replies, request_id, None, Some(downstream)).await,
            Handled::Listening => {
                // The catalog's changes reach this listen until its client
                // leaves; nothing else is kept.
                let mut news = News::new(&self.gateway);
                let listener = tokio::spawn(async move {
                    while let Some(piece) = news.next().await {
                        downstream.tell(piece).await;
                        if reply.is_closed() {
                            return;
                        }
                    }
                });
                stream(replies, None, Some(listener.abort_handle()))
            }
        }
    }

    /// A request, notification or response of an older-revision session.
    async fn legacy(
        self: Arc<Self>,
        message: JsonRpcMessage,
        headers: &HeaderMap,
    ) -> HttpResponse<Body> {
        let initialize = message.method() == Some("initialize");
        let session_id = header(headers, "mcp-session-id").map(str::to_owned);
        let (session, new_id) = match (&session_id, initialize) {
            (_, true) => {
                if self.lock().len() >= self.options.max_sessions {
                    let id = match &message {
                        JsonRpcMessage::Request(request) => Some(request.id.clone()),
                        _ => None,
                    };
                    return refused(
                        StatusCode::SERVICE_UNAVAILABLE,
                        id,
                        INTERNAL_ERROR,
                        "too many open sessions; try again when one has ended",
                    );
                }
                let id = new_session_id();
                let session = self.open_session(&id);
                (session, Some(id))
            }
            (Some(id), false) => match self.session(id) {
                Some(session) => {
                    session.touch();
                    (session, None)
                }
                None => {
                    return refused(
                        StatusCode::NOT_FOUND,
                        None,
                        INVALID_REQUEST,
                        "no such session",
                    );
                }
            },
            (None, false) => {
                let id = match &message {
                    JsonRpcMessage::Request(request) => Some(request.id.clone()),
                    _ => None,
                };
                let modern_header = header(headers, "mcp-protocol-version")
                    .is_some_and(mcp_transport::types::is_modern);
                let modern_method = message
                    .method()
                    .is_some_and(|method| serving::MODERN_ONLY.contains(&method));
                if modern_header || modern_method {
                    return answer_error(StatusCode::BAD_REQUEST, id, serving::missing_revision());
                }
                return refused(
                    StatusCode::BAD_REQUEST,
                    id,
                    INVALID_REQUEST,
                    "no Mcp-Session-Id: send initialize first, or name the revision in _meta",
                );
            }
        };
        let request_id = match &message {
            JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let (reply, replies) = mpsc::channel(REPLY_CAPACITY);
        let handled = session.downstream.handle(message, &reply).await;
        if let Some(id) = &new_id {
            self.lock().insert(id.clone(), Arc::clone(&session));
        }
        match (handled, request_id) {
            (Handled::Answering, Some(request_id)) => {
                answer(replies, request_id, new_id.as_deref(), None).await
            }
            _ => accepted(),
        }
    }

    fn open_session(&self, id: &str) -> Arc<Session> {
        let downstream = Downstream::new(Arc::clone(&self.gateway))
            .over("tcp")
            .in_session(id);
        Arc::new_cyclic(|weak: &std::sync::Weak<Session>| {
            let weak = weak.clone();
            let mut news = News::new(&self.gateway);
            let announcer = tokio::spawn(async move {
                while let Some(piece) = news.next().await {
                    let Some(session) = weak.upgrade() else {
                        return;
                    };
                    session.downstream.tell(piece).await;
                }
            });
            Session {
                downstream,
                announcer: announcer.abort_handle(),
                last_used: Mutex::new(Instant::now()),
            }
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().get(id).cloned()
    }

    /// The session's notice stream.
    fn get(&self, headers: &HeaderMap) -> HttpResponse<Body> {
        let Some(id) = header(headers, "mcp-session-id") else {
            return plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "a GET stream belongs to a session (Mcp-Session-Id)",
            );
        };
        let Some(session) = self.session(id) else {
            return refused(
                StatusCode::NOT_FOUND,
                None,
                INVALID_REQUEST,
                "no such session",
            );
        };
        let (notices, receiver) = mpsc::channel(REPLY_CAPACITY);
        session.downstream.set_notices(Some(notices));
        stream(receiver, None, None)
    }

    fn delete(&self, headers: &HeaderMap) -> HttpResponse<Body> {
        let removed = header(headers, "mcp-session-id").and_then(|id| self.lock().remove(id));
        match removed {
            Some(_) => plain(StatusCode::OK, ""),
            None => refused(
                StatusCode::NOT_FOUND,
                None,
                INVALID_REQUEST,
                "no such session",
            ),
        }
    }
}

/// Waits for the first message on `replies`: the answer alone comes back
/// as JSON; anything before it (progress) turns the response into an
/// event stream that ends with the answer. A 2026-07-28 request's
/// `downstream` (its only state) lives until the answer is sent: dropping
/// it would cancel the request.
async fn answer(
    mut replies: mpsc::Receiver<JsonRpcMessage>,
    id: RequestId,
    session: Option<&str>,
    downstream: Option<Downstream>,
) -> HttpResponse<Body> {
    let modern = downstream.is_some();
    let Some(first) = replies.recv().await else {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, "the request was dropped");
    };
    if is_answer(&first, &id) {
        let status = match (&first, modern) {
            (JsonRpcMessage::Response(response), true) => match &response.outcome {
                Ok(_) => StatusCode::OK,
                Err(error) => modern_status(error.code),
            },
            _ => StatusCode::OK,
        };
        let mut response = json_response(status, &first);
        if let Some(session) = session
            && let Ok(value) = HeaderValue::from_str(session)
        {
            response.headers_mut().insert("mcp-session-id", value);
        }
        return response;
    }
    let (sender, receiver) = mpsc::channel(REPLY_CAPACITY);
    let _ = sender.try_send(first);
    tokio::spawn(async move {
        let _downstream = downstream;
        while let Some(message) = replies.recv().await {
            let done = is_answer(&message, &id);
            if sender.send(message).await.is_err() || done {
                return;
            }
        }
    });
    stream(receiver, session, None)
}

/// Whether `message` is the answer to request `id`.
fn is_answer(message: &JsonRpcMessage, id: &RequestId) -> bool {
    matches!(message, JsonRpcMessage::Response(response) if response.id.as_ref() == Some(id))
}

/// The HTTP status a 2026-07-28 error answer goes with.
fn modern_status(code: i64) -> StatusCode {
    match code {
        METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        INVALID_PARAMS => StatusCode::BAD_REQUEST,
        code if serving::is_request_refusal(code) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// An event stream of `messages`, one `message` event each; `cleanup` is
/// aborted when the stream ends (the client left).
fn stream(
    messages: mpsc::Receiver<JsonRpcMessage>,
    session: Option<&str>,
    cleanup: Option<tokio::task::AbortHandle>,
) -> HttpResponse<Body> {
    struct Guard(Option<tokio::task::AbortHandle>);
    impl Drop for Guard {
        fn drop(&mut self) {
            if let Some(task) = &self.0 {
                task.abort();
            }
        }
    }
    let codec = Codec::default();
    let events = futures::stream::unfold(
        (messages, Guard(cleanup), codec),
        |(mut messages, guard, codec)| async move {
            let message = messages.recv().await?;
            let mut event = b"event: message\ndata: ".to_vec();
            codec.encode_into(&message, &mut event);
            event.extend_from_slice(b"\n\n");
            Some((
                Ok::<_, Infallible>(Frame::data(Bytes::from(event))),
                (messages, guard, codec),
            ))
        },
    );
    let mut response = HttpResponse::new(StreamBody::new(events).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    if let Some(session) = session
        && let Ok(value) = HeaderValue::from_str(session)
    {
        headers.insert("mcp-session-id", value);
    }
    response
}

fn json_response(status: StatusCode, message: &JsonRpcMessage) -> HttpResponse<Body> {
    let body = Codec::default().encode(message);
    let mut response = HttpResponse::new(Full::new(Bytes::from(body)).boxed_unsync());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    response
}

fn answer_error(
    status: StatusCode,
    id: Option<RequestId>,
    error: ErrorObject,
) -> HttpResponse<Body> {
    json_response(status, &JsonRpcMessage::error(id, error))
}

fn refused(
    status: StatusCode,
    id: Option<RequestId>,
    code: i64,
    message: &str,
) -> HttpResponse<Body> {
    answer_error(status, id, ErrorObject::new(code, message))
}

fn accepted() -> HttpResponse<Body> {
    plain(StatusCode::ACCEPTED, "")
}

fn plain(status: StatusCode, text: &'static str) -> HttpResponse<Body> {
    let mut response =
        HttpResponse::new(Full::new(Bytes::from_static(text.as_bytes())).boxed_unsync());
    *response.status_mut() = status;
    response
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// The name part of a `Host` value or an origin's authority (no port,
/// brackets kept for IPv6).
fn host_name(authority: &str) -> &str {
    let authority = authority.split('/').next().unwrap_or("");
    if authority.starts_with('[') {
        return authority.split_inclusive(']').next().unwrap_or(authority);
    }
    authority.split(':').next().unwrap_or(authority)
}

fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1" || name == "[::1]"
}

/// A session id no one can guess: 128 random bits, hex.
fn new_session_id() -> String {
    use rand::RngCore as _;
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins_are_loopback_by_default() {
        for (host, name) in [
            ("localhost:8080", "localhost"),
            ("127.0.0.1", "127.0.0.1"),
            ("[::1]:3000", "[::1]"),
            ("evil.example.com:80", "evil.example.com"),
        ] {
            assert_eq!(host_name(host), name);
        }
        assert!(is_loopback_name("LOCALHOST"));
        assert!(!is_loopback_name("localhost.evil.example"));
        assert!(!is_loopback_name("127.0.0.2"));
    }
}
