//! The request path callers take: the modern `_meta` every 2026-07-28
//! request carries, and Multi Round-Trip Requests (SEP-2322). An
//! `input_required` result's `inputRequests` (elicitation, sampling, roots)
//! go to the host's [`ClientHandler`], the same one that answers the
//! server→client requests of older revisions, and the request is sent
//! again with a new id, the `inputResponses` and the `requestState`
//! echoed unchanged, for at most [`SessionOptions::max_input_rounds`]
//! rounds of at most [`MAX_INPUT_REQUESTS`] inputs each. Results without
//! `resultType` (older servers) are complete.
//!
//! A caller that passes the rounds on to its own client (a gateway) asks
//! for the `input_required` result itself
//! ([`CallOptions::hand_back_input_rounds`]) and sends the retry.
//!
//! Whether an `input_required` answer is followed at all is decided by
//! [`input_rounds_allowed`] alone: only `tools/call`, `prompts/get` and
//! `resources/read`, and only at a revision that has the rounds; anywhere
//! else it is an error naming the method, and nothing is sent again. All
//! rounds share the call's one deadline: an answered round restarts its
//! inactivity limit, and its total holds across them.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::error::{TransportError, TransportErrorKind};
use crate::lock;
use crate::params::Params;
use crate::request_meta::RequestMeta;

use super::deadlines::{Activity, Deadline};
use super::pending::{Body, Outcome};
use super::{CallOptions, SessionOptions, Shared};

/// `resultType` of an interim result that needs input from the client.
const INPUT_REQUIRED: &str = "input_required";

/// Most input requests the host is asked to answer at once: in one input
/// round, and over one task's life. A server that asks for more is
/// stopped rather than followed.
pub(super) const MAX_INPUT_REQUESTS: usize = 64;

/// The requests SEP-2322 lets a server answer with `input_required`.
const INPUT_ROUND_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// Whether a server may answer `method` with `input_required` at the
/// negotiated `revision`: the rounds exist from 2026-07-28 on, and only
/// for the requests the specification names ("Servers MUST NOT send
/// `InputRequiredResult` responses on any other client requests").
pub(super) fn input_rounds_allowed(revision: &str, method: &str) -> bool {
    crate::protocol::is_modern(revision) && INPUT_ROUND_METHODS.contains(&method)
}

/// The error of a server that asked the host for more than
/// [`MAX_INPUT_REQUESTS`] inputs; `asker` says who asked.
pub(super) fn too_many_inputs(server: &str, asker: &str) -> TransportError {
    TransportError::protocol(
        server,
        format!("{asker} asked for more than {MAX_INPUT_REQUESTS} inputs; not answered"),
    )
}

/// The `_meta` a modern session at `version` adds to every request:
/// revision, client identity, client capabilities and, when the host asked
/// for logs, the level.
pub(super) fn modern_meta(version: &str, options: &SessionOptions) -> RequestMeta {
    let mut entries = Map::new();
    entries.insert(
        crate::protocol::META_PROTOCOL_VERSION.to_owned(),
        Value::from(version),
    );
    entries.insert(
        crate::protocol::META_CLIENT_INFO.to_owned(),
        json!(options.client_info),
    );
    entries.insert(
        crate::protocol::META_CLIENT_CAPABILITIES.to_owned(),
        client_capabilities(options, true),
    );
    if let Some(level) = &options.log_level {
        entries.insert(
            crate::protocol::META_LOG_LEVEL.to_owned(),
            Value::from(level.as_str()),
        );
    }
    RequestMeta::new(version, entries)
}

/// The capabilities a session declares: the host handler's, plus the
/// extensions the session was told to announce (modern revisions only).
pub(super) fn client_capabilities(options: &SessionOptions, modern: bool) -> Value {
    let mut capabilities = options
        .handler
        .as_ref()
        .map_or_else(|| json!({}), |handler| handler.capabilities());
    if modern
        && !options.extensions.is_empty()
        && let Value::Object(map) = &mut capabilities
    {
        let extensions = map
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(extensions) = extensions {
            // A host that declared an extension itself keeps its settings.
            for (name, settings) in &options.extensions {
                extensions
                    .entry(name.clone())
                    .or_insert_with(|| settings.clone());
            }
        }
    }
    capabilities
}

