//! Loopback servers that serve the example server core ([`ExampleServer`])
//! over the network kinds, and their [`Harness`]es for the behaviour suite:
//!
//! - [`serve_streamable_http`]: streamable HTTP on `/mcp`: for
//!   `initialize`-based clients sessions, SSE answers, the GET stream and
//!   DELETE; for 2026-07-28 requests (recognised by their `_meta`) no
//!   session, one JSON or SSE answer per POST, a modern error as
//!   `400`/`404` with its JSON-RPC body;
//! - [`serve_legacy_sse`]: `GET /sse` + `POST /message?sessionId=`;
//! - [`serve_ws`]: WebSocket on `/ws` with the `mcp` subprotocol;
//! - [`serve_proxy`]: a claude.ai-style proxy that checks the server id and
//!   the bearer token, then forwards to a streamable HTTP upstream.
//!
//! Each listens on `127.0.0.1:0` and owns every connection it accepted, so
//! a server "crash" (the `crash` tool) or a drop kills them all at once,
//! the way a dying process would.

// Early-return HTTP responses travel as `Err`; their size is irrelevant in
// a test server.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request as HttpRequest, Response as HttpResponse, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_config::{ProxyConfig, RemoteConfig, TransportConfig};
use mcp_transport::error_codes;
use mcp_transport::wire::Codec;
use mcp_transport::{
    ClientSession, ConnectOptions, ErrorObject, JsonRpcMessage, RequestId, Response,
    SessionOptions, TransportError,
};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::harness::{Harness, entry, server_name, timeouts_of};
use crate::server::{Era, ExampleServer, Exit, ServerOptions, modern};

type Body = UnsyncBoxBody<Bytes, std::io::Error>;
type BoxFuture = Pin<Box<dyn Future<Output = HttpResponse<Body>> + Send>>;
type Handler = Arc<dyn Fn(HttpRequest<Incoming>) -> BoxFuture + Send + Sync>;

/// A running loopback server. Dropping it (or [`Loopback::kill`]) closes the
/// listener and every connection.
#[derive(Debug)]
pub struct Loopback {
    /// The url clients connect to.
    pub url: String,
    kill: watch::Sender<bool>,
}

impl Loopback {
    /// Stops the server abruptly.
    pub fn kill(&self) {
        let _ = self.kill.send(true);
    }
}

impl Loopback {
    /// Lets the server run until the runtime ends (or it crashes) without
    /// keeping this handle.
    pub fn detach(self) {
        std::mem::forget(self);
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        self.kill();
    }
}

fn full(status: StatusCode, body: impl Into<Bytes>) -> HttpResponse<Body> {
    let mut response = HttpResponse::new(
        Full::new(body.into())
            .map_err(|never: Infallible| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response
}

fn sse_body(rx: mpsc::UnboundedReceiver<Bytes>) -> Body {
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        let chunk = rx.recv().await?;
        Some((Ok::<_, std::io::Error>(Frame::data(chunk)), rx))
    });
    StreamBody::new(stream).boxed_unsync()
}

fn sse_response(rx: mpsc::UnboundedReceiver<Bytes>, session: Option<&str>) -> HttpResponse<Body> {
    let mut response = HttpResponse::new(sse_body(rx));
    response.headers_mut().insert(
        "content-type",
        "text/event-stream".parse().expect("static header"),
    );
    response
        .headers_mut()
        .insert("cache-control", "no-cache".parse().expect("static header"));
    if let Some(session) = session {
        response.headers_mut().insert(
            "mcp-session-id",
            session.parse().expect("session ids are ascii"),
        );
    }
    response
}

fn sse_event(event: &str, data: &str) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {data}\n\n"))
}

fn encode(message: &JsonRpcMessage) -> String {
    String::from_utf8_lossy(&Codec::default().encode(message)).into_owned()
}

async fn read_body(request: HttpRequest<Incoming>) -> Result<Bytes, HttpResponse<Body>> {
    request
        .into_body()
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|e| full(StatusCode::BAD_REQUEST, format!("unreadable body: {e}")))
}

