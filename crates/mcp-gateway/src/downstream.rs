//! One downstream client, whatever carries it. A [`Downstream`] holds what
//! the client opened (its `initialize` revision, its running requests, its
//! subscriptions) and answers each message it is handed: the handshake at
//! the revision the client speaks ([`mcp_transport::serving`] decides
//! which), every other request in its own task (so a slow tool holds up
//! nothing). A request's answer, and the server's progress on it under
//! the client's own token, go to the reply channel the request came with:
//! over stdio the one output, over HTTP that request's response. A
//! cancellation stops the task and with it the upstream call. A change of
//! the catalog is announced by [`Downstream::announce`]: once per change on
//! an `initialize` session (to its notice channel), and on each open
//! `subscriptions/listen` at 2026-07-28 (to that request's reply channel).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use mcp_transport::error_codes::{INTERNAL_ERROR, METHOD_NOT_FOUND};

use mcp_catalog::CatalogUpdates;
use mcp_transport::serving::{self, Revision};
use mcp_transport::types::{META_LOG_LEVEL, META_SERVER_INFO, META_SUBSCRIPTION_ID};
use mcp_transport::{
    ErrorObject, JsonRpcMessage, Notification, Progress, ProgressCallback, Request, RequestId,
};
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::task::AbortHandle;

use crate::gateway::{Follower, Gateway};
use crate::observe::Served;
use crate::relay::{Asker, ResourceUpdate};

/// Where messages for a client go: a request's reply channel, or a
/// session's channel for notices that belong to no request.
pub type Sink = mpsc::Sender<JsonRpcMessage>;

/// The list-change notifications a `subscriptions/listen` may ask for,
/// by their filter key.
const LISTEN_KEYS: [(&str, &str); 3] = [
    ("toolsListChanged", "notifications/tools/list_changed"),
    ("promptsListChanged", "notifications/prompts/list_changed"),
    (
        "resourcesListChanged",
        "notifications/resources/list_changed",
    ),
];

/// Resources one `subscriptions/listen` may follow; past these, the rest
/// are left out of its acknowledgement.
const MAX_LISTEN_RESOURCES: usize = 1_000;

const UPDATED: &str = "notifications/resources/updated";

/// One client's state and the answers to what it sends.
#[derive(Debug)]
pub struct Downstream {
    gateway: Arc<Gateway>,
    /// `network.transport` of the connection (`pipe`, `tcp`).
    network: Option<&'static str>,
    /// The HTTP session the connection is, where it is one (`mcp.session.id`).
    session_id: Option<Box<str>>,
    /// The resources an `initialize` session follows.
    follower: Follower,
    state: Mutex<State>,
    /// The gateway's own requests to this client, waiting for answers.
    asked: Arc<Asked>,
}

/// Where each answer to the gateway's requests goes, by request id.
type Waiting = HashMap<RequestId, oneshot::Sender<Result<Value, ErrorObject>>>;

/// Requests the gateway sent a client, by id, and where each answer goes.
#[derive(Debug, Default)]
struct Asked {
    waiting: Mutex<Waiting>,
    next: AtomicU64,
}

impl Asked {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A 2026-07-28 client: a server's input rounds reach it as results, and
/// so does an older server's own question during a tool call (the
/// gateway holds the call; see `held`). Log messages about its request
/// reach it on the request's reply channel when the request stated a
/// level.
struct RoundsClient {
    reply: Sink,
    log_level: Option<String>,
}

#[async_trait]
impl Asker for RoundsClient {
    async fn ask(&self, method: &str, _params: Option<Value>) -> Result<Value, ErrorObject> {
        Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            format!(
                "{method}: the client speaks 2026-07-28, and a request a server sends on its own reaches it only during a tool call"
            ),
        ))
    }

    fn takes_input_rounds(&self) -> bool {
        true
    }

    fn notify(&self, notification: &Notification) {
        // At 2026-07-28 a server logs only for a request that asked.
        if let Some(threshold) = &self.log_level {
            relay_log(notification, threshold, &self.reply);
        }
    }
}

