//! The listings the catalog benchmarks materialise: 100 servers of 100
//! tools with schemas like the ones real servers send.

// Each benchmark file uses its own part of this module.
#![allow(dead_code)]

use mcp_catalog::ServerTools;
use mcp_transport::Tool;
use serde_json::{Value, json};

/// A schema like the ones real servers send: nested objects, enums,
/// arrays, formats, nullable fields, descriptions.
pub(crate) fn realistic_schema(i: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": format!("Search query number {i}"), "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            "since": {"type": "string", "format": "date-time", "nullable": true},
            "sort": {"type": "string", "enum": ["asc", "desc", "relevance"]},
            "labels": {"type": "array", "items": {"type": "string"}},
            "owner": {
                "type": "object",
                "properties": {
                    "login": {"type": "string"},
                    "id": {"type": ["integer", "string"]}
                },
                "required": ["login"]
            },
            "options": {"$ref": "#/$defs/options"}
        },
        "required": ["query"],
        "$defs": {
            "options": {
                "type": "object",
                "properties": {"verbose": {"type": "boolean"}, "depth": {"type": "integer"}}
            }
        }
    })
}

/// The same tool as a schema generator that already emits plain draft
/// 2020-12 writes it (`anyOf` instead of `nullable` and type lists, no
/// `format`): normalisation changes nothing.
pub(crate) fn normal_schema(i: usize) -> Value {
    let mut schema = realistic_schema(i);
    schema["properties"]["since"] = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
    schema["properties"]["owner"]["properties"]["id"] =
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}]});
    schema
}

pub(crate) fn listings(servers: usize, tools_per_server: usize) -> Vec<ServerTools> {
    listings_of(servers, tools_per_server, realistic_schema)
}

pub(crate) fn listings_of(
    servers: usize,
    tools_per_server: usize,
    schema: fn(usize) -> Value,
) -> Vec<ServerTools> {
    listings_numbered(servers, tools_per_server, schema, |_, t| t)
}

/// Listings whose tool `t` of server `s` gets `schema(number(s, t))`.
pub(crate) fn listings_numbered(
    servers: usize,
    tools_per_server: usize,
    schema: fn(usize) -> Value,
    number: impl Fn(usize, usize) -> usize,
) -> Vec<ServerTools> {
    (0..servers)
        .map(|s| {
            ServerTools::new(
                format!("server-{s:03}"),
                (0..tools_per_server)
                    .map(|t| Tool {
                        name: format!("tool_{t:03}"),
                        title: None,
                        description: Some(format!(
                            "  Does thing {t} on server {s}; returns a list of results.  "
                        )),
                        input_schema: schema(number(s, t)),
                        output_schema: None,
                        annotations: None,
                        execution: None,
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .collect()
}
