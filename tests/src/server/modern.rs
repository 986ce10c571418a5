//! What the example server does differently at 2026-07-28 (the modern,
//! handshake-free revisions): recognising a modern request by its
//! `_meta["io.modelcontextprotocol/protocolVersion"]` and refusing an
//! unsupported or missing revision with `UnsupportedProtocolVersionError`
//! (-32022, `data.supported`), the `resultType`/`serverInfo`/caching fields
//! of its results, the `subscriptions/listen` registry that `touch`
//! notifies, and the `input_required` results of Multi Round-Trip Requests.
//!
//! Subscriptions live in the server, not in a connection: over stateless
//! HTTP every POST is its own connection, and a `touch` on one must reach
//! the listen stream of another.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use mcp_transport::types::{
    META_LOG_LEVEL, META_PROTOCOL_VERSION, META_SERVER_INFO, META_SUBSCRIPTION_ID, is_modern,
};
use mcp_transport::{ErrorObject, JsonRpcMessage, RequestId};
use mcp_transport::{KNOWN_PROTOCOL_VERSIONS, error_codes};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::{Era, ExampleServer};

/// The revision a request names in its `_meta`, if it names one.
pub fn requested_version(params: &Value) -> Option<&str> {
    params
        .get("_meta")
        .and_then(|meta| meta.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
}

/// Whether a request carries the modern `_meta` key at all (even with a
/// value that is not a string).
pub fn is_modern_request(params: &Value) -> bool {
    params
        .get("_meta")
        .is_some_and(|meta| meta.get(META_PROTOCOL_VERSION).is_some())
}

/// The log level a modern request asked for, if any.
pub fn log_level(params: &Value) -> Option<&str> {
    params
        .get("_meta")
        .and_then(|meta| meta.get(META_LOG_LEVEL))
        .and_then(Value::as_str)
}

/// How the server serves one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// The `initialize`-based revisions (2025-11-25 and earlier).
    Legacy,
    /// Per-request `_meta`, no handshake (2026-07-28).
    Modern,
}

impl ExampleServer {
    /// Every revision the server speaks, newest first: its modern ones,
    /// then (unless modern-only) the legacy one it answers `initialize`
    /// with, or every legacy revision the client knows.
    pub fn supported_versions(&self) -> Vec<String> {
        let options = &self.options;
        let mut versions = Vec::new();
        if options.era != Era::Legacy {
            versions.extend(options.modern_versions.iter().cloned());
        }
        if options.era != Era::Modern {
            match &options.protocol_version {
                Some(version) => versions.push(version.clone()),
                None => versions.extend(
                    KNOWN_PROTOCOL_VERSIONS
                        .iter()
                        .filter(|v| !is_modern(v))
                        .map(|v| (*v).to_owned()),
                ),
            }
        }
        versions
    }

    /// `UnsupportedProtocolVersionError` for `requested` (`None`: the
    /// request named no revision).
    pub fn unsupported_version(&self, requested: Option<&str>) -> ErrorObject {
        let message = match requested {
            Some(version) => format!("Unsupported protocol version {version}"),
            None => "Unsupported protocol version: the request names none in \
                     _meta[\"io.modelcontextprotocol/protocolVersion\"]"
                .to_owned(),
        };
        ErrorObject {
            code: error_codes::UNSUPPORTED_PROTOCOL_VERSION,
            message,
            data: Some(json!({"supported": self.supported_versions(), "requested": requested})),
        }
    }

    /// How to serve a request of `method` on a connection that has (or has
    /// not) seen `initialize`, or the error refusing it.
    pub fn classify(
        &self,
        method: &str,
        params: &Value,
        initialized: bool,
    ) -> Result<Wire, ErrorObject> {
        let era = self.options.era;
        if method == "initialize" || era == Era::Legacy {
            // A legacy server ignores `_meta` it does not know.
            return Ok(Wire::Legacy);
        }
        if is_modern_request(params) {
            let requested = requested_version(params);
            let accepted = requested
                .is_some_and(|version| self.options.modern_versions.iter().any(|v| v == version));
            if self.options.lie_about_versions || !accepted {
                return Err(self.unsupported_version(requested));
            }
            return Ok(Wire::Modern);
        }
        if era == Era::Dual && initialized {
            return Ok(Wire::Legacy);
        }
        Err(self.unsupported_version(None))
    }

