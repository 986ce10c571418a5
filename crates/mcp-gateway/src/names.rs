//! The names a downstream client sees for what belongs to one upstream
//! server, and the way back: tools are named by the catalog; prompts get
//! the catalog's prefix for their server (the same allocator, so a prompt
//! and a tool of one server share it); resource URIs and templates are
//! wrapped as `mcp-gateway://<server>/<uri as the server gave it>`, the
//! server part percent-encoded, so two servers' URIs never collide and
//! every wrapped URI leads back to its server and its exact URI.
//!
//! With [`Naming::passthrough`] (one upstream server) nothing is renamed
//! or wrapped: names and URIs are the server's own.
//!
//! Task ids are always wrapped, as `<server>/<id as the server gave it>`
//! (the server part encoded as in URIs): a task id is a handle, never a
//! name a model sees, and a wrapped one leads back to its server with no
//! state kept, whichever replica the client's next `tasks/get` reaches.

use mcp_catalog::NamingStyle;
use mcp_catalog::tools::{NameAllocator, ServerPrefix};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::Value;

/// The scheme of a wrapped resource URI.
pub const GATEWAY_URI_SCHEME: &str = "mcp-gateway";

/// What the server part of a wrapped URI leaves as it is.
const SERVER_PART: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');

/// How names and URIs reach a downstream client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Naming {
    style: NamingStyle,
    passthrough: bool,
}

impl Naming {
    /// Prefixed in `style`, URIs wrapped.
    pub fn prefixed(style: NamingStyle) -> Self {
        Naming {
            style,
            passthrough: false,
        }
    }

    /// The server's own names and URIs: for a gateway in front of one
    /// server (with more, a name two servers share is served by the
    /// first in name order).
    pub fn passthrough(style: NamingStyle) -> Self {
        Naming {
            style,
            passthrough: true,
        }
    }

    /// Whether names and URIs pass through as the server gave them.
    pub fn is_passthrough(self) -> bool {
        self.passthrough
    }

    /// The catalog's naming style.
    pub fn style(self) -> NamingStyle {
        self.style
    }

    /// `uri` of `server` as a downstream client sees it.
    pub fn wrap_uri(self, server: &str, uri: &str) -> String {
        if self.passthrough {
            return uri.to_owned();
        }
        format!(
            "{GATEWAY_URI_SCHEME}://{}/{uri}",
            utf8_percent_encode(server, SERVER_PART)
        )
    }

    /// `result` (a tool call's or a prompt's) with the URI of every
    /// resource link and embedded resource in its content wrapped as
    /// listed resources are, so the client can read what a server points
    /// to through the gateway.
    pub fn wrap_content_uris(self, server: &str, result: &mut Value) {
        if self.passthrough {
            return;
        }
        let wrap = |block: &mut Value| {
            let uri = match block.get("type").and_then(Value::as_str) {
                Some("resource_link") => block.get_mut("uri"),
                Some("resource") => block.get_mut("resource").and_then(|r| r.get_mut("uri")),
                _ => None,
            };
            if let Some(Value::String(uri)) = uri {
                *uri = self.wrap_uri(server, uri);
            }
        };
        if let Some(Value::Array(blocks)) = result.get_mut("content") {
            blocks.iter_mut().for_each(wrap);
        }
        if let Some(Value::Array(messages)) = result.get_mut("messages") {
            messages
                .iter_mut()
                .filter_map(|message| message.get_mut("content"))
                .for_each(wrap);
        }
    }

    /// The server and its own URI behind a wrapped `uri`; `None` for a URI
    /// this gateway did not wrap.
    pub fn unwrap_uri(self, uri: &str) -> Option<(String, &str)> {
        let rest = uri.strip_prefix(GATEWAY_URI_SCHEME)?.strip_prefix("://")?;
        let (server, inner) = rest.split_once('/')?;
        let server = percent_decode_str(server).decode_utf8().ok()?;
        Some((server.into_owned(), inner))
    }

    /// Task `id` of `server` as a downstream client sees it.
    pub fn wrap_task_id(self, server: &str, id: &str) -> String {
        format!("{}/{id}", utf8_percent_encode(server, SERVER_PART))
    }

    /// The server and its own task id behind a wrapped `id`; `None` for an
    /// id this gateway did not wrap.
    pub fn unwrap_task_id(self, id: &str) -> Option<(String, &str)> {
        let (server, inner) = id.split_once('/')?;
        let server = percent_decode_str(server).decode_utf8().ok()?;
        (!server.is_empty()).then(|| (server.into_owned(), inner))
    }

    /// A task of `server` as a downstream client sees it: a
    /// `CreateTaskResult` or a `tasks/get` result, with its id wrapped and
    /// the URIs in an inlined result wrapped as a call's are.
    pub fn wrap_task(self, server: &str, task: &mut Value) {
        if let Some(Value::String(id)) = task.get_mut("taskId") {
            *id = self.wrap_task_id(server, id);
        }
        if let Some(result) = task.get_mut("result") {
            self.wrap_content_uris(server, result);
        }
    }

