//! What an upstream server asks of its client (elicitation, sampling,
//! roots: as a request of its own before 2026-07-28, as an
//! `input_required` round after) reaches the downstream client whose call
//! it belongs to, and that client's answer goes back.
//!
//! The upstream sessions answer through one [`ClientHandler`] per server
//! ([`Relay::handler`]). Which downstream client to ask is found in this
//! order:
//!
//! 1. The call being made: each request the gateway sends upstream runs
//!    with its client's [`Asker`] in scope, so an input round (answered on
//!    the caller's task) goes to exactly that client.
//! 2. The server's calls in flight: a request the server sends on its own
//!    (older revisions) goes to the client of the one call running on
//!    that server. With several running, nothing on the wire says which
//!    one asked (over stdio), so the request is refused, naming why,
//!    rather than shown to the wrong person.
//! 3. None: `roots/list` is answered with no roots; anything else is
//!    refused.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mcp_transport::error_codes::METHOD_NOT_FOUND;
use mcp_transport::{ClientHandler, ErrorObject, Notification};
use serde_json::{Value, json};
use tokio::sync::broadcast;

/// A downstream client, as something that can be asked a question.
#[async_trait]
pub trait Asker: Send + Sync {
    /// Asks the client `method` (`elicitation/create`,
    /// `sampling/createMessage`, `roots/list`) with `params`; its answer.
    async fn ask(&self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject>;

    /// Whether the client takes a server's input rounds as results
    /// (2026-07-28) and sends the retry itself, rather than being asked.
    fn takes_input_rounds(&self) -> bool {
        false
    }

    /// Tells the client what a server said about its call (a log message),
    /// if the client asked to hear it. Must not wait: called on the
    /// upstream session's reading task. The default drops it.
    fn notify(&self, notification: &Notification) {
        let _ = notification;
    }
}

tokio::task_local! {
    /// The client of the upstream request being made on this task.
    static CURRENT: Arc<dyn Asker>;
}

/// Runs `work` (an upstream request) on behalf of `asker`'s client.
pub(crate) async fn on_behalf<F: std::future::Future>(
    asker: Option<Arc<dyn Asker>>,
    work: F,
) -> F::Output {
    match asker {
        Some(asker) => CURRENT.scope(asker, work).await,
        None => work.await,
    }
}

/// The calls in flight on each server, each with its client.
type CallsByServer = HashMap<String, Vec<(u64, Arc<dyn Asker>)>>;

/// How many resource updates wait for a slow client before it misses
/// some (it is then told of every resource it follows; see
/// [`ResourceUpdate`]).
const UPDATE_CAPACITY: usize = 256;

/// A server said one of its resources changed: the server, and the
/// resource's URI as that server names it.
pub type ResourceUpdate = (String, String);

/// The routes from upstream servers back to downstream clients.
pub struct Relay {
    calls: Mutex<CallsByServer>,
    next: AtomicU64,
    updates: broadcast::Sender<ResourceUpdate>,
}

impl Default for Relay {
    fn default() -> Self {
        Relay {
            calls: Mutex::default(),
            next: AtomicU64::default(),
            updates: broadcast::channel(UPDATE_CAPACITY).0,
        }
    }
}

impl fmt::Debug for Relay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Relay").finish_non_exhaustive()
    }
}

/// A call in flight on a server, on behalf of a client; dropped when the
/// call ends.
pub(crate) struct InFlight {
    relay: Arc<Relay>,
    server: String,
    key: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut calls = self.relay.lock();
        if let Some(list) = calls.get_mut(&self.server) {
            list.retain(|(key, _)| *key != self.key);
            if list.is_empty() {
                calls.remove(&self.server);
            }
        }
    }
}

impl Relay {
    /// A relay with no call in flight.
    pub fn new() -> Arc<Self> {
        Arc::new(Relay::default())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CallsByServer> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The handler the upstream sessions answer their servers through
    /// (give it to the connector's session options).
    pub fn handler(self: &Arc<Self>) -> Arc<dyn ClientHandler> {
        Arc::new(RelayHandler {
            relay: Arc::clone(self),
            server: None,
        })
    }

    /// Every `notifications/resources/updated` a server sends from now on.
    pub fn resource_updates(&self) -> broadcast::Receiver<ResourceUpdate> {
        self.updates.subscribe()
    }

    /// Counts a call on `server` on behalf of `asker` until dropped.
    pub(crate) fn in_flight(self: &Arc<Self>, server: &str, asker: Arc<dyn Asker>) -> InFlight {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock()
            .entry(server.to_owned())
            .or_default()
            .push((key, asker));
        InFlight {
            relay: Arc::clone(self),
            server: server.to_owned(),
            key,
        }
    }

    /// Whom to ask for `server`.
    fn asker(&self, server: Option<&str>) -> Result<Option<Arc<dyn Asker>>, String> {
        if let Ok(current) = CURRENT.try_with(Arc::clone) {
            return Ok(Some(current));
        }
        let Some(server) = server else {
            return Ok(None);
        };
        let calls = self.lock();
        match calls.get(server).map(Vec::as_slice) {
            None | Some([]) => Ok(None),
            Some([(_, only)]) => Ok(Some(Arc::clone(only))),
            Some(several) => Err(format!(
                "{} calls are in flight on server {server:?} and its request names none of them; it is not shown to any client",
                several.len()
            )),
        }
    }
}

struct RelayHandler {
    relay: Arc<Relay>,
    server: Option<String>,
}

#[async_trait]
impl ClientHandler for RelayHandler {
    fn capabilities(&self) -> Value {
        // What any downstream client may answer; each request is checked
        // against what its own client declared.
        json!({"roots": {}, "sampling": {}, "elicitation": {"form": {}, "url": {}}})
    }