impl Shared {
    /// A request as callers send it: `_meta` at 2026-07-28, then as many
    /// input rounds as the server asks for, within the session's bound.
    pub(super) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
        options: &CallOptions,
    ) -> Result<Value, TransportError> {
        let mut deadline = self.deadline(method, options);
        self.request_within(method, params, options, &mut deadline)
            .await
    }

    /// [`Shared::request`] within a deadline that runs already (a task's).
    pub(super) async fn request_within(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
        options: &CallOptions,
        deadline: &mut Deadline,
    ) -> Result<Value, TransportError> {
        let body = self
            .request_body(method, params.into(), options, deadline)
            .await?;
        self.body_value(method, body)
    }

    /// [`Shared::request`] with the result left raw when the session had
    /// no reason to look inside it (a complete result, no `serverInfo`
    /// still to learn), for the caller to decode into its type: a raw body
    /// is always a complete result. Every round runs within `deadline`,
    /// which each answered round moves on.
    pub(super) async fn request_body(
        self: &Arc<Self>,
        method: &str,
        params: Params<'_>,
        options: &CallOptions,
        deadline: &mut Deadline,
    ) -> Result<Body, TransportError> {
        let meta = self.modern.get();
        // The parameters are needed again only for an input round: a
        // transport that encodes from a borrow hands them back, for any
        // other a copy is kept. Either way they are the caller's, without
        // the session's `_meta`, which every round adds again.
        let by_reference = self.sends_by_reference(meta.is_some());
        let copy = (!by_reference).then(|| params.clone());
        let (body, kept) = self
            .exchange_keeping(
                method,
                params,
                options,
                deadline.clone(),
                by_reference,
                meta,
            )
            .await?;
        let learns_info = meta.is_some()
            && lock(&self.server_info).is_none()
            && body.may_have(crate::protocol::META_SERVER_INFO);
        if body.outcome_in_era(meta.is_some()) == Outcome::Complete && !learns_info {
            return Ok(body);
        }
        let params = copy.or(kept).and_then(Params::into_value);
        let mut result = self.body_value(method, body)?;
        let mut rounds = 0;
        while result.get("resultType").and_then(Value::as_str) == Some(INPUT_REQUIRED) {
            if options.hand_back_input_rounds {
                // The caller sends the retry itself.
                break;
            }
            let revision = self.revision.get().map_or("", String::as_str);
            if !input_rounds_allowed(revision, method) {
                let why = if crate::protocol::is_modern(revision) {
                    format!(
                        "{revision} allows only on {}",
                        INPUT_ROUND_METHODS.join(", ")
                    )
                } else {
                    format!("does not exist at {revision}")
                };
                return Err(TransportError::protocol(
                    &*self.server,
                    format!(
                        "{method} was answered with input_required, which {why}; not sent again"
                    ),
                ));
            }
            rounds += 1;
            if rounds > self.options.max_input_rounds {
                return Err(TransportError::new(
                    &*self.server,
                    TransportErrorKind::InputRoundsExceeded {
                        method: method.to_owned(),
                        rounds: self.options.max_input_rounds,
                    },
                ));
            }
            let asked = result
                .get("inputRequests")
                .and_then(Value::as_object)
                .map_or(0, Map::len);
            let responses = self
                .input_round_step(method, asked)
                .run(self.answer_input_requests(method, &result))
                .await?;
            deadline.observe(Instant::now(), Activity::InputAnswered);
            let retry = retry_params(params.clone(), responses, result.get("requestState"));
            let (body, _) = self
                .exchange_keeping(
                    method,
                    Params::Value(Some(retry)),
                    options,
                    deadline.clone(),
                    false,
                    meta,
                )
                .await?;
            result = self.body_value(method, body)?;
        }
        if meta.is_some() {
            self.note_server_info(&result);
        }
        Ok(Body::Value(result))
    }

    /// Keeps the first `_meta.serverInfo` a modern server sends in a result.
    fn note_server_info(&self, result: &Value) {
        let Some(info) = result
            .get("_meta")
            .and_then(|meta| meta.get(crate::protocol::META_SERVER_INFO))
        else {
            return;
        };
        let mut known = lock(&self.server_info);
        if known.is_none() {
            *known = serde_json::from_value(info.clone()).ok();
        }
    }

    /// Runs every input request of an `input_required` result on the
    /// host's handler, concurrently, and collects the answers by key.
    async fn answer_input_requests(
        &self,
        method: &str,
        result: &Value,
    ) -> Result<Option<Map<String, Value>>, TransportError> {
        let Some(requests) = result.get("inputRequests") else {
            // Only a state to echo (load shedding): retry at once.
            return Ok(None);
        };
        let Some(requests) = requests.as_object() else {
            return Err(TransportError::protocol(
                &*self.server,
                format!("{method}: inputRequests is not an object"),
            ));
        };
        if requests.len() > MAX_INPUT_REQUESTS {
            return Err(too_many_inputs(&self.server, method));
        }
        let failed = |input: &str, message: String| {
            TransportError::new(
                &*self.server,
                TransportErrorKind::InputRequestFailed {
                    method: method.to_owned(),
                    input: input.to_owned(),
                    message,
                },
            )
        };
        let Some(handler) = self.options.handler.clone() else {
            let first = requests
                .values()
                .find_map(|r| r.get("method").and_then(Value::as_str))
                .unwrap_or("?");
            return Err(failed(
                first,
                "this client answers no input requests".into(),
            ));
        };
        let mut answers = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            let Some(input) = request.get("method").and_then(Value::as_str) else {
                return Err(TransportError::protocol(
                    &*self.server,
                    format!("{method}: input request {key:?} names no method"),
                ));
            };
            let handler = Arc::clone(&handler);
            let params = request.get("params").cloned();
            let input = input.to_owned();
            let key = key.clone();
            answers.push(async move {
                let outcome = handler.handle_request(&input, params).await;
                (key, input, outcome)
            });
        }
        let mut responses = Map::new();
        for (key, input, outcome) in futures::future::join_all(answers).await {
            match outcome {
                Ok(answer) => {
                    responses.insert(key, answer);
                }
                Err(error) => return Err(failed(&input, error.message)),
            }
        }
        Ok(Some(responses))
    }
}