/// Accepts HTTP/1 connections on `listener` until `kill`; every connection
/// dies with the server.
fn serve(listener: TcpListener, handler: Handler, mut kill: watch::Receiver<bool>) {
    tokio::spawn(async move {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let handler = Arc::clone(&handler);
                    connections.spawn(async move {
                        let service = hyper::service::service_fn(move |request| {
                            let handler = Arc::clone(&handler);
                            async move { Ok::<_, Infallible>(handler(request).await) }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
                _ = kill.wait_for(|killed| *killed) => break,
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        connections.abort_all();
    });
}

async fn bind() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let port = listener.local_addr().expect("local address").port();
    (listener, port)
}

/// Starts one connection of `server`; a crash kills the whole loopback
/// server. Returns the channel into the server and the one out of it.
fn start_connection(
    server: &Arc<ExampleServer>,
    kill: &watch::Sender<bool>,
) -> (
    mpsc::UnboundedSender<JsonRpcMessage>,
    mpsc::Receiver<JsonRpcMessage>,
) {
    let (to_server, from_client) = mpsc::unbounded_channel();
    let (to_client, from_server) = mpsc::channel(256);
    let server = Arc::clone(server);
    let kill = kill.clone();
    tokio::spawn(async move {
        let exit = server.run(from_client, to_client).await;
        if exit != Exit::ClientClosed {
            let _ = kill.send(true);
        }
    });
    (to_server, from_server)
}

// ---------------------------------------------------------------- streamable HTTP

/// Where one session's server messages go.
#[derive(Default)]
struct Routes {
    /// Open POST streams: the request they answer, its progress token, the
    /// stream.
    posts: Vec<(RequestId, Option<Value>, mpsc::UnboundedSender<Bytes>)>,
    get: Option<mpsc::UnboundedSender<Bytes>>,
    /// Server messages no stream could take yet.
    backlog: Vec<Bytes>,
}

impl Routes {
    fn route(&mut self, message: &JsonRpcMessage) {
        let event = sse_event("message", &encode(message));
        match message {
            JsonRpcMessage::Response(response) => {
                if let Some(at) = self
                    .posts
                    .iter()
                    .position(|(id, _, _)| Some(id) == response.id.as_ref())
                {
                    let (_, _, stream) = self.posts.remove(at);
                    let _ = stream.send(event);
                    return;
                }
            }
            JsonRpcMessage::Notification(note) if note.method == "notifications/progress" => {
                let token = note.params.as_ref().and_then(|p| p.get("progressToken"));
                if let Some((_, _, stream)) =
                    self.posts.iter().find(|(_, t, _)| t.as_ref() == token)
                {
                    let _ = stream.send(event);
                    return;
                }
            }
            _ => {}
        }
        self.push(event);
    }

    /// A message not tied to one request: the GET stream, else the newest
    /// POST stream, else later.
    fn push(&mut self, event: Bytes) {
        self.get.take_if(|get| get.is_closed());
        self.posts.retain(|(_, _, stream)| !stream.is_closed());
        if let Some(get) = &self.get {
            let _ = get.send(event);
        } else if let Some((_, _, stream)) = self.posts.last() {
            let _ = stream.send(event);
        } else {
            self.backlog.push(event);
        }
    }

    fn flush_backlog(&mut self) {
        for event in std::mem::take(&mut self.backlog) {
            self.push(event);
        }
    }
}

struct HttpSession {
    to_server: mpsc::UnboundedSender<JsonRpcMessage>,
    routes: Arc<Mutex<Routes>>,
}

struct HttpApp {
    server: Arc<ExampleServer>,
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    /// Modern requests being answered, each on its own connection: where a
    /// session-less `notifications/cancelled` goes.
    modern: Mutex<HashMap<RequestId, mpsc::UnboundedSender<JsonRpcMessage>>>,
    next_session: AtomicU64,
    kill: watch::Sender<bool>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl HttpApp {
    fn session_of(
        &self,
        request: &HttpRequest<Incoming>,
    ) -> Result<Option<(String, Arc<HttpSession>)>, HttpResponse<Body>> {
        let Some(id) = request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        else {
            return Ok(None);
        };
        match lock(&self.sessions).get(id) {
            Some(session) => Ok(Some((id.to_owned(), Arc::clone(session)))),
            None => Err(full(StatusCode::NOT_FOUND, "unknown session")),
        }
    }

    fn new_session(&self) -> (String, Arc<HttpSession>) {
        let id = format!(
            "session-{}",
            self.next_session.fetch_add(1, Ordering::SeqCst) + 1
        );
        let (to_server, mut from_server) = start_connection(&self.server, &self.kill);
        let routes = Arc::new(Mutex::new(Routes::default()));
        let session = Arc::new(HttpSession {
            to_server,
            routes: Arc::clone(&routes),
        });
        tokio::spawn(async move {
            while let Some(message) = from_server.recv().await {
                lock(&routes).route(&message);
            }
            // The server ended this connection: close every stream.
            let mut routes = lock(&routes);
            routes.posts.clear();
            routes.get = None;
        });
        lock(&self.sessions).insert(id.clone(), Arc::clone(&session));
        (id, session)
    }

    async fn handle(self: Arc<Self>, request: HttpRequest<Incoming>) -> HttpResponse<Body> {
        if request.uri().path() != "/mcp" {
            return full(StatusCode::NOT_FOUND, "not found");
        }
        let session = match self.session_of(&request) {
            Ok(session) => session,
            Err(response) => return response,
        };
        let modern_only = self.server.options().era == Era::Modern;
        match *request.method() {
            Method::POST => self.post(session, request).await,
            // 2026-07-28 has neither the GET stream nor DELETE.
            Method::GET | Method::DELETE if modern_only => full(StatusCode::METHOD_NOT_ALLOWED, ""),
            Method::GET => {
                let Some((id, session)) = session else {
                    return full(StatusCode::BAD_REQUEST, "missing session");
                };
                let (tx, rx) = mpsc::unbounded_channel();
                let mut routes = lock(&session.routes);
                routes.get = Some(tx);
                routes.flush_backlog();
                sse_response(rx, Some(&id))
            }
            Method::DELETE => {
                let Some((id, _)) = session else {
                    return full(StatusCode::BAD_REQUEST, "missing session");
                };
                // Dropping the session closes the server's input.
                lock(&self.sessions).remove(&id);
                full(StatusCode::OK, "")
            }
            _ => full(StatusCode::METHOD_NOT_ALLOWED, ""),
        }
    }

    async fn post(
        self: Arc<Self>,
        session: Option<(String, Arc<HttpSession>)>,
        request: HttpRequest<Incoming>,
    ) -> HttpResponse<Body> {
        let headers = request.headers().clone();
        let body = match read_body(request).await {
            Ok(body) => body,
            Err(response) => return response,
        };
        let messages: Vec<JsonRpcMessage> = match Codec::default().decode(&body) {
            Ok(decoded) => decoded.into_iter().collect(),
            Err(e) => return full(StatusCode::BAD_REQUEST, e.to_string()),
        };
        let is_initialize = messages.iter().any(|m| m.method() == Some("initialize"));
        let (id, session) = match (session, is_initialize) {
            (Some(session), _) => session,
            (None, true) if self.server.options().era == Era::Modern => {
                let id = messages.iter().find_map(|m| match m {
                    JsonRpcMessage::Request(r) => Some(r.id.clone()),
                    _ => None,
                });
                return json_error(StatusCode::BAD_REQUEST, id, self.server.refuse_initialize());
            }
            (None, true) => self.new_session(),
            (None, false) => return self.stateless(messages, &headers).await,
        };
        let requests: Vec<(RequestId, Option<Value>)> = messages
            .iter()
            .filter_map(|m| match m {
                JsonRpcMessage::Request(r) => {
                    let token = r
                        .params
                        .as_ref()
                        .and_then(|p| p.pointer("/_meta/progressToken"))
                        .cloned();
                    Some((r.id.clone(), token))
                }
                _ => None,
            })
            .collect();
        if requests.is_empty() {
            for message in messages {
                let _ = session.to_server.send(message);
            }
            let mut response = full(StatusCode::ACCEPTED, "");
            response
                .headers_mut()
                .insert("mcp-session-id", id.parse().expect("session ids are ascii"));
            return response;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        {
            let mut routes = lock(&session.routes);
            for (request_id, token) in requests {
                routes.posts.push((request_id, token, tx.clone()));
            }
            routes.flush_backlog();
        }
        drop(tx);
        for message in messages {
            let _ = session.to_server.send(message);
        }
        sse_response(rx, Some(&id))
    }
    /// A POST without a session: a 2026-07-28 request served on a
    /// connection of its own, or a notification for one in flight.
    async fn stateless(
        self: Arc<Self>,
        mut messages: Vec<JsonRpcMessage>,
        headers: &hyper::HeaderMap,
    ) -> HttpResponse<Body> {
        if messages.len() != 1 {
            return full(StatusCode::BAD_REQUEST, "one JSON-RPC message per POST");
        }
        let request = match messages.pop() {
            Some(JsonRpcMessage::Request(request)) => request,
            Some(JsonRpcMessage::Notification(note)) => {
                self.forward_cancellation(note);
                return full(StatusCode::ACCEPTED, "");
            }
            _ => {
                return full(
                    StatusCode::BAD_REQUEST,
                    "a client sends no responses at 2026-07-28",
                );
            }
        };
        let params = request.params.clone().unwrap_or(Value::Null);
        // A legacy server knows no session-less request: the plain refusal
        // without a JSON-RPC body sends a dual-era client to `initialize`.
        if self.server.options().era == Era::Legacy {
            return full(StatusCode::BAD_REQUEST, "missing session");
        }
        if let Err(mismatch) = header_mismatch(headers, &request.method, &params) {
            return json_error(StatusCode::BAD_REQUEST, Some(request.id), mismatch);
        }
        if let Err(refusal) = self.server.classify(&request.method, &params, false) {
            return json_error(StatusCode::BAD_REQUEST, Some(request.id), refusal);
        }
        let (to_server, mut from_server) = start_connection(&self.server, &self.kill);
        let id = request.id.clone();
        // Requests that may take long or carry notifications answer on an
        // SSE stream; the others with one JSON object, so clients meet both.
        let streams = matches!(
            request.method.as_str(),
            "tools/call" | "prompts/get" | "resources/read" | "subscriptions/listen"
        );
        lock(&self.modern).insert(id.clone(), to_server.clone());
        let _ = to_server.send(JsonRpcMessage::Request(request));
        if !streams {
            let answer = loop {
                match from_server.recv().await {
                    Some(JsonRpcMessage::Response(response))
                        if response.id.as_ref() == Some(&id) =>
                    {
                        break response;
                    }
                    Some(_) => {}
                    // The server crashed: this answer dies with the loopback.
                    None => std::future::pending::<()>().await,
                }
            };
            lock(&self.modern).remove(&id);
            let status = match &answer.outcome {
                Err(e) if e.code == error_codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
                Err(e) if error_codes::is_modern_error(e.code) => StatusCode::BAD_REQUEST,
                _ => StatusCode::OK,
            };
            return json_response(status, &JsonRpcMessage::Response(answer));
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let app = Arc::clone(&self);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    message = from_server.recv() => match message {
                        Some(message) => {
                            let done = matches!(&message, JsonRpcMessage::Response(r) if r.id.as_ref() == Some(&id));
                            let _ = tx.send(sse_event("message", &encode(&message)));
                            if done {
                                break;
                            }
                        }
                        // The server crashed: hold the stream until the
                        // loopback dies, so the client sees a broken stream.
                        None => {
                            tx.closed().await;
                            break;
                        }
                    },
                    // The client closed the stream: that cancels the request.
                    () = tx.closed() => {
                        let _ = to_server.send(cancelled(&id));
                        break;
                    }
                }
            }
            lock(&app.modern).remove(&id);
        });
        sse_response(rx, None)
    }

    /// A session-less `notifications/cancelled` for a modern request in
    /// flight reaches that request's connection.
    fn forward_cancellation(&self, note: mcp_transport::Notification) {
        if note.method != "notifications/cancelled" {
            return;
        }
        let id = note
            .params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
        let target = id.and_then(|id| lock(&self.modern).get(&id).cloned());
        if let Some(target) = target {
            let _ = target.send(JsonRpcMessage::Notification(note));
        }
    }
}

fn cancelled(id: &RequestId) -> JsonRpcMessage {
    JsonRpcMessage::notification(
        "notifications/cancelled",
        Some(serde_json::json!({"requestId": id, "reason": "the response stream closed"})),
    )
}

fn json_response(status: StatusCode, message: &JsonRpcMessage) -> HttpResponse<Body> {
    let mut response = full(status, encode(message));
    response.headers_mut().insert(
        "content-type",
        "application/json".parse().expect("static header"),
    );
    response
}

/// A refused request: the HTTP status with the JSON-RPC error as its body.
fn json_error(status: StatusCode, id: Option<RequestId>, error: ErrorObject) -> HttpResponse<Body> {
    json_response(
        status,
        &JsonRpcMessage::Response(Response {
            id,
            outcome: Err(error),
        }),
    )
}

/// `HeaderMismatch` (-32020) when a standard header a client sent
/// disagrees with the body. Absent headers pass: this server also serves
/// clients that predate them.
fn header_mismatch(
    headers: &hyper::HeaderMap,
    method: &str,
    params: &Value,
) -> Result<(), ErrorObject> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let mismatch = |what: &str, header: &str, body: &str| {
        Err(ErrorObject::new(
            error_codes::HEADER_MISMATCH,
            format!(
                "Header mismatch: {what} header value {header:?} does not match body value {body:?}"
            ),
        ))
    };
    if let (Some(sent), Some(body)) = (
        header("mcp-protocol-version"),
        modern::requested_version(params),
    ) && sent != body
    {
        return mismatch("MCP-Protocol-Version", sent, body);
    }
    if let Some(sent) = header("mcp-method")
        && sent != method
    {
        return mismatch("Mcp-Method", sent, method);
    }
    Ok(())
}

/// Serves `server` over streamable HTTP at `http://127.0.0.1:<port>/mcp`.
pub async fn serve_streamable_http(server: Arc<ExampleServer>) -> Loopback {
    let (listener, port) = bind().await;
    let (kill, killed) = watch::channel(false);
    let app = Arc::new(HttpApp {
        server,
        sessions: Mutex::new(HashMap::new()),
        modern: Mutex::new(HashMap::new()),
        next_session: AtomicU64::new(0),
        kill: kill.clone(),
    });
    let handler: Handler = Arc::new(move |request| Box::pin(Arc::clone(&app).handle(request)));
    serve(listener, handler, killed);
    Loopback {
        url: format!("http://127.0.0.1:{port}/mcp"),
        kill,
    }
}

// ---------------------------------------------------------------- legacy SSE

struct SseApp {
    server: Arc<ExampleServer>,
    sessions: Mutex<HashMap<String, mpsc::UnboundedSender<JsonRpcMessage>>>,
    next_session: AtomicU64,
    kill: watch::Sender<bool>,
}

impl SseApp {
    async fn handle(self: Arc<Self>, request: HttpRequest<Incoming>) -> HttpResponse<Body> {
        match (request.method().clone(), request.uri().path()) {
            (Method::GET, "/sse") => {
                let id = (self.next_session.fetch_add(1, Ordering::SeqCst) + 1).to_string();
                let (to_server, mut from_server) = start_connection(&self.server, &self.kill);
                lock(&self.sessions).insert(id.clone(), to_server);
                let (tx, rx) = mpsc::unbounded_channel();
                let _ = tx.send(Bytes::from(format!(
                    "event: endpoint\ndata: /message?sessionId={id}\n\n"
                )));
                let app = Arc::clone(&self);
                tokio::spawn(async move {
                    loop {
                        tokio::select! {
                            message = from_server.recv() => match message {
                                Some(message) => { let _ = tx.send(sse_event("message", &encode(&message))); }
                                None => break,
                            },
                            // The client went away: end the server's input.
                            () = tx.closed() => break,
                        }
                    }
                    lock(&app.sessions).remove(&id);
                });
                sse_response(rx, None)
            }
            (Method::POST, "/message") => {
                let query = request.uri().query().unwrap_or("").to_owned();
                let id = query.strip_prefix("sessionId=").unwrap_or("").to_owned();
                let Some(to_server) = lock(&self.sessions).get(&id).cloned() else {
                    return full(StatusCode::NOT_FOUND, "unknown session");
                };
                let body = match read_body(request).await {
                    Ok(body) => body,
                    Err(response) => return response,
                };
                match Codec::default().decode(&body) {
                    Ok(decoded) => {
                        for message in decoded {
                            let _ = to_server.send(message);
                        }
                        full(StatusCode::ACCEPTED, "Accepted")
                    }
                    Err(e) => full(StatusCode::BAD_REQUEST, e.to_string()),
                }
            }
            _ => full(StatusCode::NOT_FOUND, "not found"),
        }
    }
}

/// Serves `server` over legacy HTTP+SSE at `http://127.0.0.1:<port>/sse`.
pub async fn serve_legacy_sse(server: Arc<ExampleServer>) -> Loopback {
    let (listener, port) = bind().await;
    let (kill, killed) = watch::channel(false);
    let app = Arc::new(SseApp {
        server,
        sessions: Mutex::new(HashMap::new()),
        next_session: AtomicU64::new(0),
        kill: kill.clone(),
    });
    let handler: Handler = Arc::new(move |request| Box::pin(Arc::clone(&app).handle(request)));
    serve(listener, handler, killed);
    Loopback {
        url: format!("http://127.0.0.1:{port}/sse"),
        kill,
    }
}

// ---------------------------------------------------------------- WebSocket

/// Serves `server` over WebSocket at `ws://127.0.0.1:<port>/ws`; the
/// handshake must offer the `mcp` subprotocol.
pub async fn serve_ws(server: Arc<ExampleServer>) -> Loopback {
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

    let (listener, port) = bind().await;
    let (kill, mut killed) = watch::channel(false);
    let kill_on_crash = kill.clone();
    tokio::spawn(async move {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let server = Arc::clone(&server);
                    let kill = kill_on_crash.clone();
                    connections.spawn(async move {
                        let check = |request: &Request, mut response: Response| -> Result<Response, ErrorResponse> {
                            let offers_mcp = request
                                .headers()
                                .get("sec-websocket-protocol")
                                .and_then(|v| v.to_str().ok())
                                .is_some_and(|v| v.split(',').any(|p| p.trim() == "mcp"));
                            if request.uri().path() != "/ws" || !offers_mcp {
                                let mut refusal = ErrorResponse::new(Some("expected /ws with subprotocol mcp".into()));
                                *refusal.status_mut() = StatusCode::BAD_REQUEST;
                                return Err(refusal);
                            }
                            response.headers_mut().insert("sec-websocket-protocol", "mcp".parse().expect("static header"));
                            Ok(response)
                        };
                        let Ok(socket) = tokio_tungstenite::accept_hdr_async(stream, check).await else { return };
                        let (mut sink, mut frames) = socket.split();
                        let (to_server, mut from_server) = start_connection(&server, &kill);
                        loop {
                            tokio::select! {
                                frame = frames.next() => match frame {
                                    Some(Ok(Message::Text(text))) => {
                                        if let Ok(decoded) = Codec::default().decode(text.as_bytes()) {
                                            for message in decoded {
                                                let _ = to_server.send(message);
                                            }
                                        }
                                    }
                                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                                    Some(Ok(_)) => {}
                                },
                                message = from_server.recv() => match message {
                                    Some(message) => {
                                        if sink.send(Message::text(encode(&message))).await.is_err() {
                                            break;
                                        }
                                    }
                                    None => break,
                                },
                            }
                        }
                        let _ = sink.close().await;
                    });
                }
                _ = killed.wait_for(|killed| *killed) => break,
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        connections.abort_all();
    });
    Loopback {
        url: format!("ws://127.0.0.1:{port}/ws"),
        kill,
    }
}

