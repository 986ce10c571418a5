//! JSON Schema 2020-12 as SEP-2106 asks of a client: the keywords a
//! server sends survive the `generic` profile, references resolve inside
//! the schema only (never over the network or from a file), composition
//! is bounded, and `structuredContent` of any JSON type is checked
//! against the tool's `outputSchema`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::TcpListener;

use mcp_catalog::ProviderProfile;
use mcp_catalog::schemas::{SchemaLimits, check_output_schema, prepare_schema};
use mcp_catalog::{Catalog, MaterializeOptions, ServerTools, materialize};
use mcp_transport::{CallToolResult, ContentBlock, Tool};
use serde_json::{Value, json};

/// The focal schema of the conformance scenario
/// `json-schema-2020-12-preservation` (suite 0.2.0-alpha.12), as sent.
fn conformance_fixture() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}
        }}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

fn listing(tools: Vec<(&str, Value, Option<Value>)>) -> ServerTools {
    ServerTools::new(
        "s",
        tools
            .into_iter()
            .map(|(name, input_schema, output_schema)| Tool {
                name: name.into(),
                title: None,
                description: None,
                input_schema,
                output_schema,
                annotations: None,
                execution: None,
            })
            .collect::<Vec<_>>(),
    )
}

fn catalog_of(tools: Vec<(&str, Value, Option<Value>)>, profile: ProviderProfile) -> Catalog {
    let options = openclaw().with_profile(profile);
    materialize(&[listing(tools)], &options)
}

#[test]
fn the_generic_profile_keeps_every_2020_12_keyword() {
    let schema = conformance_fixture();
    let catalog = catalog_of(vec![("t", schema.clone(), None)], ProviderProfile::Generic);
    let tool = catalog.get("s__t").expect("the tool is offered");
    assert_eq!(
        tool.input_schema(),
        &schema,
        "the schema reaches the model as sent"
    );
    // and the keywords mean what they say when arguments are checked
    assert!(
        tool.validate(&json!({"contactMethod": "phone", "phone": "1"}))
            .is_ok()
    );
    assert!(
        tool.validate(&json!({"contactMethod": "phone", "email": "a@b"}))
            .is_err()
    );
    assert!(tool.validate(&json!({"email": "a@b", "extra": 1})).is_err());
}