    /// The refusal of `initialize` by a modern-only server: it names the
    /// revisions it speaks, the only hint a legacy client can show.
    pub fn refuse_initialize(&self) -> ErrorObject {
        ErrorObject {
            code: error_codes::METHOD_NOT_FOUND,
            message: format!(
                "initialize is not supported: this server speaks only {} (no initialize handshake)",
                self.options.modern_versions.join(", ")
            ),
            data: Some(json!({"supported": self.supported_versions()})),
        }
    }

    fn server_info(&self) -> Value {
        json!({"name": self.options.name, "version": env!("CARGO_PKG_VERSION")})
    }

    /// The capabilities of both eras.
    pub(super) fn capabilities(&self) -> Value {
        json!({
            "tools": {"listChanged": true},
            "resources": {},
            "prompts": {},
            "logging": {},
        })
    }

    /// The answer to `server/discover`.
    pub(super) fn discover(&self) -> Value {
        let mut result = json!({
            "supportedVersions": self.supported_versions(),
            "capabilities": self.capabilities(),
            "instructions": super::INSTRUCTIONS,
        });
        self.cacheable(&mut result);
        result
    }

    /// Adds the caching hints of a cacheable modern result.
    pub(super) fn cacheable(&self, result: &mut Value) {
        if let Value::Object(map) = result {
            map.insert("ttlMs".to_owned(), json!(self.options.ttl_ms));
            map.insert(
                "cacheScope".to_owned(),
                json!(self.options.cache_scope.as_str()),
            );
        }
    }

    /// A modern result: `resultType` (`complete` unless the result says
    /// otherwise) and the server's identity in `_meta`.
    pub(super) fn modern_result(&self, mut result: Value) -> Value {
        if let Value::Object(map) = &mut result {
            map.entry("resultType")
                .or_insert_with(|| Value::from("complete"));
            let meta = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert(META_SERVER_INFO.to_owned(), self.server_info());
            }
        }
        result
    }

    /// How many `subscriptions/listen` streams are open.
    pub fn listener_count(&self) -> usize {
        super::lock(&self.state.subscriptions).len()
    }

    /// Tells every subscription that asked for `filter_key` (such as
    /// `toolsListChanged`) with `method`, tagged with its id.
    pub(super) async fn notify_subscribers(&self, filter_key: &str, method: &str) {
        let targets: Vec<(RequestId, mpsc::Sender<JsonRpcMessage>)> =
            super::lock(&self.state.subscriptions)
                .iter()
                .filter(|s| s.accepted.get(filter_key) == Some(&Value::Bool(true)))
                .map(|s| (s.id.clone(), s.outgoing.clone()))
                .collect();
        for (id, outgoing) in targets {
            let params = json!({"_meta": {META_SUBSCRIPTION_ID: id}});
            let _ = outgoing
                .send(JsonRpcMessage::notification(method, Some(params)))
                .await;
        }
    }
}

/// One open `subscriptions/listen`.
#[derive(Debug)]
pub(super) struct Subscription {
    key: u64,
    id: RequestId,
    /// The part of the filter the server honours.
    accepted: Map<String, Value>,
    outgoing: mpsc::Sender<JsonRpcMessage>,
}

/// Removes its subscription when the listen request ends (answered,
/// cancelled or its connection gone).
pub(super) struct Registered {
    server: Arc<ExampleServer>,
    key: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        super::lock(&self.server.state.subscriptions).retain(|s| s.key != self.key);
    }
}