/// Sends a log message on `reply` if it is at `threshold` or above; a
/// client too slow to read loses log messages, never answers.
fn relay_log(notification: &Notification, threshold: &str, reply: &Sink) {
    let level = notification
        .params
        .as_ref()
        .and_then(|params| params.get("level"))
        .and_then(Value::as_str);
    if serving::log_admitted(level, threshold) {
        let _ = reply.try_send(JsonRpcMessage::Notification(notification.clone()));
    }
}

/// One client of an `initialize` session, asked on the reply channel of
/// the call it made (its capabilities checked first).
struct SessionAsker {
    reply: Sink,
    asked: Arc<Asked>,
    capabilities: Value,
    /// The level the client set with `logging/setLevel`; none set, the
    /// server's own choice of messages reaches it.
    log_level: Option<String>,
}

#[async_trait]
impl Asker for SessionAsker {
    async fn ask(&self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        let needed = match method {
            "elicitation/create" => "elicitation",
            "sampling/createMessage" => "sampling",
            "roots/list" => "roots",
            other => return Err(ErrorObject::method_not_found(other)),
        };
        if self.capabilities.get(needed).is_none_or(Value::is_null) {
            return Err(ErrorObject::new(
                METHOD_NOT_FOUND,
                format!("{method}: the client did not declare the {needed} capability"),
            ));
        }
        let number = self.asked.next.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::String(format!("gateway-{number}"));
        let (answer, answered) = oneshot::channel();
        self.asked.lock().insert(id.clone(), answer);
        let request = JsonRpcMessage::request(id.clone(), method, params);
        if self.reply.send(request).await.is_err() {
            self.asked.lock().remove(&id);
            return Err(ErrorObject::new(
                INTERNAL_ERROR,
                format!("{method}: the client is gone"),
            ));
        }
        answered.await.unwrap_or_else(|_| {
            Err(ErrorObject::new(
                INTERNAL_ERROR,
                format!("{method}: the client left without answering"),
            ))
        })
    }

    fn notify(&self, notification: &Notification) {
        relay_log(
            notification,
            self.log_level.as_deref().unwrap_or("debug"),
            &self.reply,
        );
    }
}

#[derive(Debug, Default)]
struct State {
    /// The revision `initialize` settled on, once it has.
    session: Option<&'static str>,
    /// The capabilities the client declared in `initialize`.
    capabilities: Value,
    /// The level an `initialize` session's client set with
    /// `logging/setLevel`.
    log_level: Option<String>,
    /// Where notices of an `initialize` session go (none: not sent).
    notices: Option<Sink>,
    /// Open `subscriptions/listen` requests: the notifications each
    /// asked for and its reply channel.
    listens: Vec<Listen>,
    /// Requests running, so a cancellation can stop them.
    calls: HashMap<RequestId, AbortHandle>,
}

#[derive(Debug)]
struct Listen {
    id: RequestId,
    methods: Vec<&'static str>,
    reply: Sink,
    /// The resources it follows (`resourceSubscriptions`).
    follower: Follower,
}

/// What handling a message asks of the carrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// The request's answer will come on its reply channel.
    Answering,
    /// A `subscriptions/listen` was acknowledged and stays open: its reply
    /// channel carries notifications until the client cancels it or
    /// leaves.
    Listening,
    /// A notification or a response: nothing will come.
    Nothing,
}

impl Drop for Downstream {
    fn drop(&mut self) {
        let state = self.lock();
        for call in state.calls.values() {
            call.abort();
        }
        for listen in &state.listens {
            self.gateway.forget(listen.follower);
        }
        drop(state);
        self.gateway.forget(self.follower);
    }
}

impl Downstream {
    /// A client of `gateway`, with nothing opened yet.
    pub fn new(gateway: Arc<Gateway>) -> Self {
        Downstream {
            follower: gateway.follower(),
            gateway,
            network: None,
            session_id: None,
            state: Mutex::new(State::default()),
            asked: Arc::default(),
        }
    }

    /// The same connection, carried over `network` (`network.transport`:
    /// `pipe` for stdio, `tcp` for HTTP), as its telemetry says.
    pub fn over(mut self, network: &'static str) -> Self {
        self.network = Some(network);
        self
    }

