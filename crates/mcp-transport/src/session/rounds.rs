//! The request path callers take: the modern `_meta` every 2026-07-28
//! request carries, and Multi Round-Trip Requests (SEP-2322). An
//! `input_required` result's `inputRequests` (elicitation, sampling, roots)
//! go to the host's [`ClientHandler`], the same one that answers the
//! server→client requests of older revisions, and the request is sent
//! again with a new id, the `inputResponses` and the `requestState`
//! echoed unchanged, for at most [`SessionOptions::max_input_rounds`]
//! rounds. Results without `resultType` (older servers) are complete.

use super::*;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;

use super::pending::{Body, Outcome};

/// `resultType` of an interim result that needs input from the client.
const INPUT_REQUIRED: &str = "input_required";

/// The `_meta` a modern session adds to every request: revision, client
/// identity, client capabilities and, when the host asked for logs, the
/// level.
#[derive(Debug, Clone)]
pub(super) struct ModernMeta {
    pub(super) entries: Map<String, Value>,
    /// The same entries as one object, encoded once and spliced into every
    /// request a transport encodes from a borrow whose caller set no
    /// `_meta` keys of its own (see [`ModernMeta::request`]).
    object: Option<Box<RawValue>>,
}

impl ModernMeta {
    pub(super) fn new(version: &str, options: &SessionOptions) -> ModernMeta {
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
        // Encoding a `Value` cannot fail: every key is a string.
        let object = serde_json::value::to_raw_value(&entries).ok();
        ModernMeta { entries, object }
    }

    /// The request `id` of `method` as [`ModernMeta::apply`] would send
    /// it, encoded from borrows: the caller's parameters and `_meta` keys
    /// as they are, these entries as encoded once (or, after a caller's
    /// own `_meta` keys, one by one). Nothing is built or copied per
    /// request.
    pub(super) fn request<'a>(
        &'a self,
        id: i64,
        method: &'a str,
        params: Option<&'a Value>,
    ) -> ModernRequest<'a> {
        ModernRequest {
            id,
            method,
            params: params.and_then(Value::as_object),
            meta: self,
        }
    }

    /// `params` with these entries in its `_meta` (keys the caller set
    /// there, like `progressToken`, stay).
    pub(super) fn apply(&self, params: Option<Value>) -> Value {
        pending::with_meta(params, self.entries.clone())
    }
}

/// A request with the session's modern `_meta` spliced in (see
/// [`ModernMeta::request`]). Parameters that are not an object become
/// `{"_meta": …}` alone, and a caller's `_meta` that is not an object is
/// replaced, as [`ModernMeta::apply`] does.
pub(super) struct ModernRequest<'a> {
    id: i64,
    method: &'a str,
    params: Option<&'a Map<String, Value>>,
    meta: &'a ModernMeta,
}

impl<'a> ModernRequest<'a> {
    /// The caller's own `_meta` keys that the session's entries do not
    /// replace (a progress token).
    fn callers_meta(&self) -> impl Iterator<Item = (&'a String, &'a Value)> + use<'a> {
        let own = &self.meta.entries;
        self.params
            .and_then(|params| params.get("_meta"))
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(move |(key, _)| !own.contains_key(key.as_str()))
    }
}

impl Serialize for ModernRequest<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        crate::message::RequestRef {
            id: &RequestId::Number(self.id),
            method: self.method,
            params: Some(&SplicedParams(self)),
        }
        .serialize(serializer)
    }
}

/// The parameters of a [`ModernRequest`]: the caller's members, then
/// `_meta`.
struct SplicedParams<'a>(&'a ModernRequest<'a>);

impl Serialize for SplicedParams<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let members = self.0.params.into_iter().flatten();
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in members.filter(|(key, _)| key.as_str() != "_meta") {
            map.serialize_entry(key, value)?;
        }
        match &self.0.meta.object {
            Some(object) if self.0.callers_meta().next().is_none() => {
                map.serialize_entry("_meta", &**object)?
            }
            _ => map.serialize_entry("_meta", &SplicedMeta(self.0))?,
        }
        map.end()
    }
}