/// What preparing a schema with a reference gives.
#[derive(Debug, Clone, Copy)]
enum Resolves {
    /// Prepared for every profile; the generic output is the input.
    Everywhere,
    /// Refused in every profile, the reason containing this.
    Refused(&'static str),
}

/// Prepares `schema` for every profile and compares with `expect`; a
/// prepared schema must also be what its provider accepts.
fn check_reference(row: &str, schema: Value, expect: Resolves) {
    for profile in ProviderProfile::ALL {
        let prepared = prepare_schema(&schema, profile);
        match (expect, prepared) {
            (Resolves::Everywhere, Ok(out)) => {
                let problems = support::problems_for(profile, &out);
                assert!(
                    problems.is_empty(),
                    "{row} / {}: {problems:?} in {out:#}",
                    profile.as_str()
                );
                if profile == ProviderProfile::Generic {
                    assert_eq!(
                        out, schema,
                        "{row}: generic keeps the references as written"
                    );
                }
            }
            (Resolves::Refused(reason), Err(error)) => assert!(
                support::refused(&error).1.contains(reason),
                "{row} / {}: {error}",
                profile.as_str()
            ),
            (expect, got) => panic!(
                "{row} / {}: expected {expect:?}, got {got:?}",
                profile.as_str()
            ),
        }
    }
}

#[test]
fn references_resolve_inside_the_document_only() {
    let point =
        json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]});
    let with = |reference: &str, defs: Value| json!({"type": "object", "properties": {"p": {"$ref": reference}}, "required": ["p"], "$defs": defs});
    let rows = [
        (
            "pointer into $defs",
            with("#/$defs/point", json!({"point": point})),
            Resolves::Everywhere,
        ),
        (
            "pointer into definitions",
            json!({"type": "object", "properties": {"p": {"$ref": "#/definitions/point"}}, "required": ["p"], "definitions": {"point": point}}),
            Resolves::Everywhere,
        ),
        (
            "anchor",
            with(
                "#pt",
                json!({"point": {"$anchor": "pt", "type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}),
            ),
            Resolves::Everywhere,
        ),
        (
            "percent-encoded pointer",
            with("#/$defs/a%20point", json!({"a point": point})),
            Resolves::Everywhere,
        ),
        (
            "the root's own absolute $id",
            {
                let mut schema = with(
                    "https://example.com/tool.json#/$defs/point",
                    json!({"point": point}),
                );
                schema["$id"] = json!("https://example.com/tool.json");
                schema
            },
            Resolves::Everywhere,
        ),
        (
            "a pointer to nothing",
            with("#/$defs/missing", json!({"point": point})),
            Resolves::Refused("does not resolve inside the schema"),
        ),
        (
            "an anchor nobody declares",
            with("#nowhere", json!({"point": point})),
            Resolves::Refused("does not resolve inside the schema"),
        ),
        (
            "a network uri",
            with("https://example.com/point.json", json!({})),
            Resolves::Refused("does not resolve inside the schema"),
        ),
        (
            "a file uri",
            with("file:///etc/passwd", json!({})),
            Resolves::Refused("does not resolve inside the schema"),
        ),
        (
            "another document, relative",
            with("point.json#/x", json!({})),
            Resolves::Refused("does not resolve inside the schema"),
        ),
        (
            "another document than the root's $id",
            {
                let mut schema = with(
                    "https://example.com/other.json#/$defs/point",
                    json!({"point": point}),
                );
                schema["$id"] = json!("https://example.com/tool.json");
                schema
            },
            Resolves::Refused("does not resolve inside the schema"),
        ),
    ];
    for (row, schema, expect) in rows {
        check_reference(row, schema, expect);
    }
}

/// `levels` definitions, each an `anyOf` of two references to the next:
/// a schema of `3 * levels` nodes applying `2^levels` subschemas to one
/// value.
fn fan_out(levels: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for level in 0..levels {
        let next = format!("#/$defs/d{}", level + 1);
        defs.insert(
            format!("d{level}"),
            json!({"anyOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert(format!("d{levels}"), json!({"type": "string"}));
    json!({"type": "object", "properties": {"v": {"$ref": "#/$defs/d0"}}, "$defs": defs})
}

#[test]
fn composition_through_references_is_bounded() {
    let limit = SchemaLimits::default().max_applied_subschemas;
    assert_eq!(limit, 10_000);
    // Each level applies itself and twice (a branch and what it refers
    // to) the next: about 3 * 2^11 subschemas for eleven levels, within
    // the bound.
    check_reference("eleven levels", fan_out(11), Resolves::Everywhere);
    // 2^14 paths: over it, though the schema has 60 nodes.
    check_reference(
        "fourteen levels",
        fan_out(14),
        Resolves::Refused("apply more than 10000 subschemas to one value"),
    );
    let tight = SchemaLimits::default().with_max_applied_subschemas(10);
    let error = mcp_catalog::schemas::check_composition(&fan_out(3), &tight).unwrap_err();
    // d3 applies 1, d2 1 + 2 * 2 = 5, d1 1 + 2 * 6 = 13: the first over.
    assert_eq!(support::refused(&error).0, "/$defs/d1", "{error}");
}

#[test]
fn nothing_is_fetched_while_validating() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    // A dialect nobody knows is the one reference the checks leave to the
    // validator; it must not look it up.
    let schema = json!({"$schema": format!("{base}/meta"), "type": "object", "properties": {"x": {"type": "integer"}}});
    let output = json!({"$schema": format!("{base}/out"), "type": "integer"});
    let catalog = catalog_of(vec![("t", schema, Some(output))], ProviderProfile::Generic);
    let tool = catalog.get("s__t").expect("offered");
    // the unknown dialect does not compile: arguments go to the server unchecked
    assert!(tool.validate(&json!({"x": "not checked"})).is_ok());
    let problem = tool
        .check_output(&CallToolResult {
            content: vec![],
            structured_content: Some(json!(1)),
            is_error: false,
        })
        .expect("an output schema that does not compile cannot pass a result");
    assert!(
        problem.contains("outputSchema does not compile"),
        "{problem}"
    );
    match listener.accept() {
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the validator connected to {base}: {other:?}"),
    }
}

/// What checking one result against an output schema gives.
#[derive(Debug, Clone, Copy)]
enum Output {
    Passes,
    /// Refused, the message containing this.
    Fails(&'static str),
}

/// Materialises a tool with `output_schema` and checks `result` against
/// it.
fn check_output(row: &str, output_schema: Value, result: CallToolResult, expect: Output) {
    let catalog = catalog_of(
        vec![("t", json!({"type": "object"}), Some(output_schema))],
        ProviderProfile::Generic,
    );
    let tool = catalog
        .get("s__t")
        .unwrap_or_else(|| panic!("{row}: left out: {:?}", catalog.diagnostics()));
    match (expect, tool.check_output(&result)) {
        (Output::Passes, None) => {}
        (Output::Fails(text), Some(problem)) => {
            assert!(
                problem.starts_with("server \"s\", tool \"t\": "),
                "{row}: {problem}"
            );
            assert!(problem.contains(text), "{row}: {problem}");
        }
        (expect, got) => panic!("{row}: expected {expect:?}, got {got:?}"),
    }
}

fn structured(value: Option<Value>, is_error: bool) -> CallToolResult {
    CallToolResult {
        content: vec![ContentBlock::text("x")],
        structured_content: value,
        is_error,
    }
}

#[test]
fn structured_content_of_any_type_is_checked_against_the_output_schema() {
    let users = json!({"type": "array", "items": {"$ref": "#/$defs/user"}, "$defs": {"user": {
        "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]
    }}});
    let rows = [
        (
            "an array that conforms",
            users.clone(),
            structured(Some(json!([{"id": "u1"}, {"id": "u2"}])), false),
            Output::Passes,
        ),
        (
            "an array item that does not",
            users.clone(),
            structured(Some(json!([{"id": "u1"}, {"id": 2}])), false),
            Output::Fails("structuredContent does not match the tool's outputSchema at /1/id"),
        ),
        (
            "a number",
            json!({"type": "number"}),
            structured(Some(json!(42)), false),
            Output::Passes,
        ),
        (
            "a string for a number",
            json!({"type": "number"}),
            structured(Some(json!("42")), false),
            Output::Fails("at /: \"42\" is not of type \"number\""),
        ),
        (
            "a boolean",
            json!({"type": "boolean"}),
            structured(Some(json!(true)), false),
            Output::Passes,
        ),
        (
            "an object",
            json!({"type": "object", "required": ["t"]}),
            structured(Some(json!({"t": 1})), false),
            Output::Passes,
        ),
        (
            "missing, for a schema that needs a value",
            json!({"type": "object"}),
            structured(None, false),
            Output::Fails(
                "the result has no structuredContent, which the tool's outputSchema requires",
            ),
        ),
        (
            "missing, for a schema that takes null",
            json!({"type": "null"}),
            structured(None, false),
            Output::Passes,
        ),
        (
            "an error result is not checked",
            json!({"type": "object"}),
            structured(None, true),
            Output::Passes,
        ),
        (
            "a `true` schema",
            json!(true),
            structured(Some(json!("anything")), false),
            Output::Passes,
        ),
        (
            "2020-12 prefixItems",
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false}),
            structured(Some(json!(["a", 1, 2])), false),
            Output::Fails("at /"),
        ),
    ];
    for (row, schema, result, expect) in rows {
        check_output(row, schema, result, expect);
    }
}

#[test]
fn an_output_schema_that_cannot_be_checked_leaves_the_tool_out() {
    let rows = [
        (
            json!({"$ref": "https://example.com/out.json"}),
            "output schema /$ref: \"https://example.com/out.json\" does not resolve inside the schema",
        ),
        (
            json!("string"),
            "output schema /: a string is not a JSON Schema",
        ),
        (
            fan_out(14),
            "composition keywords and $ref apply more than 10000 subschemas",
        ),
    ];
    for (output, expect) in rows {
        let catalog = catalog_of(
            vec![("t", json!({"type": "object"}), Some(output))],
            ProviderProfile::Generic,
        );
        assert!(catalog.get("s__t").is_none(), "{expect}");
        let message = &catalog.diagnostics()[0].message;
        assert!(message.contains(expect), "{message}");
        assert!(
            message.starts_with("server \"s\", tool \"t\": "),
            "{message}"
        );
    }
    // well-formed output schemas are vetted within the same limits as inputs
    assert!(
        check_output_schema(
            &json!({"type": ["array", "null"]}),
            &SchemaLimits::default()
        )
        .is_ok()
    );
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> MaterializeOptions {
    MaterializeOptions::default().with_style(mcp_catalog::NamingStyle::OpenClaw)
}