    /// The same connection, in the HTTP session `id` (`Mcp-Session-Id`),
    /// as its telemetry says.
    pub(crate) fn in_session(mut self, id: &str) -> Self {
        self.session_id = Some(id.into());
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Bookkeeping only; whole between statements.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where notices of the `initialize` session go from now on.
    pub fn set_notices(&self, notices: Option<Sink>) {
        self.lock().notices = notices;
    }

    /// Whether a notice stream is open to the client.
    pub fn has_open_notices(&self) -> bool {
        self.lock()
            .notices
            .as_ref()
            .is_some_and(|notices| !notices.is_closed())
    }

    /// The revision `initialize` settled on, if the client sent one.
    pub fn session(&self) -> Option<&'static str> {
        self.lock().session
    }

    /// Handles one message; a request's answer goes to `reply`.
    pub async fn handle(&self, message: JsonRpcMessage, reply: &Sink) -> Handled {
        match message {
            JsonRpcMessage::Request(request) => self.request(request, reply).await,
            JsonRpcMessage::Notification(notification) => {
                self.notification(notification);
                Handled::Nothing
            }
            JsonRpcMessage::Response(response) => {
                let waiting = response
                    .id
                    .as_ref()
                    .and_then(|id| self.asked.lock().remove(id));
                if let Some(waiting) = waiting {
                    let _ = waiting.send(response.outcome);
                }
                Handled::Nothing
            }
        }
    }

    async fn request(&self, request: Request, reply: &Sink) -> Handled {
        let Request { id, method, params } = request;
        let revision = match serving::request_revision(params.as_ref()) {
            Ok(revision) => revision,
            Err(error) => {
                let _ = reply.send(JsonRpcMessage::error(Some(id), error)).await;
                return Handled::Answering;
            }
        };
        let params = params.unwrap_or_else(serving::empty);
        if revision != Revision::Session && serving::REMOVED_IN_MODERN.contains(&method.as_str()) {
            let error = ErrorObject::method_not_found(&method);
            let _ = reply.send(JsonRpcMessage::error(Some(id), error)).await;
            return Handled::Answering;
        }
        match method.as_str() {
            "initialize" => {
                let version = serving::initialize_version(Some(&params));
                {
                    let mut state = self.lock();
                    state.session = Some(version);
                    state.capabilities = params.get("capabilities").cloned().unwrap_or_default();
                }
                let mut result = json!({
                    "protocolVersion": version,
                    "capabilities": self.gateway.capabilities(false),
                    "serverInfo": self.gateway.server_info(),
                });
                if let Some(instructions) = self.gateway.instructions().await {
                    result["instructions"] = Value::String(instructions);
                }
                let _ = reply.send(JsonRpcMessage::result(id, result)).await;
                Handled::Answering
            }
            "server/discover" => {
                let mut result = json!({
                    "supportedVersions": serving::supported_versions(),
                    "capabilities": self.gateway.capabilities(true),
                    "_meta": { META_SERVER_INFO: self.gateway.server_info() },
                });
                if let Some(instructions) = self.gateway.instructions().await {
                    result["instructions"] = Value::String(instructions);
                }
                let answer = JsonRpcMessage::result(id, serving::complete_for(&method, result));
                let _ = reply.send(answer).await;
                Handled::Answering
            }
            "subscriptions/listen" if revision != Revision::Session => {
                self.listen(id, &params, reply).await
            }
            _ => {
                self.spawn(id, method, params, revision, reply);
                Handled::Answering
            }
        }
    }

