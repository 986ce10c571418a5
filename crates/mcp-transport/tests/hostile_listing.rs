//! A hostile server's listings, through the session's one pager: pages of
//! invalid entries (all invalid, mixed, several kinds), pages and page
//! runs past the item cap (valid entries, invalid ones, both), and listing
//! methods answered with an error. Every row runs over a transport that
//! hands the session raw answer text (streamable HTTP at 2026-07-28, on
//! 127.0.0.1) and over one that hands it decoded values (the in-process
//! `sdk` transport), since the page reader takes either.
//!
//! Rules: every entry counts toward the item cap, valid or not; invalid
//! entries are left out and described by one note per listing (the first
//! [`INVALID_ENTRIES_SHOWN`], then a count); an optional listing the
//! server does not implement (`-32601`) is empty with a note, any other
//! error fails it, and `tools/list` is never optional.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use mcp_transport::kinds::{
    SdkOptions, SdkServer, SdkServerConnection, SdkTransport, StreamableHttpTransport,
};
use mcp_transport::types::{INVALID_ENTRIES_SHOWN, ListLimits, ListingNote};
use mcp_transport::{
    ClientSession, ErrorObject, HttpOptions, JsonRpcMessage, Listing, Response, SessionOptions,
    TransportError,
};
use serde_json::{Value, json};

mod support;
use support::loopback::{Answer, Script, Seen, server};

/// The item cap of every row: small, so a row past it stays small too.
const CAP: usize = 100;

/// Which listing a row reads.
#[derive(Debug, Clone, Copy)]
enum List {
    Tools,
    Resources,
    Templates,
    Prompts,
}

impl List {
    fn method(self) -> &'static str {
        match self {
            List::Tools => "tools/list",
            List::Resources => "resources/list",
            List::Templates => "resources/templates/list",
            List::Prompts => "prompts/list",
        }
    }

    fn field(self) -> &'static str {
        match self {
            List::Tools => "tools",
            List::Resources => "resources",
            List::Templates => "resourceTemplates",
            List::Prompts => "prompts",
        }
    }

    fn name_key(self) -> &'static str {
        match self {
            List::Tools | List::Prompts => "name",
            List::Resources => "uri",
            List::Templates => "uriTemplate",
        }
    }
}

/// What the server answers to the row's listing.
#[derive(Debug, Clone, Copy)]
enum Listed {
    /// Pages, each `KIND*COUNT` runs joined by `+`, linked by cursors.
    Pages(&'static [&'static str]),
    /// A JSON-RPC error with this code.
    Error(i64),
}

/// What the session makes of it.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Items listed, and how many invalid entries the note counts (with
    /// the reasons its first entries give, in order).
    Listed {
        items: usize,
        invalid: usize,
        reasons: &'static [&'static str],
    },
    /// Nothing listed, with a note that the method is not implemented.
    Unimplemented,
    /// The listing fails with an error saying this.
    Fails(&'static str),
}

struct Row {
    name: &'static str,
    list: List,
    listed: Listed,
    expect: Expect,
}