/// The original parameters with this round's answers and the server's
/// state, echoed exactly as it was sent (or left out when it sent none).
fn retry_params(
    params: Option<Value>,
    responses: Option<Map<String, Value>>,
    state: Option<&Value>,
) -> Value {
    let mut params = match params {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    params.remove("inputResponses");
    params.remove("requestState");
    if let Some(responses) = responses {
        params.insert("inputResponses".to_owned(), Value::Object(responses));
    }
    if let Some(state) = state {
        params.insert("requestState".to_owned(), state.clone());
    }
    Value::Object(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_echoes_the_state_exactly_and_replaces_earlier_answers() {
        let original = json!({"name": "t", "inputResponses": {"old": {}}, "requestState": "old"});
        let mut responses = Map::new();
        responses.insert("k".into(), json!({"action": "accept"}));
        let retry = retry_params(Some(original), Some(responses), Some(&json!("s1 ")));
        assert_eq!(
            retry,
            json!({"name": "t", "inputResponses": {"k": {"action": "accept"}}, "requestState": "s1 "})
        );
        let bare = retry_params(Some(json!({"name": "t"})), None, None);
        assert_eq!(bare, json!({"name": "t"}));
    }

    #[test]
    fn modern_meta_names_the_revision_client_and_capabilities() {
        let options = SessionOptions::default().with_log_level("debug");
        let meta = modern_meta("2026-07-28", &options);
        let params = meta.apply(Some(json!({"_meta": {"progressToken": 3}, "name": "x"})));
        assert_eq!(params["_meta"]["progressToken"], json!(3));
        assert_eq!(
            params["_meta"][crate::protocol::META_PROTOCOL_VERSION],
            json!("2026-07-28")
        );
        assert_eq!(
            params["_meta"][crate::protocol::META_CLIENT_CAPABILITIES],
            json!({"extensions": {crate::protocol::TASKS_EXTENSION: {}}})
        );
        assert_eq!(
            params["_meta"][crate::protocol::META_LOG_LEVEL],
            json!("debug")
        );
        assert_eq!(params["name"], json!("x"));
        assert!(meta.apply(None)["_meta"][crate::protocol::META_CLIENT_INFO].is_object());
        assert_eq!(meta.version(), "2026-07-28");
    }
}