/// The part of a listen filter this server honours: tool list changes
/// (the only change it advertises). Prompt and resource list changes and
/// resource subscriptions are left out, as the spec asks for what a
/// server does not support.
pub(super) fn accepted_filter(params: &Value) -> Map<String, Value> {
    let mut accepted = Map::new();
    let asked = params.get("notifications");
    if asked
        .and_then(|n| n.get("toolsListChanged"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        accepted.insert("toolsListChanged".to_owned(), Value::Bool(true));
    }
    accepted
}

/// Registers a subscription whose notifications go to `outgoing`, after
/// its acknowledgement was sent there.
pub(super) fn register(
    server: &Arc<ExampleServer>,
    id: RequestId,
    accepted: Map<String, Value>,
    outgoing: mpsc::Sender<JsonRpcMessage>,
) -> Registered {
    let key = server
        .state
        .next_subscription
        .fetch_add(1, Ordering::SeqCst);
    super::lock(&server.state.subscriptions).push(Subscription {
        key,
        id,
        accepted,
        outgoing,
    });
    Registered {
        server: Arc::clone(server),
        key,
    }
}

/// The acknowledgement that opens a subscription.
pub(super) fn acknowledgement(id: &RequestId, accepted: &Map<String, Value>) -> JsonRpcMessage {
    JsonRpcMessage::notification(
        "notifications/subscriptions/acknowledged",
        Some(json!({"_meta": {META_SUBSCRIPTION_ID: id}, "notifications": accepted})),
    )
}

/// The graceful end of a subscription the server tears down.
pub(super) fn subscription_closed(id: &RequestId) -> Value {
    json!({"_meta": {META_SUBSCRIPTION_ID: id}})
}

/// An `input_required` result asking the client for `requests` (key →
/// request), with the state the retry must echo.
pub(super) fn input_required(requests: Value, state: String) -> Value {
    json!({"resultType": "input_required", "inputRequests": requests, "requestState": state})
}

/// The client's answer to input request `key` on a retry, if the retry
/// echoes `state`.
pub(super) fn input_response<'a>(params: &'a Value, key: &str, state: &str) -> Option<&'a Value> {
    if params.get("requestState").and_then(Value::as_str) != Some(state) {
        return None;
    }
    params.get("inputResponses")?.get(key)
}

/// The form the `elicit` tool asks for.
pub(super) fn elicitation_request(round: u64, rounds: u64) -> Value {
    json!({
        "mode": "form",
        "message": format!("What is your name? (question {round} of {rounds})"),
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Name"}},
            "required": ["name"],
        },
    })
}

/// The `elicit` tool's result for the client's last answer.
pub(super) fn elicitation_outcome(answer: &Value) -> Value {
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("missing");
    let text = match (
        action,
        answer.pointer("/content/name").and_then(Value::as_str),
    ) {
        ("accept", Some(name)) => format!("hello {name}"),
        _ => format!("elicitation {action}"),
    };
    let mut result = super::text(text);
    result["structuredContent"] = answer.clone();
    result
}

#[cfg(test)]
mod tests {
    use super::super::ServerOptions;
    use super::*;

    fn modern(version: &str) -> Value {
        json!({"_meta": {META_PROTOCOL_VERSION: version}})
    }

    #[test]
    fn a_dual_era_server_serves_both_generations_and_refuses_the_rest() {
        let server = ExampleServer::new(ServerOptions::default());
        assert_eq!(
            server.classify("tools/list", &modern("2026-07-28"), false),
            Ok(Wire::Modern)
        );
        assert_eq!(
            server.classify("initialize", &json!({}), false),
            Ok(Wire::Legacy)
        );
        assert_eq!(
            server.classify("tools/list", &json!({}), true),
            Ok(Wire::Legacy)
        );
        let missing = server
            .classify("tools/list", &json!({}), false)
            .unwrap_err();
        assert_eq!(missing.code, error_codes::UNSUPPORTED_PROTOCOL_VERSION);
        let old = server
            .classify("tools/list", &modern("2099-01-01"), false)
            .unwrap_err();
        assert_eq!(
            old.data.unwrap()["supported"],
            json!([
                "2026-07-28",
                "2025-11-25",
                "2025-06-18",
                "2025-03-26",
                "2024-11-05"
            ])
        );
    }

    #[test]
    fn a_lying_server_refuses_what_it_lists() {
        let server = ExampleServer::new(ServerOptions {
            lie_about_versions: true,
            ..ServerOptions::default()
        });
        let refusal = server
            .classify("server/discover", &modern("2026-07-28"), false)
            .unwrap_err();
        assert_eq!(refusal.code, error_codes::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(refusal.data.unwrap()["supported"][0], "2026-07-28");
    }

    #[test]
    fn a_legacy_server_ignores_modern_meta() {
        let server = ExampleServer::new(ServerOptions {
            era: Era::Legacy,
            ..ServerOptions::default()
        });
        assert_eq!(
            server.classify("server/discover", &modern("2026-07-28"), false),
            Ok(Wire::Legacy)
        );
        assert_eq!(server.supported_versions().len(), 4);
    }
}