/// One entry of `kind`, number `i` of page `page`.
fn entry(list: List, kind: &str, page: usize, i: usize) -> String {
    let key = list.name_key();
    match kind {
        "valid" => match list {
            List::Tools => format!(r#"{{"name":"t{page}_{i}","inputSchema":{{"type":"object"}}}}"#),
            List::Resources => format!(r#"{{"uri":"file:///r{page}_{i}","name":"r"}}"#),
            List::Templates => {
                format!(r#"{{"uriTemplate":"file:///t{page}_{i}/{{x}}","name":"t"}}"#)
            }
            List::Prompts => format!(r#"{{"name":"p{page}_{i}"}}"#),
        },
        "no-name" => format!(r#"{{"description":"n{i}"}}"#),
        "name-type" => format!(r#"{{"{key}":{i}}}"#),
        "not-object" => format!(r#""s{i}""#),
        "title-type" => format!(r#"{{"{key}":"x{i}","title":{i}}}"#),
        // A reason that would quote a megabyte of the server's text.
        "huge-name" => format!(r#"{{"{key}":{{"a":"{}"}}}}"#, "x".repeat(1 << 20)),
        other => panic!("unknown entry kind {other}"),
    }
}

/// The result text of page `at` of `pages`.
fn page_text(list: List, pages: &[&str], at: usize) -> String {
    let mut entries = Vec::new();
    for run in pages[at].split('+').filter(|run| !run.is_empty()) {
        let (kind, count) = run.split_once('*').unwrap_or((run, "1"));
        for i in 0..count.parse::<usize>().unwrap() {
            entries.push(entry(list, kind, at, i));
        }
    }
    let next = if at + 1 < pages.len() {
        format!(r#","nextCursor":"{}""#, at + 1)
    } else {
        String::new()
    };
    format!(r#"{{"{}":[{}]{next}}}"#, list.field(), entries.join(","))
}

/// The answer text (result or error) to `method` with `params`, for a row.
fn answer_text(row: &Row, method: &str, params: &Value) -> Result<String, ErrorObject> {
    let not_found = || ErrorObject {
        code: -32601,
        message: format!("method not found: {method}"),
        data: None,
    };
    if method != row.list.method() {
        return match method {
            "tools/list" => Ok(r#"{"tools":[]}"#.into()),
            "resources/list" => Ok(r#"{"resources":[]}"#.into()),
            "resources/templates/list" => Ok(r#"{"resourceTemplates":[]}"#.into()),
            "prompts/list" => Ok(r#"{"prompts":[]}"#.into()),
            _ => Err(not_found()),
        };
    }
    match row.listed {
        Listed::Error(code) => Err(ErrorObject {
            code,
            message: format!("{method} refused"),
            data: None,
        }),
        Listed::Pages(pages) => {
            let at = params
                .get("cursor")
                .and_then(Value::as_str)
                .map_or(0, |cursor| cursor.parse().unwrap());
            Ok(page_text(row.list, pages, at))
        }
    }
}

const CAPABILITIES: &str = r#"{"tools":{},"resources":{},"prompts":{}}"#;

/// The row's server in process: answers as decoded values.
struct InProcess(&'static Row);

#[async_trait]
impl SdkServer for InProcess {
    async fn serve(self: Arc<Self>, mut connection: SdkServerConnection) {
        while let Some(message) = connection.incoming.recv().await {
            let JsonRpcMessage::Request(request) = message else {
                continue;
            };
            let params = request.params.unwrap_or(Value::Null);
            let outcome = match request.method.as_str() {
                "initialize" => Ok(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": serde_json::from_str::<Value>(CAPABILITIES).unwrap(),
                    "serverInfo": {"name": "lister", "version": "1"}
                })),
                "ping" => Ok(json!({})),
                method => answer_text(self.0, method, &params)
                    .map(|text| serde_json::from_str(&text).unwrap()),
            };
            let reply = JsonRpcMessage::Response(Response {
                id: Some(request.id),
                outcome,
            });
            if connection.outgoing.send(reply).await.is_err() {
                return;
            }
        }
    }
}

/// The row's server on 127.0.0.1 at 2026-07-28: answers as text the
/// session keeps raw.
fn over_http(row: &'static Row) -> Script {
    Arc::new(move |seen: &Seen, _| {
        let id = seen.body["id"].clone();
        let method = seen.rpc_method();
        if seen.method != "POST" || id.is_null() || method == "subscriptions/listen" {
            return Answer {
                status: if seen.method == "GET" { 405 } else { 202 },
                headers: vec![],
                parts: vec![],
                pause: Duration::ZERO,
            };
        }
        let body = match method {
            "server/discover" => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"supportedVersions":["2026-07-28"],"capabilities":{CAPABILITIES},"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"lister","version":"1"}}}}}}}}"#
            ),
            method => match answer_text(row, method, &seen.body["params"]) {
                Ok(result) => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
                Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string(),
            },
        };
        Answer {
            status: 200,
            headers: vec![("content-type", "application/json".into())],
            parts: vec![body],
            pause: Duration::ZERO,
        }
    })
}

fn options() -> SessionOptions {
    SessionOptions::default().with_list_limits(ListLimits::default().with_max_items(CAP))
}

/// Every listing the row's server offers, read through `session`.
async fn listing(session: &ClientSession, list: List) -> Result<Listing<String>, TransportError> {
    fn names<T>(listing: Listing<T>, name: impl Fn(T) -> String) -> Listing<String> {
        let mut out = Listing::of(listing.items.into_iter().map(name).collect());
        out.notes = listing.notes;
        out
    }
    Ok(match list {
        List::Tools => names(session.list_tools_listing().await?, |t| t.name),
        List::Resources => names(session.list_resources_listing().await?, |r| r.uri),
        List::Templates => names(session.list_resource_templates_listing().await?, |t| {
            t.uri_template
        }),
        List::Prompts => names(session.list_prompts_listing().await?, |p| p.name),
    })
}

#[track_caller]
fn check_outcome(row: &Row, via: &str, outcome: Result<Listing<String>, TransportError>) {
    let what = format!("{} via {via}", row.name);
    let method = row.list.method();
    match (row.expect, outcome) {
        (
            Expect::Listed {
                items,
                invalid,
                reasons,
            },
            Ok(listing),
        ) => {
            assert_eq!(listing.items.len(), items, "{what}");
            if invalid == 0 {
                assert_eq!(listing.notes, [], "{what}");
                return;
            }
            let [
                ListingNote::InvalidEntries {
                    method: m,
                    count,
                    first,
                },
            ] = listing.notes.as_slice()
            else {
                panic!(
                    "{what}: one note about invalid entries, got {:?}",
                    listing.notes
                );
            };
            assert_eq!((m.as_str(), *count), (method, invalid), "{what}");
            assert_eq!(first.len(), invalid.min(INVALID_ENTRIES_SHOWN), "{what}");
            for (entry, reason) in first.iter().zip(reasons) {
                assert!(
                    entry.reason.contains(reason),
                    "{what}: {entry:?} should say {reason:?}"
                );
                assert!(
                    entry.reason.len() <= 256,
                    "{what}: a reason is cut: {}",
                    entry.reason.len()
                );
            }
            let shown = listing.notes[0].to_string();
            assert!(
                shown.contains(&format!("left out {invalid} invalid {method} entries")),
                "{what}: {shown}"
            );
            if invalid > INVALID_ENTRIES_SHOWN {
                assert!(
                    shown.ends_with(&format!("and {} more", invalid - INVALID_ENTRIES_SHOWN)),
                    "{what}: {shown}"
                );
            }
        }
        (Expect::Unimplemented, Ok(listing)) => {
            assert_eq!(listing.items, Vec::<String>::new(), "{what}");
            assert!(
                matches!(listing.notes.as_slice(), [ListingNote::Unimplemented { method: m, .. }] if m == method),
                "{what}: {:?}",
                listing.notes
            );
        }
        (Expect::Fails(says), Err(error)) => {
            assert!(
                error.to_string().contains(says),
                "{what}: {error} should say {says:?}"
            );
            assert!(
                !error.is_fatal(),
                "{what}: one listing fails, not the session: {error}"
            );
        }
        (expect, outcome) => panic!("{what}: expected {expect:?}, got {outcome:?}"),
    }
}

/// Runs one row over both transports; the session stays usable after it.
async fn check(row: &'static Row) {
    let transport =
        SdkTransport::connect("lister", Arc::new(InProcess(row)), SdkOptions::default());
    let session = ClientSession::initialize(Box::new(transport), "lister", options())
        .await
        .unwrap();
    check_outcome(row, "decoded values", listing(&session, row.list).await);
    assert!(session.ping().await.is_ok(), "{}", row.name);

    let (url, _seen) = server(over_http(row)).await;
    let transport = StreamableHttpTransport::connect(HttpOptions::new("lister", &url))
        .await
        .unwrap();
    let session = ClientSession::initialize(
        Box::new(transport),
        "lister",
        options()
            .with_protocol_version("2026-07-28")
            .with_pin_protocol(true),
    )
    .await
    .unwrap();
    check_outcome(row, "raw text", listing(&session, row.list).await);
    let _ = session.close().await;
}

const OVER: &str = "more than 100 items";

static INVALID_ROWS: &[Row] = &[
    Row {
        name: "all invalid, one kind",
        list: List::Tools,
        listed: Listed::Pages(&["no-name*60"]),
        expect: Expect::Listed {
            items: 0,
            invalid: 60,
            reasons: &["missing field `name`"; 3],
        },
    },
    Row {
        name: "all invalid, exactly the cap",
        list: List::Tools,
        listed: Listed::Pages(&["not-object*100"]),
        expect: Expect::Listed {
            items: 0,
            invalid: 100,
            reasons: &["invalid type: string"; 3],
        },
    },
    Row {
        name: "mixed",
        list: List::Tools,
        listed: Listed::Pages(&["valid*10+no-name*20+valid*5"]),
        expect: Expect::Listed {
            items: 15,
            invalid: 20,
            reasons: &["missing field `name`"; 3],
        },
    },
    Row {
        name: "several kinds",
        list: List::Tools,
        listed: Listed::Pages(&["name-type+not-object+title-type*30+valid*3"]),
        expect: Expect::Listed {
            items: 3,
            invalid: 32,
            reasons: &[
                "invalid type: integer `0`",
                "invalid type: string",
                "invalid type: integer `0`",
            ],
        },
    },
    Row {
        name: "fewer than are shown",
        list: List::Tools,
        listed: Listed::Pages(&["valid*4+no-name*2"]),
        expect: Expect::Listed {
            items: 4,
            invalid: 2,
            reasons: &["missing field `name`"; 2],
        },
    },
    Row {
        name: "a reason quoting a megabyte is cut",
        list: List::Prompts,
        listed: Listed::Pages(&["huge-name+valid*2"]),
        expect: Expect::Listed {
            items: 2,
            invalid: 1,
            reasons: &["invalid type"],
        },
    },
    Row {
        name: "invalid entries over pages",
        list: List::Resources,
        listed: Listed::Pages(&["no-name*10+valid", "name-type*10+valid", "valid*2"]),
        expect: Expect::Listed {
            items: 4,
            invalid: 20,
            reasons: &["missing field `uri`"; 3],
        },
    },
    Row {
        name: "invalid templates",
        list: List::Templates,
        listed: Listed::Pages(&["title-type*7+valid"]),
        expect: Expect::Listed {
            items: 1,
            invalid: 7,
            reasons: &["invalid type: integer"; 3],
        },
    },
];

#[tokio::test]
async fn invalid_entries_are_left_out_and_noted_once() {
    for row in INVALID_ROWS {
        check(row).await;
    }
}

static CAP_ROWS: &[Row] = &[
    Row {
        name: "valid, exactly the cap",
        list: List::Tools,
        listed: Listed::Pages(&["valid*100"]),
        expect: Expect::Listed {
            items: 100,
            invalid: 0,
            reasons: &[],
        },
    },
    Row {
        name: "valid, one page past the cap",
        list: List::Tools,
        listed: Listed::Pages(&["valid*101"]),
        expect: Expect::Fails(OVER),
    },
    Row {
        name: "valid, far past the cap",
        list: List::Prompts,
        listed: Listed::Pages(&["valid*5000"]),
        expect: Expect::Fails(OVER),
    },
    Row {
        name: "invalid, one page past the cap",
        list: List::Tools,
        listed: Listed::Pages(&["no-name*101"]),
        expect: Expect::Fails(OVER),
    },
    Row {
        name: "invalid of several kinds past the cap",
        list: List::Resources,
        listed: Listed::Pages(&["no-name*40+name-type*40+not-object*40"]),
        expect: Expect::Fails(OVER),
    },
    Row {
        name: "mixed past the cap",
        list: List::Tools,
        listed: Listed::Pages(&["valid*60+no-name*41"]),
        expect: Expect::Fails(OVER),
    },
    Row {
        name: "pages adding up to the cap",
        list: List::Tools,
        listed: Listed::Pages(&["valid*50", "no-name*50"]),
        expect: Expect::Listed {
            items: 50,
            invalid: 50,
            reasons: &["missing field `name`"; 3],
        },
    },
    Row {
        name: "valid pages adding up past the cap",
        list: List::Tools,
        listed: Listed::Pages(&["valid*40", "valid*40", "valid*40"]),
        expect: Expect::Fails(OVER),
    },
    Row {
        name: "invalid pages adding up past the cap",
        list: List::Templates,
        listed: Listed::Pages(&["no-name*40", "no-name*40", "no-name*40"]),
        expect: Expect::Fails(OVER),
    },
    Row {
        name: "mixed pages adding up past the cap",
        list: List::Tools,
        listed: Listed::Pages(&["valid*30+no-name*30", "not-object*30+valid*11"]),
        expect: Expect::Fails(OVER),
    },
];

#[tokio::test]
async fn every_entry_counts_toward_the_item_cap() {
    for row in CAP_ROWS {
        check(row).await;
    }
}

static ERROR_ROWS: &[Row] = &[
    Row {
        name: "templates not implemented",
        list: List::Templates,
        listed: Listed::Error(-32601),
        expect: Expect::Unimplemented,
    },
    Row {
        name: "prompts not implemented",
        list: List::Prompts,
        listed: Listed::Error(-32601),
        expect: Expect::Unimplemented,
    },
    Row {
        name: "resources not implemented",
        list: List::Resources,
        listed: Listed::Error(-32601),
        expect: Expect::Unimplemented,
    },
    Row {
        name: "templates fail inside the server",
        list: List::Templates,
        listed: Listed::Error(-32603),
        expect: Expect::Fails(
            "resources/templates/list failed: resources/templates/list refused (code -32603)",
        ),
    },
    Row {
        name: "prompts refused as invalid",
        list: List::Prompts,
        listed: Listed::Error(-32602),
        expect: Expect::Fails("prompts/list failed: prompts/list refused (code -32602)"),
    },
    Row {
        name: "tools are never optional",
        list: List::Tools,
        listed: Listed::Error(-32601),
        expect: Expect::Fails("tools/list failed: tools/list refused (code -32601)"),
    },
];

#[tokio::test]
async fn an_optional_listing_the_server_does_not_implement_is_empty_with_a_note() {
    for row in ERROR_ROWS {
        check(row).await;
    }
}