/// The `_meta` of a [`ModernRequest`]: the caller's keys (a progress
/// token) that the session's entries do not replace, then those entries.
struct SplicedMeta<'a>(&'a ModernRequest<'a>);

impl Serialize for SplicedMeta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.0.callers_meta() {
            map.serialize_entry(key, value)?;
        }
        for (key, value) in &self.0.meta.entries {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
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
        let body = self.request_body(method, params, options).await?;
        self.body_value(method, body)
    }

    /// [`Shared::request`] with the result left raw when the session had
    /// no reason to look inside it (a complete result, no `serverInfo`
    /// still to learn), for the caller to decode into its type: a raw body
    /// is always a complete result.
    pub(super) async fn request_body(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
        options: &CallOptions,
    ) -> Result<Body, TransportError> {
        let meta = self.modern.get();
        // The parameters are needed again only for an input round: a
        // transport that encodes from a borrow hands them back, for any
        // other a copy is kept. Either way they are the caller's, without
        // the session's `_meta`, which every round adds again.
        let by_reference = self.sends_by_reference();
        let copy = (!by_reference).then(|| params.clone());
        let (body, kept) = self
            .exchange_keeping(method, params, options, by_reference, meta)
            .await?;
        let learns_info = meta.is_some()
            && lock(&self.server_info).is_none()
            && body.may_have(crate::protocol::META_SERVER_INFO);
        if body.outcome_in_era(meta.is_some()) == Outcome::Complete && !learns_info {
            return Ok(body);
        }
        let params = copy.unwrap_or(kept);
        let mut result = self.body_value(method, body)?;
        let mut rounds = 0;
        while result.get("resultType").and_then(Value::as_str) == Some(INPUT_REQUIRED) {
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
            let responses = self.answer_input_requests(method, &result).await?;
            let retry = retry_params(params.clone(), responses, result.get("requestState"));
            let (body, _) = self
                .exchange_keeping(method, Some(retry), options, false, meta)
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
    fn modern_meta_keeps_the_callers_own_keys() {
        let options = SessionOptions::default();
        let meta = ModernMeta::new("2026-07-28", &options);
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
        assert_eq!(params["name"], json!("x"));
        let no_params = meta.apply(None);
        assert!(no_params["_meta"][crate::protocol::META_CLIENT_INFO].is_object());
    }

    /// The request spliced from borrows reads as the one `apply` builds.
    fn check_spliced(meta: &ModernMeta, params: Option<Value>) {
        let spliced =
            serde_json::to_string(&meta.request(7, "tools/call", params.as_ref())).unwrap();
        let built = JsonRpcMessage::Request(Request {
            id: RequestId::Number(7),
            method: "tools/call".to_owned(),
            params: Some(meta.apply(params.clone())),
        });
        let spliced: Value = serde_json::from_str(&spliced).unwrap();
        assert_eq!(spliced, serde_json::to_value(&built).unwrap(), "{params:?}");
    }

    #[test]
    fn a_spliced_request_carries_what_apply_builds() {
        let options = SessionOptions::default().with_log_level("debug");
        let meta = ModernMeta::new("2026-07-28", &options);
        check_spliced(&meta, None);
        check_spliced(
            &meta,
            Some(json!({"name": "echo", "arguments": {"message": "hi"}})),
        );
        // the caller's own keys stay; the session's replace a caller's
        check_spliced(
            &meta,
            Some(json!({"name": "x", "_meta": {
                "progressToken": 3,
                crate::protocol::META_PROTOCOL_VERSION: "1999-01-01",
            }})),
        );
        // a caller's `_meta` with nothing of its own left is the session's
        check_spliced(
            &meta,
            Some(json!({"name": "x", "_meta": {
                crate::protocol::META_PROTOCOL_VERSION: "1999-01-01",
            }})),
        );
        check_spliced(&meta, Some(json!({"name": "x", "_meta": {}})));
        // a `_meta` or parameters that are not an object are replaced
        check_spliced(&meta, Some(json!({"name": "x", "_meta": [1, 2]})));
        check_spliced(&meta, Some(json!([1, 2])));
        check_spliced(&meta, Some(json!("text")));
    }
}