    fn for_server(&self, server: &str) -> Option<Arc<dyn ClientHandler>> {
        Some(Arc::new(RelayHandler {
            relay: Arc::clone(&self.relay),
            server: Some(server.to_owned()),
        }))
    }

    /// A resource's update goes to every client that follows it (see
    /// [`Relay::resource_updates`]). A server's log message goes to the
    /// client of its call in flight, found as for a request; with several
    /// in flight nothing says whose call it is about, so no client is
    /// shown it.
    fn notification(&self, notification: &Notification) {
        if notification.method == "notifications/resources/updated" {
            let uri = notification
                .params
                .as_ref()
                .and_then(|params| params.get("uri"))
                .and_then(Value::as_str);
            if let (Some(server), Some(uri)) = (&self.server, uri) {
                // Whose subscription it is, the gateway knows.
                let _ = self.relay.updates.send((server.clone(), uri.to_owned()));
            }
            return;
        }
        if notification.method != "notifications/message" {
            return;
        }
        match self.relay.asker(self.server.as_deref()) {
            Ok(Some(asker)) => asker.notify(notification),
            Ok(None) => {}
            Err(why) => tracing::debug!(server = ?self.server, "log message not relayed: {why}"),
        }
    }

    async fn handle_request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        match self.relay.asker(self.server.as_deref()) {
            Ok(Some(asker)) => asker.ask(method, params).await,
            Ok(None) if method == "roots/list" => Ok(json!({"roots": []})),
            Ok(None) => Err(ErrorObject::new(
                METHOD_NOT_FOUND,
                format!("{method}: no client call is in flight to ask"),
            )),
            Err(why) => Err(ErrorObject::new(
                METHOD_NOT_FOUND,
                format!("{method}: {why}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that answers with its own name.
    struct Named(&'static str);

    #[async_trait]
    impl Asker for Named {
        async fn ask(&self, method: &str, _params: Option<Value>) -> Result<Value, ErrorObject> {
            Ok(json!({"client": self.0, "method": method}))
        }
    }

    async fn check(
        relay: &Arc<Relay>,
        current: Option<&'static str>,
        expected: Result<&str, &str>,
    ) {
        let handler = relay.handler().for_server("s").unwrap();
        let asker = current.map(|name| Arc::new(Named(name)) as Arc<dyn Asker>);
        let answer = on_behalf(asker, handler.handle_request("elicitation/create", None)).await;
        match (answer, expected) {
            (Ok(answer), Ok(client)) => assert_eq!(answer["client"], client),
            (Err(error), Err(why)) => assert!(error.message.contains(why), "{}", error.message),
            (answer, expected) => panic!("{answer:?}, expected {expected:?}"),
        }
    }

    #[tokio::test]
    async fn a_question_goes_to_its_own_client_or_to_none() {
        let relay = Relay::new();
        check(&relay, None, Err("no client call is in flight")).await;
        let roots = relay.handler().for_server("s").unwrap();
        assert_eq!(
            roots.handle_request("roots/list", None).await.unwrap(),
            json!({"roots": []})
        );
        let first = relay.in_flight("s", Arc::new(Named("first")));
        let _elsewhere = relay.in_flight("t", Arc::new(Named("other server")));
        check(&relay, None, Ok("first")).await;
        // The request being made names its client, whatever else runs.
        check(&relay, Some("current"), Ok("current")).await;
        let second = relay.in_flight("s", Arc::new(Named("second")));
        check(&relay, None, Err("2 calls are in flight on server \"s\"")).await;
        check(&relay, Some("current"), Ok("current")).await;
        drop(first);
        check(&relay, None, Ok("second")).await;
        drop(second);
        check(&relay, None, Err("no client call is in flight")).await;
    }

    /// A client that keeps what it is told.
    #[derive(Default)]
    struct Told(Mutex<Vec<String>>);

    #[async_trait]
    impl Asker for Told {
        async fn ask(&self, method: &str, _params: Option<Value>) -> Result<Value, ErrorObject> {
            Err(ErrorObject::method_not_found(method))
        }

        fn notify(&self, notification: &Notification) {
            let data = notification
                .params
                .as_ref()
                .and_then(|params| params.get("data"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            self.0.lock().unwrap().push(data.to_owned());
        }
    }

    #[test]
    fn a_log_message_goes_to_the_one_call_in_flight_on_its_server() {
        let relay = Relay::new();
        let handler = relay.handler().for_server("s").unwrap();
        let log = |data: &str| Notification {
            method: "notifications/message".into(),
            params: Some(json!({"level": "info", "data": data})),
        };
        handler.notification(&log("before any call"));
        let (first, other) = (Arc::new(Told::default()), Arc::new(Told::default()));
        let _elsewhere = relay.in_flight("t", other.clone());
        let call = relay.in_flight("s", first.clone());
        handler.notification(&log("one call"));
        handler.notification(&Notification {
            method: "notifications/resources/updated".into(),
            params: Some(json!({"uri": "file:///a"})),
        });
        let second = Arc::new(Told::default());
        let another = relay.in_flight("s", second.clone());
        handler.notification(&log("two calls: whose?"));
        drop(call);
        handler.notification(&log("the second alone"));
        drop(another);
        assert_eq!(*first.0.lock().unwrap(), ["one call"]);
        assert_eq!(*second.0.lock().unwrap(), ["the second alone"]);
        assert!(other.0.lock().unwrap().is_empty());
    }
}