    /// Answers a request from its own task.
    fn spawn(
        &self,
        id: RequestId,
        method: String,
        mut params: Value,
        revision: Revision,
        reply: &Sink,
    ) {
        if revision == Revision::Session {
            self.session_log_level(&method, &mut params);
        }
        let gateway = Arc::clone(&self.gateway);
        let reply = reply.clone();
        let progress = progress_sink(&params, &reply);
        let asker = self.asker(&params, &reply);
        let answer_id = id.clone();
        let follower = self.follower;
        // Read only when telemetry asks: no lock on the path otherwise.
        let version = || match revision {
            Revision::Session => self.lock().session,
            Revision::Modern(version) => Some(version),
        };
        let served = Served::start(
            &method,
            &id,
            &params,
            version,
            self.network,
            self.session_id.as_deref(),
        );
        let task = tokio::spawn(async move {
            let uri = params
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let answer = served
                .within(async {
                    match method.as_str() {
                        // Only an `initialize` session sends these (they
                        // are gone at 2026-07-28, refused above).
                        "resources/subscribe" => gateway.follow(follower, uri).await,
                        "resources/unsubscribe" => gateway.unfollow(follower, uri).await,
                        _ => gateway.answer(&method, &params, progress, asker).await,
                    }
                })
                .await;
            served.finish(&answer);
            let message =
                match answer.map(|result| serving::without_revision_members(&method, result)) {
                    Ok(result) if revision != Revision::Session => {
                        JsonRpcMessage::result(answer_id, serving::complete_for(&method, result))
                    }
                    Ok(result) => JsonRpcMessage::result(answer_id, result),
                    Err(error) => JsonRpcMessage::error(Some(answer_id), error),
                };
            let _ = reply.send(message).await;
        });
        let mut state = self.lock();
        state.calls.retain(|_, call| !call.is_finished());
        state.calls.insert(id, task.abort_handle());
    }

