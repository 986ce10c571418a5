//! The `_meta` a session at MCP 2026-07-28 or later adds to every request
//! (revision, client identity, client capabilities, log level), made once
//! per session and written into each request without being copied.
//!
//! A transport that encodes requests from borrows (stdio's queue, and
//! streamable HTTP through its [`crate::transport::ModernSender`]) writes the
//! caller's parameters as they are and the session's entries as encoded
//! once ([`RequestMeta::request`]); any other transport gets the entries
//! added to the parameters ([`RequestMeta::apply`]), and both write the
//! same request.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::message::{RequestId, RequestRef};
use crate::params::ParamsRef;
use crate::protocol::REQUEST_STATED_META as CALLER_MAY_STATE;

/// Whether the caller's `_meta` entry `key` is written rather than the
/// session's.
fn callers_entry_stays(key: &str, session: &Map<String, Value>) -> bool {
    !session.contains_key(key) || CALLER_MAY_STATE.contains(&key)
}

/// The `_meta` entries a modern session adds to every request, kept
/// decoded (to merge with a caller's own `_meta` keys) and encoded once.
#[derive(Debug, Clone)]
pub(crate) struct RequestMeta {
    // Read by streamable HTTP alone, for its `MCP-Protocol-Version`.
    #[cfg_attr(not(feature = "streamable-http"), allow(dead_code))]
    version: String,
    entries: Map<String, Value>,
    /// The same entries as one object, written as they are into every
    /// request whose caller set no `_meta` keys of its own.
    object: Option<Box<RawValue>>,
}

impl RequestMeta {
    /// Entries for requests at `version`; `entries` hold the revision
    /// itself under [`crate::protocol::META_PROTOCOL_VERSION`].
    pub(crate) fn new(version: &str, entries: Map<String, Value>) -> RequestMeta {
        // Encoding a `Value` cannot fail: every key is a string.
        let object = serde_json::value::to_raw_value(&entries).ok();
        RequestMeta {
            version: version.to_owned(),
            entries,
            object,
        }
    }

    /// The protocol revision the requests are sent at (what streamable
    /// HTTP puts in `MCP-Protocol-Version`).
    #[cfg_attr(not(feature = "streamable-http"), allow(dead_code))]
    pub(crate) fn version(&self) -> &str {
        &self.version
    }

    /// `params` with these entries in its `_meta`: keys the caller set
    /// there (a progress token, and the client's capabilities or log level
    /// for this request) stay, these replace the caller's others of the
    /// same name; parameters that are not an object, or a `_meta` that is
    /// not one, are replaced.
    pub(crate) fn apply(&self, params: Option<Value>) -> Value {
        let stated = |key: &str| {
            params
                .as_ref()
                .and_then(|params| params.get("_meta"))
                .and_then(Value::as_object)
                .is_some_and(|meta| meta.contains_key(key))
        };
        let entries: Vec<(String, Value)> = self
            .entries
            .iter()
            .filter(|(key, _)| !(CALLER_MAY_STATE.contains(&key.as_str()) && stated(key)))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        with_meta(params, entries)
    }

    /// The request `id` of `method` as [`RequestMeta::apply`] would have
    /// it, encoded from borrows: the caller's parameters and `_meta` keys
    /// as they are, these entries as encoded once (or, after a caller's
    /// own `_meta` keys, one by one). Nothing is built or copied.
    pub(crate) fn request<'a>(
        &'a self,
        id: &'a RequestId,
        method: &'a str,
        params: ParamsRef<'a>,
    ) -> SplicedRequest<'a> {
        SplicedRequest {
            id,
            method,
            params,
            meta: self,
        }
    }
}

/// `params` (an object, made one if it is not) with `entries` added to its
/// `_meta`; keys already there and not in `entries` stay.
pub(crate) fn with_meta(
    params: Option<Value>,
    entries: impl IntoIterator<Item = (String, Value)>,
) -> Value {
    let mut params = match params {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.extend(entries);
    }
    Value::Object(params)
}

/// A request with a session's [`RequestMeta`] spliced in (see
/// [`RequestMeta::request`]).
pub(crate) struct SplicedRequest<'a> {
    id: &'a RequestId,
    method: &'a str,
    params: ParamsRef<'a>,
    meta: &'a RequestMeta,
}

impl<'a> SplicedRequest<'a> {
    /// The caller's own `_meta` keys that the session's entries do not
    /// replace (a progress token, capabilities or log level stated for
    /// this request).
    fn callers_meta(&self) -> impl Iterator<Item = (&'a String, &'a Value)> + use<'a> {
        let own = &self.meta.entries;
        self.params
            .member("_meta")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(move |(key, _)| callers_entry_stays(key, own))
    }

    /// Whether the caller stated the session's entry `key` for this
    /// request.
    fn caller_states(&self, key: &str) -> bool {
        CALLER_MAY_STATE.contains(&key)
            && self
                .params
                .member("_meta")
                .and_then(Value::as_object)
                .is_some_and(|meta| meta.contains_key(key))
    }
}

impl Serialize for SplicedRequest<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RequestRef {
            id: self.id,
            method: self.method,
            params: Some(&SplicedParams(self)),
        }
        .serialize(serializer)
    }
}