// ---------------------------------------------------------------- claude.ai proxy

/// What the proxy requires of each request.
#[derive(Debug, Clone)]
pub struct ProxyExpectations {
    /// The `X-Mcp-Server-Id` value.
    pub server_id: String,
    /// The whole `Authorization` value.
    pub authorization: String,
}

/// A proxy at `http://127.0.0.1:<port>/v1/mcp` that refuses requests
/// without the expected server id (404) or credentials (401), strips both,
/// and forwards the rest (method, body, MCP headers) to `upstream`,
/// streaming the answer back.
pub async fn serve_proxy(upstream: String, expect: ProxyExpectations) -> Loopback {
    let (listener, port) = bind().await;
    let (kill, killed) = watch::channel(false);
    let client = reqwest::Client::new();
    let handler: Handler = Arc::new(move |request: HttpRequest<Incoming>| {
        let client = client.clone();
        let upstream = upstream.clone();
        let expect = expect.clone();
        Box::pin(async move {
            let header = |name: &str| {
                request
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            if header("authorization").as_deref() != Some(expect.authorization.as_str()) {
                let mut response = full(
                    StatusCode::UNAUTHORIZED,
                    "missing or wrong proxy credentials",
                );
                response
                    .headers_mut()
                    .insert("www-authenticate", "Bearer".parse().expect("static header"));
                return response;
            }
            if header("x-mcp-server-id").as_deref() != Some(expect.server_id.as_str()) {
                return full(StatusCode::NOT_FOUND, "unknown server id");
            }
            let method = request.method().clone();
            let mut forward = client.request(method, &upstream);
            for name in [
                "accept",
                "content-type",
                "mcp-session-id",
                "mcp-protocol-version",
                "mcp-method",
                "mcp-name",
                "last-event-id",
            ] {
                if let Some(value) = header(name) {
                    forward = forward.header(name, value);
                }
            }
            // Custom headers from tool parameters pass through unread.
            for (name, value) in request.headers() {
                if name.as_str().starts_with("mcp-param-") {
                    forward = forward.header(name.as_str(), value.as_bytes());
                }
            }
            let body = match read_body(request).await {
                Ok(body) => body,
                Err(response) => return response,
            };
            let answer = match forward.body(body).send().await {
                Ok(answer) => answer,
                Err(e) => return full(StatusCode::BAD_GATEWAY, format!("upstream: {e}")),
            };
            let status =
                StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
            let copied: Vec<_> = ["content-type", "mcp-session-id", "cache-control"]
                .into_iter()
                .filter_map(|name| Some((name, answer.headers().get(name)?.clone())))
                .collect();
            let stream = answer
                .bytes_stream()
                .map(|chunk| chunk.map_err(std::io::Error::other).map(Frame::data));
            let mut response = HttpResponse::new(StreamBody::new(stream).boxed_unsync());
            *response.status_mut() = status;
            for (name, value) in copied {
                response.headers_mut().insert(name, value);
            }
            response
        })
    });
    serve(listener, handler, killed);
    Loopback {
        url: format!("http://127.0.0.1:{port}/v1/mcp"),
        kill,
    }
}

// ---------------------------------------------------------------- harnesses

/// Which network kind a [`NetHarness`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetKind {
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE.
    Sse,
    /// WebSocket.
    Ws,
    /// The claude.ai proxy in front of streamable HTTP.
    Proxy,
}