    /// An `initialize` session's log level is the client's to set once
    /// (`logging/setLevel`) and goes with each of its requests as a
    /// 2026-07-28 request states its own, so an upstream at either
    /// revision logs what this client asked for.
    fn session_log_level(&self, method: &str, params: &mut Value) {
        let mut state = self.lock();
        if method == "logging/setLevel" {
            state.log_level = params
                .get("level")
                .and_then(Value::as_str)
                .map(str::to_owned);
            return;
        }
        let (Some(level), Value::Object(members)) = (&state.log_level, params) else {
            return;
        };
        let meta = members
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.entry(META_LOG_LEVEL)
                .or_insert_with(|| Value::String(level.clone()));
        }
    }

    /// Who answers what a server asks during a request with reply channel
    /// `reply`, and hears its log messages: the client itself on an
    /// `initialize` session. A 2026-07-28 client takes input rounds as
    /// results; a request a server sends on its own is refused, saying so.
    fn asker(&self, params: &Value, reply: &Sink) -> Option<Arc<dyn Asker>> {
        let state = self.lock();
        if state.session.is_none() {
            let log_level = params
                .get("_meta")
                .and_then(|meta| meta.get(META_LOG_LEVEL))
                .and_then(Value::as_str)
                .map(str::to_owned);
            return Some(Arc::new(RoundsClient {
                reply: reply.clone(),
                log_level,
            }));
        }
        Some(Arc::new(SessionAsker {
            reply: reply.clone(),
            asked: Arc::clone(&self.asked),
            capabilities: state.capabilities.clone(),
            log_level: state.log_level.clone(),
        }))
    }

    fn notification(&self, notification: Notification) {
        let Some(id) = serving::cancelled_request(&notification) else {
            return;
        };
        let mut state = self.lock();
        // Dropping the task drops the upstream call, which cancels it.
        if let Some(call) = state.calls.remove(&id) {
            call.abort();
        }
        self.end_listens(&mut state, |listen| listen.id == id);
    }

    /// Ends the listens `ended` picks: forgotten, with the resources they
    /// followed.
    fn end_listens(&self, state: &mut State, ended: impl Fn(&Listen) -> bool) {
        state.listens.retain(|listen| {
            let end = ended(listen);
            if end {
                self.gateway.forget(listen.follower);
            }
            !end
        });
    }

    /// `subscriptions/listen`: acknowledged with the list changes the
    /// gateway announces, then held open until the client cancels it.
    async fn listen(&self, id: RequestId, params: &Value, reply: &Sink) -> Handled {
        let asked = params.get("notifications");
        let mut accepted = Map::new();
        let mut methods = Vec::new();
        for (key, method) in LISTEN_KEYS {
            if asked
                .and_then(|asked| asked.get(key))
                .and_then(Value::as_bool)
                == Some(true)
            {
                accepted.insert(key.into(), Value::Bool(true));
                methods.push(method);
            }
        }
        // Each resource is followed for this listen alone; one the gateway
        // cannot follow (no such server, the server refuses) is left out
        // of the acknowledgement.
        let follower = self.gateway.follower();
        let mut followed = Vec::new();
        let wanted = asked
            .and_then(|asked| asked.get("resourceSubscriptions"))
            .and_then(Value::as_array);
        for uri in wanted.into_iter().flatten().take(MAX_LISTEN_RESOURCES) {
            if let Some(uri) = uri.as_str()
                && self.gateway.follow(follower, uri).await.is_ok()
            {
                followed.push(Value::String(uri.to_owned()));
            }
        }
        if !followed.is_empty() {
            accepted.insert("resourceSubscriptions".into(), Value::Array(followed));
        }
        let acknowledgement = JsonRpcMessage::notification(
            "notifications/subscriptions/acknowledged",
            Some(json!({"_meta": {META_SUBSCRIPTION_ID: id}, "notifications": accepted})),
        );
        let _ = reply.send(acknowledgement).await;
        self.lock().listens.push(Listen {
            id,
            methods,
            reply: reply.clone(),
            follower,
        });
        Handled::Listening
    }

    /// Tells the client a piece of the gateway's news it should hear.
    pub async fn tell(&self, piece: Piece) {
        match piece {
            Piece::CatalogChanged => self.announce().await,
            Piece::ResourceUpdated((server, uri)) => self.resource_updated(&server, &uri).await,
        }
    }

    /// Tells the client that the resource `uri` of `server` changed, if it
    /// follows it: an `initialize` session on its notice channel, each
    /// listen that follows it on its own reply channel.
    async fn resource_updated(&self, server: &str, uri: &str) {
        let (notices, listens) = {
            let state = self.lock();
            let notices = state
                .session
                .and(state.notices.clone())
                .zip(self.gateway.followed(self.follower, server, uri));
            let listens: Vec<(RequestId, Sink, String)> = state
                .listens
                .iter()
                .filter_map(|listen| {
                    let served = self.gateway.followed(listen.follower, server, uri)?;
                    Some((listen.id.clone(), listen.reply.clone(), served))
                })
                .collect();
            (notices, listens)
        };
        if let Some((notices, served)) = notices {
            let params = json!({ "uri": served });
            let _ = notices
                .send(JsonRpcMessage::notification(UPDATED, Some(params)))
                .await;
        }
        for (id, reply, served) in listens {
            let params = json!({"uri": served, "_meta": {META_SUBSCRIPTION_ID: id}});
            let _ = reply
                .send(JsonRpcMessage::notification(UPDATED, Some(params)))
                .await;
        }
    }

    /// Tells the client the catalog changed: each list once on an
    /// `initialize` session, and on each subscription that asked for it.
    /// Subscriptions whose client is gone are forgotten.
    pub async fn announce(&self) {
        let (notices, listens) = {
            let mut state = self.lock();
            self.end_listens(&mut state, |listen| listen.reply.is_closed());
            let notices = state.session.and(state.notices.clone());
            let listens: Vec<(RequestId, Vec<&'static str>, Sink)> = state
                .listens
                .iter()
                .map(|listen| {
                    (
                        listen.id.clone(),
                        listen.methods.clone(),
                        listen.reply.clone(),
                    )
                })
                .collect();
            (notices, listens)
        };
        if let Some(notices) = notices {
            for (_, method) in LISTEN_KEYS {
                let _ = notices
                    .send(JsonRpcMessage::notification(method, None))
                    .await;
            }
        }
        for (id, methods, reply) in listens {
            for method in methods {
                let params = json!({"_meta": {META_SUBSCRIPTION_ID: id}});
                let _ = reply
                    .send(JsonRpcMessage::notification(method, Some(params)))
                    .await;
            }
        }
    }
}

/// What the gateway tells its clients on its own: the catalog's changes
/// and its servers' resource updates, followed from when it is made.
#[derive(Debug)]
pub struct News {
    catalog: CatalogUpdates,
    resources: broadcast::Receiver<ResourceUpdate>,
}

/// One piece of [`News`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// The catalog changed (tools, prompts or resources listed).
    CatalogChanged,
    /// A server's resource changed: the server, and its own URI.
    ResourceUpdated(ResourceUpdate),
}

