//! One downstream client's connection, whatever carries it: the
//! messages it sends come in on one channel, what the gateway sends it
//! goes out on another. Here the handshake is answered at the revision
//! the client speaks ([`mcp_transport::serving`] decides which), every
//! other request runs in its own task (so a slow tool holds up nothing),
//! a cancellation stops the task and with it the upstream call, the
//! server's progress reaches the client under the client's own token, and
//! a change of the catalog is announced: once per change on an
//! `initialize` session, on each open `subscriptions/listen` at
//! 2026-07-28.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_transport::serving::{self, Revision};
use mcp_transport::types::{META_SERVER_INFO, META_SUBSCRIPTION_ID};
use mcp_transport::{JsonRpcMessage, Notification, Progress, ProgressCallback, Request, RequestId};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::gateway::Gateway;

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

/// Serves one downstream client until it leaves (its channel closes) or
/// can no longer be written to.
pub async fn serve_connection(
    gateway: Arc<Gateway>,
    mut incoming: mpsc::Receiver<JsonRpcMessage>,
    outgoing: mpsc::Sender<JsonRpcMessage>,
) {
    let mut updates = gateway.runtime().subscribe();
    let mut connection = Connection {
        gateway,
        outgoing,
        session: None,
        listens: Vec::new(),
        calls: HashMap::new(),
    };
    loop {
        tokio::select! {
            message = incoming.recv() => match message {
                Some(message) => {
                    if !connection.handle(message).await {
                        return;
                    }
                }
                None => return,
            },
            changed = updates.changed() => {
                if changed.is_none() || !connection.announce().await {
                    return;
                }
            }
        }
    }
}

/// What one client has opened and what runs for it.
struct Connection {
    gateway: Arc<Gateway>,
    outgoing: mpsc::Sender<JsonRpcMessage>,
    /// The revision `initialize` settled on, once it has.
    session: Option<&'static str>,
    /// Open `subscriptions/listen` requests and the notifications each
    /// asked for.
    listens: Vec<(RequestId, Vec<&'static str>)>,
    /// Requests running, so a cancellation can stop them.
    calls: HashMap<RequestId, AbortHandle>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        for call in self.calls.values() {
            call.abort();
        }
    }
}

impl Connection {
    /// Handles one message; false once the client cannot be written to.
    async fn handle(&mut self, message: JsonRpcMessage) -> bool {
        match message {
            JsonRpcMessage::Request(request) => self.request(request).await,
            JsonRpcMessage::Notification(notification) => {
                self.notification(notification);
                true
            }
            // The gateway asks the client nothing yet.
            JsonRpcMessage::Response(_) => true,
        }
    }

    async fn send(&self, message: JsonRpcMessage) -> bool {
        self.outgoing.send(message).await.is_ok()
    }

    async fn request(&mut self, request: Request) -> bool {
        let Request { id, method, params } = request;
        let revision = match serving::request_revision(params.as_ref()) {
            Ok(revision) => revision,
            Err(error) => return self.send(JsonRpcMessage::error(Some(id), error)).await,
        };
        let params = params.unwrap_or_else(serving::empty);
        match method.as_str() {
            "initialize" => {
                let version = serving::initialize_version(Some(&params));
                self.session = Some(version);
                let mut result = json!({
                    "protocolVersion": version,
                    "capabilities": self.gateway.capabilities(),
                    "serverInfo": self.gateway.server_info(),
                });
                if let Some(instructions) = self.gateway.instructions().await {
                    result["instructions"] = Value::String(instructions);
                }
                self.send(JsonRpcMessage::result(id, result)).await
            }
            "server/discover" => {
                let mut result = json!({
                    "supportedVersions": serving::supported_versions(),
                    "capabilities": self.gateway.capabilities(),
                    "_meta": { META_SERVER_INFO: self.gateway.server_info() },
                });
                if let Some(instructions) = self.gateway.instructions().await {
                    result["instructions"] = Value::String(instructions);
                }
                self.send(JsonRpcMessage::result(id, serving::complete(result)))
                    .await
            }
            "subscriptions/listen" if revision != Revision::Session => {
                self.listen(id, &params).await
            }
            _ => {
                self.spawn(id, method, params, revision);
                true
            }
        }
    }

    /// Answers a request from its own task.
    fn spawn(&mut self, id: RequestId, method: String, params: Value, revision: Revision) {
        let gateway = Arc::clone(&self.gateway);
        let outgoing = self.outgoing.clone();
        let progress = progress_sink(&params, &outgoing);
        let answer_id = id.clone();
        let task = tokio::spawn(async move {
            let answer = gateway.answer(&method, &params, progress).await;
            let message = match answer {
                Ok(result) if revision != Revision::Session => {
                    JsonRpcMessage::result(answer_id, serving::complete(result))
                }
                Ok(result) => JsonRpcMessage::result(answer_id, result),
                Err(error) => JsonRpcMessage::error(Some(answer_id), error),
            };
            let _ = outgoing.send(message).await;
        });
        self.calls.retain(|_, call| !call.is_finished());
        self.calls.insert(id, task.abort_handle());
    }

    fn notification(&mut self, notification: Notification) {
        if notification.method != "notifications/cancelled" {
            return;
        }
        let id = notification
            .params
            .as_ref()
            .and_then(|params| params.get("requestId"))
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
        let Some(id) = id else { return };
        // Dropping the task drops the upstream call, which cancels it.
        if let Some(call) = self.calls.remove(&id) {
            call.abort();
        }
        self.listens.retain(|(listen, _)| *listen != id);
    }

    /// `subscriptions/listen`: acknowledged with the list changes the
    /// gateway announces, then held open until the client cancels it.
    async fn listen(&mut self, id: RequestId, params: &Value) -> bool {
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
        let acknowledgement = JsonRpcMessage::notification(
            "notifications/subscriptions/acknowledged",
            Some(json!({"_meta": {META_SUBSCRIPTION_ID: id}, "notifications": accepted})),
        );
        if !self.send(acknowledgement).await {
            return false;
        }
        if !methods.is_empty() {
            self.listens.push((id, methods));
        }
        true
    }

    /// Tells the client the catalog changed: each list once on an
    /// `initialize` session, and on each subscription that asked for it.
    async fn announce(&self) -> bool {
        if self.session.is_some() {
            for (_, method) in LISTEN_KEYS {
                if !self.send(JsonRpcMessage::notification(method, None)).await {
                    return false;
                }
            }
        }
        for (id, methods) in &self.listens {
            for method in methods {
                let params = json!({"_meta": {META_SUBSCRIPTION_ID: id}});
                if !self
                    .send(JsonRpcMessage::notification(*method, Some(params)))
                    .await
                {
                    return false;
                }
            }
        }
        true
    }
}

/// Where the server's progress on this request goes: to the client,
/// under the token it gave (none given, none sent). A client too slow to
/// read loses progress notifications, never answers.
fn progress_sink(
    params: &Value,
    outgoing: &mpsc::Sender<JsonRpcMessage>,
) -> Option<ProgressCallback> {
    let token = params.pointer("/_meta/progressToken")?.clone();
    let outgoing = outgoing.clone();
    Some(Arc::new(move |progress: Progress| {
        let mut params = json!({"progressToken": token, "progress": progress.progress});
        if let Some(total) = progress.total {
            params["total"] = json!(total);
        }
        if let Some(message) = progress.message {
            params["message"] = Value::String(message);
        }
        let _ = outgoing.try_send(JsonRpcMessage::notification(
            "notifications/progress",
            Some(params),
        ));
    }))
}