/// The parameters of a [`SplicedRequest`]: the caller's members, then
/// `_meta`.
struct SplicedParams<'a>(&'a SplicedRequest<'a>);

impl Serialize for SplicedParams<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let members = self.0.params.members();
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in members.filter(|(key, _)| *key != "_meta") {
            map.serialize_entry(key, &value)?;
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

/// The `_meta` of a [`SplicedRequest`]: the caller's keys (a progress
/// token) that the session's entries do not replace, then those entries.
struct SplicedMeta<'a>(&'a SplicedRequest<'a>);

impl Serialize for SplicedMeta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.0.callers_meta() {
            map.serialize_entry(key, value)?;
        }
        for (key, value) in &self.0.meta.entries {
            if !self.0.caller_states(key) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{JsonRpcMessage, Request};
    use crate::params::Params;
    use crate::protocol::{
        META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
    };
    use serde_json::json;

    fn meta() -> RequestMeta {
        let entries = json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_INFO: {"name": "client", "version": "1.0.0"},
            META_CLIENT_CAPABILITIES: {"sampling": {}, "roots": {}},
            META_LOG_LEVEL: "debug",
        });
        let Value::Object(entries) = entries else {
            unreachable!("an object literal")
        };
        RequestMeta::new("2026-07-28", entries)
    }

    /// The request spliced from borrows reads as the one `apply` builds,
    /// under a number id and a string id alike.
    fn check<'a>(params: impl Into<Params<'a>>) {
        let params = params.into();
        let meta = meta();
        for id in [RequestId::Number(7), RequestId::String("reissue-1".into())] {
            let spliced =
                serde_json::to_string(&meta.request(&id, "tools/call", params.view())).unwrap();
            let built = JsonRpcMessage::Request(Request {
                id: id.clone(),
                method: "tools/call".to_owned(),
                params: Some(meta.apply(params.clone().into_value())),
            });
            let spliced: Value = serde_json::from_str(&spliced).unwrap();
            assert_eq!(spliced, serde_json::to_value(&built).unwrap(), "{params:?}");
        }
    }

    #[test]
    fn a_spliced_request_carries_what_apply_builds() {
        check(None);
        check(Some(
            json!({"name": "echo", "arguments": {"message": "hi"}}),
        ));
        // the caller's own keys stay; the session's replace a caller's
        check(Some(json!({"name": "x", "_meta": {
            "progressToken": 3,
            META_PROTOCOL_VERSION: "1999-01-01",
        }})));
        // a caller's `_meta` with nothing of its own left is the session's
        check(Some(json!({"name": "x", "_meta": {
            META_PROTOCOL_VERSION: "1999-01-01",
        }})));
        check(Some(json!({"name": "x", "_meta": {}})));
        // capabilities and a log level stated for this request are the
        // caller's, with the session's other entries beside them
        check(Some(json!({"name": "x", "_meta": {
            META_CLIENT_CAPABILITIES: {"roots": {}},
            META_PROTOCOL_VERSION: "1999-01-01",
        }})));
        check(Some(json!({"name": "x", "_meta": {
            META_LOG_LEVEL: "error",
            META_CLIENT_CAPABILITIES: {},
            "progressToken": "p",
        }})));
        // a `_meta` or parameters that are not an object are replaced
        check(Some(json!({"name": "x", "_meta": [1, 2]})));
        check(Some(json!([1, 2])));
        check(Some(json!("text")));
        // a tool call's name and arguments, kept apart
        check(Params::ToolCall {
            name: "echo",
            arguments: Some(json!({"message": "hi", "_meta": {"inside": true}})),
        });
        check(Params::ToolCall {
            name: "echo",
            arguments: None,
        });
    }

    #[test]
    fn apply_keeps_the_callers_own_keys() {
        let meta = meta();
        let params = meta.apply(Some(json!({"_meta": {"progressToken": 3}, "name": "x"})));
        assert_eq!(params["_meta"]["progressToken"], json!(3));
        assert_eq!(params["_meta"][META_PROTOCOL_VERSION], json!("2026-07-28"));
        assert_eq!(params["name"], json!("x"));
        assert_eq!(meta.version(), "2026-07-28");
        assert!(meta.apply(None)["_meta"][META_CLIENT_INFO].is_object());
    }

    #[test]
    fn a_caller_states_capabilities_and_log_level_but_not_the_revision() {
        let meta = meta();
        let params = meta.apply(Some(json!({"_meta": {
            META_CLIENT_CAPABILITIES: {"elicitation": {}},
            META_LOG_LEVEL: "error",
            META_PROTOCOL_VERSION: "1999-01-01",
            META_CLIENT_INFO: {"name": "other", "version": "0"},
        }})));
        assert_eq!(
            params["_meta"][META_CLIENT_CAPABILITIES],
            json!({"elicitation": {}})
        );
        assert_eq!(params["_meta"][META_LOG_LEVEL], json!("error"));
        assert_eq!(params["_meta"][META_PROTOCOL_VERSION], json!("2026-07-28"));
        assert_eq!(params["_meta"][META_CLIENT_INFO]["name"], json!("client"));
    }
}