    /// The downstream names of `items` (each a server's raw prompt name),
    /// allocated in a fixed order (servers by name, then names), with the
    /// server and raw name each stands for.
    pub fn prompt_names(self, items: &[(String, String)]) -> Vec<(String, String, String)> {
        let mut sorted: Vec<&(String, String)> = items.iter().collect();
        sorted.sort();
        let mut allocator = NameAllocator::new(self.style, []);
        let mut named = Vec::with_capacity(sorted.len());
        let mut current: Option<(&str, Option<String>)> = None;
        for (server, raw) in sorted {
            if self.passthrough {
                named.push((raw.clone(), server.clone(), raw.clone()));
                continue;
            }
            if current.as_ref().is_none_or(|(name, _)| *name != server) {
                let prefix = match allocator.server_prefix(server) {
                    ServerPrefix::Assigned(prefix) | ServerPrefix::Renamed { prefix, .. } => {
                        Some(prefix)
                    }
                    _ => None,
                };
                current = Some((server, prefix));
            }
            let Some((_, Some(prefix))) = &current else {
                continue;
            };
            let (name, _) = allocator.tool_name(prefix, server, raw);
            named.push((name, server.clone(), raw.clone()));
        }
        named
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_uri_leads_back_to_its_server_and_exact_uri() {
        let naming = Naming::prefixed(NamingStyle::Claw);
        for (server, uri) in [
            ("files", "file:///tmp/a.txt"),
            ("two words", "test://static-text"),
            ("a/b", "x:y/z?q=1#f"),
            ("ünïcode", "mcp-gateway://nested/inner"),
            ("s", ""),
            ("s", "{template}/path/{id}"),
        ] {
            let wrapped = naming.wrap_uri(server, uri);
            assert!(wrapped.starts_with("mcp-gateway://"), "{wrapped}");
            let (back, inner) = naming.unwrap_uri(&wrapped).unwrap();
            assert_eq!((back.as_str(), inner), (server, uri), "{wrapped}");
        }
        for foreign in ["test://static-text", "mcp-gateway:/x", "mcp-gateway://only"] {
            assert_eq!(naming.unwrap_uri(foreign), None, "{foreign}");
        }
        let plain = Naming::passthrough(NamingStyle::Claw);
        assert_eq!(plain.wrap_uri("s", "test://x"), "test://x");
    }

    #[test]
    fn links_and_embedded_resources_in_results_lead_back_too() {
        let naming = Naming::prefixed(NamingStyle::Claw);
        let mut result = serde_json::json!({"content": [
            {"type": "text", "text": "file:///not-a-link"},
            {"type": "resource_link", "uri": "file:///a", "name": "a"},
            {"type": "resource", "resource": {"uri": "test://b", "text": "b"}},
            {"type": "image", "data": "", "mimeType": "image/png"},
        ]});
        naming.wrap_content_uris("s", &mut result);
        assert_eq!(result["content"][0]["text"], "file:///not-a-link");
        assert_eq!(result["content"][1]["uri"], "mcp-gateway://s/file:///a");
        assert_eq!(
            result["content"][2]["resource"]["uri"],
            "mcp-gateway://s/test://b"
        );
        let mut prompt = serde_json::json!({"messages": [
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "x://c"}}},
            {"role": "user", "content": {"type": "text", "text": "t"}},
        ]});
        naming.wrap_content_uris("s", &mut prompt);
        assert_eq!(
            prompt["messages"][0]["content"]["resource"]["uri"],
            "mcp-gateway://s/x://c"
        );
        let mut untouched = result.clone();
        Naming::passthrough(NamingStyle::Claw).wrap_content_uris("s", &mut untouched);
        assert_eq!(untouched, result);
        // not an object, no content: nothing to do
        for mut other in [serde_json::json!([1]), serde_json::json!({"content": "x"})] {
            let before = other.clone();
            naming.wrap_content_uris("s", &mut other);
            assert_eq!(other, before);
        }
    }

    #[test]
    fn a_wrapped_task_id_leads_back_to_its_server_in_every_naming() {
        for naming in [
            Naming::prefixed(NamingStyle::Claw),
            Naming::passthrough(NamingStyle::Claw),
        ] {
            for (server, id) in [
                ("tasks", "0f4e-11"),
                ("two words", "a/b/c"),
                ("a/b", ""),
                ("ünïcode", "tasks/x%2F"),
            ] {
                let wrapped = naming.wrap_task_id(server, id);
                let (back, inner) = naming.unwrap_task_id(&wrapped).unwrap();
                assert_eq!((back.as_str(), inner), (server, id), "{wrapped}");
            }
            for foreign in ["nonexistent-12345", "/x", "%FF/x", ""] {
                assert_eq!(naming.unwrap_task_id(foreign), None, "{foreign}");
            }
            let mut task = serde_json::json!({"taskId": "t1", "status": "completed",
                "result": {"content": [{"type": "resource_link", "uri": "x://a", "name": "a"}]}});
            naming.wrap_task("s", &mut task);
            assert_eq!(task["taskId"], "s/t1");
            let link = &task["result"]["content"][0]["uri"];
            match naming.is_passthrough() {
                true => assert_eq!(link, "x://a"),
                false => assert_eq!(link, "mcp-gateway://s/x://a"),
            }
        }
    }

    #[test]
    fn prompts_take_their_servers_prefix() {
        let items = vec![
            ("b".to_owned(), "greet".to_owned()),
            ("a".to_owned(), "greet".to_owned()),
            ("a".to_owned(), "sum up".to_owned()),
        ];
        let named: Vec<(String, String, String)> =
            Naming::prefixed(NamingStyle::Claw).prompt_names(&items);
        let names: Vec<&str> = named.iter().map(|(name, _, _)| name.as_str()).collect();
        assert_eq!(names, ["mcp__a__greet", "mcp__a__sum_up", "mcp__b__greet"]);
        let openclaw = Naming::prefixed(NamingStyle::OpenClaw).prompt_names(&items);
        assert_eq!(openclaw[2].0, "b__greet");
        let plain = Naming::passthrough(NamingStyle::Claw).prompt_names(&items);
        assert_eq!(plain[0], ("greet".into(), "a".into(), "greet".into()));
    }
}