/// The example server behind a loopback server of one network kind. The
/// loopback servers live until the test's runtime ends.
#[derive(Debug, Clone, Copy)]
pub struct NetHarness(pub NetKind);

/// The credentials the proxy harness hands out and its proxy expects.
#[derive(Debug)]
struct StaticToken(String);

#[async_trait]
impl mcp_oauth::AuthProvider for StaticToken {
    async fn authorization(&self) -> Result<Option<String>, mcp_oauth::AuthError> {
        Ok(Some(self.0.clone()))
    }

    async fn on_challenge(
        &self,
        _: &mcp_oauth::Challenge,
    ) -> Result<mcp_oauth::ChallengeOutcome, mcp_oauth::AuthError> {
        Ok(mcp_oauth::ChallengeOutcome::GiveUp)
    }
}

#[async_trait]
impl Harness for NetHarness {
    fn kind(&self) -> &'static str {
        match self.0 {
            NetKind::Http => "http",
            NetKind::Sse => "sse",
            NetKind::Ws => "ws",
            NetKind::Proxy => "claudeai-proxy",
        }
    }

    async fn connect(
        &self,
        server: &ServerOptions,
        session: SessionOptions,
    ) -> Result<ClientSession, TransportError> {
        let core = Arc::new(ExampleServer::new(server.clone()));
        let remote = |url: &str| RemoteConfig::new(url.to_owned());
        let mut options = ConnectOptions::default().with_session(session.clone());
        let (loopback, transport) = match self.0 {
            NetKind::Http => {
                let loopback = serve_streamable_http(core).await;
                let transport = TransportConfig::Http(remote(&loopback.url));
                (vec![loopback], transport)
            }
            NetKind::Sse => {
                let loopback = serve_legacy_sse(core).await;
                let transport = TransportConfig::Sse(remote(&loopback.url));
                (vec![loopback], transport)
            }
            NetKind::Ws => {
                let loopback = serve_ws(core).await;
                let transport = TransportConfig::Ws(remote(&loopback.url));
                (vec![loopback], transport)
            }
            NetKind::Proxy => {
                let upstream = serve_streamable_http(core).await;
                let token = "Bearer proxy-test-token".to_owned();
                let proxy = serve_proxy(
                    upstream.url.clone(),
                    ProxyExpectations {
                        server_id: "srv_example".to_owned(),
                        authorization: token.clone(),
                    },
                )
                .await;
                options.claudeai_credentials = Some(Arc::new(StaticToken(token)));
                let transport = TransportConfig::ClaudeAiProxy(ProxyConfig::new(
                    proxy.url.clone(),
                    "srv_example",
                ));
                (vec![upstream, proxy], transport)
            }
        };
        let config = entry(&server_name(self.kind()), transport, timeouts_of(&session));
        let result = mcp_transport::connect(&config, &options).await;
        // The servers outlive this call: they stop with the test's runtime
        // (or when the example server crashes).
        loopback.into_iter().for_each(Loopback::detach);
        result
    }
}