impl News {
    /// The news of `gateway` from now on.
    pub fn new(gateway: &Gateway) -> Self {
        News {
            catalog: gateway.runtime().subscribe(),
            resources: gateway.resource_updates(),
        }
    }

    /// The next piece of news; `None` once the runtime has shut down.
    pub async fn next(&mut self) -> Option<Piece> {
        loop {
            tokio::select! {
                changed = self.catalog.changed() => {
                    return changed.map(|_| Piece::CatalogChanged);
                }
                update = self.resources.recv() => match update {
                    Ok(update) => return Some(Piece::ResourceUpdated(update)),
                    // Missed updates are missed: the client reads the
                    // resource again on the next one.
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
            }
        }
    }
}

/// Serves one client over a pair of channels until its incoming channel
/// closes: what the client sends comes in on `incoming`; answers, progress
/// and notices all go out on `outgoing` (stdio's shape, so its telemetry
/// says `network.transport` `pipe`).
pub async fn serve_connection(
    gateway: Arc<Gateway>,
    mut incoming: mpsc::Receiver<JsonRpcMessage>,
    outgoing: Sink,
) {
    let mut news = News::new(&gateway);
    let downstream = Downstream::new(gateway).over("pipe");
    downstream.set_notices(Some(outgoing.clone()));
    loop {
        tokio::select! {
            message = incoming.recv() => match message {
                Some(message) => {
                    downstream.handle(message, &outgoing).await;
                }
                None => return,
            },
            piece = news.next() => match piece {
                Some(piece) => downstream.tell(piece).await,
                None => return,
            }
        }
        if outgoing.is_closed() {
            return;
        }
    }
}

/// Where the server's progress on this request goes: to the client,
/// under the token it gave (none given, none sent). A client too slow to
/// read loses progress notifications, never answers.
fn progress_sink(params: &Value, reply: &Sink) -> Option<ProgressCallback> {
    let token = params.pointer("/_meta/progressToken")?.clone();
    let reply = reply.clone();
    Some(Arc::new(move |progress: Progress| {
        let mut params = json!({"progressToken": token, "progress": progress.progress});
        if let Some(total) = progress.total {
            params["total"] = json!(total);
        }
        if let Some(message) = progress.message {
            params["message"] = Value::String(message);
        }
        let _ = reply.try_send(JsonRpcMessage::notification(
            "notifications/progress",
            Some(params),
        ));
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(level: &str) -> Notification {
        Notification {
            method: "notifications/message".into(),
            params: Some(json!({"level": level, "data": level})),
        }
    }

    /// The levels of the log messages `asker` passes on, of five sent.
    fn check(asker: impl FnOnce(Sink) -> Arc<dyn Asker>, shown: &[&str]) {
        let (reply, mut read) = mpsc::channel(8);
        let asker = asker(reply);
        for level in ["debug", "info", "warning", "error", "emergency"] {
            asker.notify(&log(level));
        }
        let mut got = Vec::new();
        while let Ok(JsonRpcMessage::Notification(notification)) = read.try_recv() {
            got.push(
                notification.params.unwrap()["level"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        assert_eq!(got, shown);
    }

    #[test]
    fn a_client_hears_the_log_messages_it_asked_for() {
        let rounds = |log_level: Option<&str>| {
            let log_level = log_level.map(str::to_owned);
            move |reply| Arc::new(RoundsClient { reply, log_level }) as Arc<dyn Asker>
        };
        let session = |log_level: Option<&str>| {
            let log_level = log_level.map(str::to_owned);
            move |reply| {
                Arc::new(SessionAsker {
                    reply,
                    asked: Arc::default(),
                    capabilities: json!({}),
                    log_level,
                }) as Arc<dyn Asker>
            }
        };
        // 2026-07-28: only a request that stated a level hears any
        check(rounds(None), &[]);
        check(rounds(Some("warning")), &["warning", "error", "emergency"]);
        // an `initialize` session: what the server chose, or from its level
        check(
            session(None),
            &["debug", "info", "warning", "error", "emergency"],
        );
        check(session(Some("error")), &["error", "emergency"]);
    }
}
