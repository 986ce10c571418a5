//! The script of `mcp-listing-server`: a stdio MCP server whose listings
//! are chosen by the test, for the hostile listing rows. Each page of a
//! listing is a mix of entries of named kinds (`valid*150000`,
//! `no-name*40+valid*10`); a listing may instead answer with a JSON-RPC
//! error (`error=-32601`), as a server that does not implement the
//! method does.
//!
//! Entries are written as text, never built as values, so a page of
//! 150,000 tools costs the server its bytes and nothing more.

use std::fmt::Write as _;
use std::str::FromStr;

use serde_json::{Value, json};

/// One kind of list entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A well-formed entry of the listing's type.
    Valid,
    /// An object without the required name (`uri`, `uriTemplate`).
    NoName,
    /// The name member holds a number.
    NameType,
    /// Not an object at all.
    NotObject,
    /// A well-formed name with a `title` that is not a string.
    TitleType,
}

impl FromStr for Entry {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text {
            "valid" => Entry::Valid,
            "no-name" => Entry::NoName,
            "name-type" => Entry::NameType,
            "not-object" => Entry::NotObject,
            "title-type" => Entry::TitleType,
            other => return Err(format!("unknown entry kind {other:?}")),
        })
    }
}

/// A page: runs of entries, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Page(pub Vec<(Entry, usize)>);

impl FromStr for Page {
    type Err = String;

    /// `KIND*COUNT` runs joined by `+` (`valid*10+no-name*3`); an empty
    /// text is an empty page.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut runs = Vec::new();
        for run in text.split('+').filter(|run| !run.is_empty()) {
            let (kind, count) = run.split_once('*').unwrap_or((run, "1"));
            let count = count
                .parse::<usize>()
                .map_err(|e| format!("count of {run:?}: {e}"))?;
            runs.push((kind.parse()?, count));
        }
        Ok(Page(runs))
    }
}

/// How one listing method answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// These pages, linked by cursors `1`, `2`, ...
    Pages(Vec<Page>),
    /// A JSON-RPC error with this code on every page.
    Error(i64),
}

impl Default for Listing {
    fn default() -> Self {
        Listing::Pages(vec![Page::default()])
    }
}

impl FromStr for Listing {
    type Err = String;

    /// `error=CODE`, or pages separated by `/`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Some(code) = text.strip_prefix("error=") {
            return code
                .parse()
                .map(Listing::Error)
                .map_err(|e| format!("error code {code:?}: {e}"));
        }
        text.split('/')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map(Listing::Pages)
    }
}

/// What the server lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// `tools/list`.
    pub tools: Listing,
    /// `resources/list`.
    pub resources: Listing,
    /// `resources/templates/list`.
    pub templates: Listing,
    /// `prompts/list`.
    pub prompts: Listing,
}

/// The listings the script serves, with the member each one fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tools,
    Resources,
    Templates,
    Prompts,
}

impl Kind {
    fn field(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Resources => "resources",
            Kind::Templates => "resourceTemplates",
            Kind::Prompts => "prompts",
        }
    }

    fn name_key(self) -> &'static str {
        match self {
            Kind::Tools | Kind::Prompts => "name",
            Kind::Resources => "uri",
            Kind::Templates => "uriTemplate",
        }
    }

    /// A valid entry number `i`.
    fn valid(self, page: usize, i: usize, out: &mut String) {
        let _ = match self {
            Kind::Tools => write!(
                out,
                r#"{{"name":"t{page}_{i}","inputSchema":{{"type":"object"}}}}"#
            ),
            Kind::Resources => write!(out, r#"{{"uri":"file:///r{page}_{i}","name":"r{i}"}}"#),
            Kind::Templates => write!(
                out,
                r#"{{"uriTemplate":"file:///t{page}_{i}/{{x}}","name":"t{i}"}}"#
            ),
            Kind::Prompts => write!(out, r#"{{"name":"p{page}_{i}"}}"#),
        };
    }
}

impl Script {
    fn listing(&self, kind: Kind) -> &Listing {
        match kind {
            Kind::Tools => &self.tools,
            Kind::Resources => &self.resources,
            Kind::Templates => &self.templates,
            Kind::Prompts => &self.prompts,
        }
    }
}

/// The answer line to one request; `None` for notifications.
pub fn answer(script: &Script, request: &Value) -> Option<String> {
    let id = request.get("id")?;
    let method = request.get("method")?.as_str()?;
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let ok = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    let error = |code: i64, message: String| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
    };
    let kind = match method {
        "initialize" => {
            return Some(ok(json!({
                "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                "serverInfo": {"name": "listing", "version": "0.1.0"},
            })));
        }
        "ping" => return Some(ok(json!({}))),
        "tools/list" => Kind::Tools,
        "resources/list" => Kind::Resources,
        "resources/templates/list" => Kind::Templates,
        "prompts/list" => Kind::Prompts,
        other => return Some(error(-32601, format!("method not found: {other}"))),
    };
    let pages = match script.listing(kind) {
        Listing::Error(code) => return Some(error(*code, format!("{method} failed"))),
        Listing::Pages(pages) => pages,
    };
    let at = params
        .get("cursor")
        .and_then(Value::as_str)
        .and_then(|cursor| cursor.parse::<usize>().ok())
        .unwrap_or(0);
    let Some(page) = pages.get(at) else {
        return Some(error(-32602, format!("unknown cursor for {method}")));
    };
    let mut out = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"{}":["#,
        kind.field()
    );
    let mut first = true;
    for &(entry, count) in &page.0 {
        for i in 0..count {
            if !first {
                out.push(',');
            }
            first = false;
            let key = kind.name_key();
            let _ = match entry {
                Entry::Valid => {
                    kind.valid(at, i, &mut out);
                    Ok(())
                }
                Entry::NoName => write!(out, r#"{{"description":"n{i}"}}"#),
                Entry::NameType => write!(out, r#"{{"{key}":{i}}}"#),
                Entry::NotObject => write!(out, r#""s{i}""#),
                Entry::TitleType => write!(out, r#"{{"{key}":"x{i}","title":{i}}}"#),
            };
        }
    }
    out.push(']');
    if at + 1 < pages.len() {
        let _ = write!(out, r#","nextCursor":"{}""#, at + 1);
    }
    out.push_str("}}");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_parse_and_answer_as_written() {
        let script = Script {
            tools: "valid*2+no-name/not-object*2".parse().unwrap(),
            templates: "error=-32601".parse().unwrap(),
            ..Script::default()
        };
        let page = |cursor: Value, method: &str| {
            let line = answer(
                &script,
                &json!({"id": 1, "method": method, "params": {"cursor": cursor}}),
            )
            .unwrap();
            serde_json::from_str::<Value>(&line).unwrap()
        };
        let first = page(Value::Null, "tools/list");
        assert_eq!(first["result"]["tools"].as_array().unwrap().len(), 3);
        assert_eq!(first["result"]["nextCursor"], "1");
        let second = page(json!("1"), "tools/list");
        assert_eq!(second["result"]["tools"], json!(["s0", "s1"]));
        assert!(second["result"].get("nextCursor").is_none());
        let templates = page(Value::Null, "resources/templates/list");
        assert_eq!(templates["error"]["code"], -32601);
        assert!("bogus*1".parse::<Page>().is_err());
    }
}
