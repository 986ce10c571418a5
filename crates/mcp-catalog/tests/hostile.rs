//! Hostile servers against the catalog: one table per class of input a
//! server controls (nesting depth, `$ref` cycles, schema size, schemas a
//! provider cannot express, names and schema shapes), each row through the
//! library (`materialize`, or a `SessionRuntime` over a scripted
//! connector), checking the catalog and its diagnostics.
//!
//! Deep rows run on a 2 MiB thread in whatever build the tests use, so a
//! recursive walk anywhere (including a value's drop) aborts the test.

// Fixtures panic on a broken table row, as tests do.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
// Takes a value apart without recursion, so the tests themselves never
// overflow dropping what they built.
use mcp_catalog::NamingStyle;
use mcp_catalog::deep::dispose;
use mcp_catalog::{
    Catalog, CatalogError, CatalogErrorKind, Connection, Connector, MaterializeOptions, ModelBlock,
    ProviderProfile, RuntimeOptions, ServerEvents, ServerFeatures, ServerSet, ServerTools,
    SessionRuntime, ToolTarget, materialize,
};
use mcp_config::{Level, ServerConfig, TransportConfig};
use mcp_transport::{CallToolResult, ContentBlock, Tool};
use serde_json::{Map, Value, json};

/// Levels of the deep rows: far past any recursion a 2 MiB stack allows.
const DEEP: usize = 30_000;

// ---------------------------------------------------------------------
// fixtures

fn tool(name: &str, schema: Value) -> Tool {
    Tool {
        name: name.to_owned(),
        title: None,
        description: Some(format!("{name} tool")),
        input_schema: schema,
        output_schema: None,
        annotations: None,
        execution: None,
    }
}

fn plain() -> Value {
    json!({"type": "object", "properties": {"q": {"type": "string"}}})
}

fn listing(server: &str, tools: Vec<Tool>) -> ServerTools {
    ServerTools::new(server.to_owned(), tools)
}

fn options(profile: ProviderProfile) -> MaterializeOptions {
    openclaw().with_profile(profile)
}

fn dispose_listing(mut listing: ServerTools) {
    if let Some(tools) = Arc::get_mut(&mut listing.tools) {
        for tool in tools.iter_mut() {
            dispose(std::mem::take(&mut tool.input_schema));
        }
    }
}

/// `[[[…1…]]]`, `levels` deep.
fn nested_arrays(levels: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..levels {
        value = Value::Array(vec![value]);
    }
    value
}

/// `{"k": {"k": …}}`, `levels` deep.
fn nested_objects(levels: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..levels {
        let mut map = Map::new();
        map.insert("k".into(), value);
        value = Value::Object(map);
    }
    value
}

/// A schema nesting `levels` subschemas through `wrap`.
fn nested_schema(levels: usize, wrap: fn(Value) -> Value) -> Value {
    let mut value = json!({"type": "string"});
    for _ in 0..levels {
        value = wrap(value);
    }
    wrap_property(value)
}

/// An object from its entries. `json!` would copy an interpolated value
/// through its serialiser, which recurses.
fn obj(entries: Vec<(&str, Value)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

fn wrap_property(inner: Value) -> Value {
    obj(vec![
        ("type", json!("object")),
        ("properties", obj(vec![("p", inner)])),
    ])
}

fn wrap_property_named(name: &str, inner: Value) -> Value {
    obj(vec![
        ("type", json!("object")),
        ("properties", obj(vec![(name, inner)])),
    ])
}

fn wrap_items(inner: Value) -> Value {
    obj(vec![("type", json!("array")), ("items", inner)])
}

fn wrap_not(inner: Value) -> Value {
    obj(vec![("not", inner)])
}

fn wrap_any_of(inner: Value) -> Value {
    obj(vec![(
        "anyOf",
        Value::Array(vec![inner, json!({"type": "null"})]),
    )])
}

fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .name("2 MiB stack".into())
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn diagnostics_text(catalog: &Catalog) -> String {
    catalog
        .diagnostics()
        .iter()
        .map(|d| {
            format!(
                "{:?} {} {:?}: {}\n",
                d.level,
                d.server,
                d.tool.as_deref().unwrap_or("-"),
                d.message
            )
        })
        .collect()
}

fn has_tool(catalog: &Catalog, server: &str, raw: &str) -> bool {
    catalog.tools().iter().any(|t| {
        t.origin().server == server
            && matches!(&t.origin().target, ToolTarget::Tool { name } if name == raw)
    })
}

/// What a row expects of one tool.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// In the catalog, no diagnostic about it.
    Kept,
    /// In the catalog, with a diagnostic of this level whose message holds
    /// every fragment.
    Noted(Level, &'static [&'static str]),
    /// Left out, with an error diagnostic naming server and tool in its
    /// message, holding every fragment.
    LeftOut(&'static [&'static str]),
}

/// Materialises one server `srv` with the row's tool `t` next to a plain
/// tool `ok` for `profile`, and checks what became of both.
fn check_tool(
    row: &str,
    profile: ProviderProfile,
    tool_name: &str,
    schema: Value,
    expect: Expect,
) -> Catalog {
    let listing = listing("srv", vec![tool(tool_name, schema), tool("ok", plain())]);
    let catalog = materialize(std::slice::from_ref(&listing), &options(profile));
    check_outcome(row, profile, &catalog, "srv", tool_name, expect);
    assert!(
        has_tool(&catalog, "srv", "ok"),
        "{row} ({}): the plain tool is lost\n{}",
        profile.as_str(),
        diagnostics_text(&catalog)
    );
    let keep = catalog.clone();
    drop(catalog);
    dispose_listing(listing);
    keep
}

fn check_outcome(
    row: &str,
    profile: ProviderProfile,
    catalog: &Catalog,
    server: &str,
    tool_name: &str,
    expect: Expect,
) {
    let about: Vec<_> = catalog
        .diagnostics()
        .iter()
        .filter(|d| d.server == server && d.tool.as_deref() == Some(tool_name))
        .collect();
    let context = format!(
        "{row} ({}):\n{}",
        profile.as_str(),
        diagnostics_text(catalog)
    );
    match expect {
        Expect::Kept => {
            assert!(has_tool(catalog, server, tool_name), "{context}kept");
            assert!(about.is_empty(), "{context}no diagnostic");
        }
        Expect::Noted(level, fragments) => {
            assert!(has_tool(catalog, server, tool_name), "{context}kept");
            assert!(
                about
                    .iter()
                    .any(|d| d.level == level && fragments.iter().all(|f| d.message.contains(f))),
                "{context}a {level:?} note with {fragments:?}"
            );
        }
        Expect::LeftOut(fragments) => {
            assert!(!has_tool(catalog, server, tool_name), "{context}left out");
            assert!(
                about.iter().any(|d| d.level == Level::Error
                    && d.message.contains(&format!("{server:?}"))
                    && d.message.contains(&format!("{tool_name:?}"))
                    && fragments.iter().all(|f| d.message.contains(f))),
                "{context}an error naming {server:?} and {tool_name:?} with {fragments:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------
// a scripted server whose answers are built fresh for every request, so
// the test never holds (and drops) a deep value itself

type Make<T> = Arc<dyn Fn() -> T + Send + Sync>;

#[derive(Clone)]
struct Scripted {
    tools: Make<Vec<Tool>>,
    result: Make<CallToolResult>,
    resources: Make<Value>,
}

struct ScriptedConnector(Scripted);

struct ScriptedConnection(Scripted);

#[async_trait]
impl Connector for ScriptedConnector {
    async fn connect(
        &self,
        _server: &ServerConfig,
        _events: ServerEvents,
    ) -> Result<Arc<dyn Connection>, CatalogError> {
        Ok(Arc::new(ScriptedConnection(self.0.clone())))
    }
}

#[async_trait]
impl Connection for ScriptedConnection {
    fn features(&self) -> ServerFeatures {
        ServerFeatures::default()
            .with_resources(true)
            .with_prompts(false)
    }

    async fn list_tools(&self) -> Result<Vec<Tool>, CatalogError> {
        Ok((self.0.tools)())
    }

    async fn call_tool(
        &self,
        _name: &str,
        arguments: Value,
        _timeout: Duration,
        _progress: Option<mcp_transport::ProgressCallback>,
    ) -> Result<CallToolResult, CatalogError> {
        dispose(arguments);
        Ok((self.0.result)())
    }

    async fn list_resources(&self, _cursor: Option<String>) -> Result<Value, CatalogError> {
        Ok((self.0.resources)())
    }

    async fn read_resource(&self, _uri: &str) -> Result<Value, CatalogError> {
        Ok((self.0.resources)())
    }

    async fn list_prompts(&self, _cursor: Option<String>) -> Result<Value, CatalogError> {
        Ok(json!({"prompts": []}))
    }

    async fn get_prompt(
        &self,
        _name: &str,
        _arguments: Map<String, Value>,
    ) -> Result<Value, CatalogError> {
        Ok(json!({"messages": []}))
    }

    async fn close(&self) {}
}

fn config(name: &str) -> ServerConfig {
    ServerConfig::new(
        name.to_owned(),
        TransportConfig::Sdk {
            name: name.to_owned(),
        },
    )
}

fn scripted_runtime(script: Scripted, profile: ProviderProfile) -> SessionRuntime {
    SessionRuntime::builder(
        "hostile",
        ServerSet::all(vec![config("srv")]),
        Arc::new(ScriptedConnector(script)),
    )
    .with_options(RuntimeOptions::default().with_materialize(options(profile)))
    .build()
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn text_of(blocks: &[ModelBlock]) -> String {
    blocks
        .iter()
        .map(|b| match b {
            ModelBlock::Text { text } => text.clone(),
            ModelBlock::Image { mime_type, .. } => format!("[image {mime_type}]"),
            other => panic!("unexpected block {other:?}"),
        })
        .collect()
}

// ---------------------------------------------------------------------
// 6: depth

/// Every profile, one deep schema per row, on a 2 MiB stack: the tool is
/// left out naming the depth limit, the server's plain tool stays.
#[test]
fn deep_schemas_are_left_out_without_overflow() {
    const DEPTH: &str = "nests deeper than";
    type Row = (&'static str, fn() -> Value, &'static str);
    let rows: &[Row] = &[
        (
            "properties chain",
            || nested_schema(DEEP, wrap_property),
            DEPTH,
        ),
        ("items chain", || nested_schema(DEEP, wrap_items), DEPTH),
        ("not chain", || nested_schema(DEEP, wrap_not), DEPTH),
        ("anyOf chain", || nested_schema(DEEP, wrap_any_of), DEPTH),
        (
            "deep default value",
            || {
                obj(vec![
                    ("type", json!("object")),
                    ("default", nested_arrays(DEEP)),
                ])
            },
            DEPTH,
        ),
        (
            "deep enum value",
            || {
                let e = obj(vec![("enum", Value::Array(vec![nested_objects(DEEP)]))]);
                wrap_property_named("e", e)
            },
            DEPTH,
        ),
        (
            "deep $defs",
            || {
                obj(vec![
                    ("type", json!("object")),
                    (
                        "$defs",
                        obj(vec![("d", nested_schema(DEEP, wrap_property))]),
                    ),
                ])
            },
            DEPTH,
        ),
        (
            "deep list, not a schema",
            nested_arrays_schema,
            "not a JSON Schema object",
        ),
        (
            "65 schema levels",
            || nested_schema(65, wrap_items),
            "levels of subschemas",
        ),
    ];
    on_small_stack(move || {
        for (row, make, fragment) in rows {
            for profile in ProviderProfile::ALL {
                check_outcome_of(row, profile, make(), fragment);
            }
        }
    });
}

fn nested_arrays_schema() -> Value {
    nested_arrays(DEEP)
}

/// [`check_tool`] with a fragment known only at run time.
fn check_outcome_of(row: &str, profile: ProviderProfile, schema: Value, fragment: &str) {
    let listing = listing("srv", vec![tool("deep", schema), tool("ok", plain())]);
    let catalog = materialize(std::slice::from_ref(&listing), &options(profile));
    assert!(has_tool(&catalog, "srv", "ok"), "{row}: ok kept");
    assert!(!has_tool(&catalog, "srv", "deep"), "{row}: left out");
    assert!(
        catalog.diagnostics().iter().any(|d| d.level == Level::Error
            && d.tool.as_deref() == Some("deep")
            && d.message.contains("\"srv\"")
            && d.message.contains("\"deep\"")
            && d.message.contains(fragment)),
        "{row} ({}): an error with {fragment:?}\n{}",
        profile.as_str(),
        diagnostics_text(&catalog)
    );
    drop(catalog);
    dispose_listing(listing);
}

/// Nesting within the limit still works in every profile.
#[test]
fn moderately_nested_schemas_stay() {
    type Row = (&'static str, fn() -> Value);
    let rows: &[Row] = &[
        ("8 property levels", || nested_schema(8, wrap_property)),
        ("9 item levels", || nested_schema(9, wrap_items)),
    ];
    on_small_stack(move || {
        for (row, make) in rows {
            for profile in ProviderProfile::ALL {
                check_tool(row, profile, "nested", make(), Expect::Kept);
            }
        }
    });
}

/// Deep listings, results, arguments and utility answers through a
/// session runtime on a 2 MiB stack: nothing overflows, deep tools (deep
/// input or output schemas) are left out, deep results become text, deep
/// arguments are refused.
#[test]
fn deep_values_through_the_runtime() {
    type Row = (&'static str, fn() -> CallToolResult, &'static str);
    let results: &[Row] = &[
        (
            "deep structuredContent",
            || CallToolResult {
                content: vec![json!({"type": "text", "text": "see structured"}).into()],
                structured_content: Some(obj(vec![("tree", nested_objects(DEEP))])),
                is_error: false,
            },
            "structuredContent:\n{\n  \"tree\": {\n    \"k\": {",
        ),
        (
            "deep unknown block",
            || CallToolResult {
                content: vec![ContentBlock::from(obj(vec![
                    ("type", json!("widget")),
                    ("body", nested_arrays(DEEP)),
                ]))],
                structured_content: None,
                is_error: false,
            },
            "{\"type\":\"widget\",\"body\":[[[[",
        ),
        (
            "deep text field",
            || CallToolResult {
                content: vec![ContentBlock::from(obj(vec![
                    ("type", json!("text")),
                    ("text", nested_arrays(DEEP)),
                ]))],
                structured_content: None,
                is_error: true,
            },
            "{\"type\":\"text\",\"text\":[[[[",
        ),
        (
            "deep resource",
            || CallToolResult {
                content: vec![ContentBlock::from(obj(vec![
                    ("type", json!("resource")),
                    ("resource", nested_objects(DEEP)),
                ]))],
                structured_content: None,
                is_error: false,
            },
            "{\"type\":\"resource\",\"resource\":{\"k\":{",
        ),
        (
            "deep annotations on a text block",
            || CallToolResult {
                content: vec![ContentBlock::from(obj(vec![
                    ("type", json!("text")),
                    ("text", json!("the text is shown")),
                    ("annotations", nested_objects(DEEP)),
                ]))],
                structured_content: None,
                is_error: false,
            },
            "the text is shown",
        ),
        (
            "deep _meta on an image without data",
            || CallToolResult {
                content: vec![ContentBlock::from(obj(vec![
                    ("type", json!("image")),
                    ("data", json!("")),
                    ("mimeType", json!("image/png")),
                    ("_meta", nested_objects(DEEP)),
                ]))],
                structured_content: None,
                is_error: false,
            },
            "{\"type\":\"image\",\"data\":\"\",\"mimeType\":\"image/png\"}",
        ),
    ];
    on_small_stack(move || {
        for (row, make_result, expect) in results {
            let script = Scripted {
                tools: Arc::new(|| {
                    vec![
                        tool("ok", plain()),
                        tool("deep", nested_schema(DEEP, wrap_property)),
                        tool("deep_output", {
                            let mut t = plain();
                            t["title"] = json!("x");
                            t
                        }),
                    ]
                    .into_iter()
                    .map(|mut t| {
                        if t.name == "deep_output" {
                            t.output_schema = Some(obj(vec![("default", nested_arrays(DEEP))]));
                            t.annotations = Some(nested_objects(DEEP));
                        }
                        t
                    })
                    .collect()
                }),
                result: Arc::new(*make_result),
                resources: Arc::new(|| {
                    obj(vec![("resources", Value::Array(vec![nested_arrays(DEEP)]))])
                }),
            };
            let runtime = scripted_runtime(script, ProviderProfile::Generic);
            block_on(async {
                let catalog = runtime.catalog().await.unwrap();
                check_outcome(
                    row,
                    ProviderProfile::Generic,
                    &catalog,
                    "srv",
                    "deep",
                    Expect::LeftOut(&["nests deeper than"]),
                );
                assert!(has_tool(&catalog, "srv", "ok"), "{row}: ok kept");
                // An output schema too deep to check results against
                // leaves its tool out, as a deep input schema does.
                check_outcome(
                    row,
                    ProviderProfile::Generic,
                    &catalog,
                    "srv",
                    "deep_output",
                    Expect::LeftOut(&["output schema", "nests deeper than"]),
                );

                let result = runtime.call("srv__ok", json!({"q": "x"})).await.unwrap();
                let text = text_of(&result.content);
                assert!(
                    text.contains(expect),
                    "{row}: {}",
                    &text[..text.len().min(300)]
                );

                let refused = runtime
                    .call("srv__ok", obj(vec![("q", nested_arrays(DEEP))]))
                    .await;
                match refused.as_ref().map_err(CatalogError::kind) {
                    Err(CatalogErrorKind::InvalidArguments { path, message, .. }) => {
                        assert!(message.contains("nest"), "{row}: {path} {message}");
                    }
                    other => panic!("{row}: deep arguments gave {:?}", other.map(|r| r.status)),
                }

                let listed = runtime
                    .call("srv__resources_list", json!({}))
                    .await
                    .unwrap();
                assert!(text_of(&listed.content).contains("[\n        ["), "{row}");

                runtime.shutdown().await;
            });
        }
    });
}

/// A schema just inside the subschema limit compiles and validates an
/// instance as deep as it describes, on a 2 MiB stack.
#[test]
fn schemas_at_the_limit_validate_on_a_small_stack() {
    on_small_stack(|| {
        let script = Scripted {
            tools: Arc::new(|| vec![tool("nested", nested_schema(MAX_ITEMS, wrap_items))]),
            result: Arc::new(|| CallToolResult {
                content: vec![json!({"type": "text", "text": "done"}).into()],
                structured_content: None,
                is_error: false,
            }),
            resources: Arc::new(|| json!({})),
        };
        let runtime = scripted_runtime(script, ProviderProfile::Generic);
        block_on(async {
            let catalog = runtime.catalog().await.unwrap();
            assert!(
                has_tool(&catalog, "srv", "nested"),
                "{}",
                diagnostics_text(&catalog)
            );
            let mut good = json!("leaf");
            let mut bad = json!(7);
            for _ in 0..MAX_ITEMS {
                good = Value::Array(vec![good]);
                bad = Value::Array(vec![bad]);
            }
            let result = runtime.call("srv__nested", obj(vec![("p", good)])).await;
            assert!(result.is_ok(), "{:?}", result.err());
            let refused = runtime.call("srv__nested", obj(vec![("p", bad)])).await;
            assert!(
                matches!(
                    refused.as_ref().map_err(CatalogError::kind),
                    Err(CatalogErrorKind::InvalidArguments { .. })
                ),
                "{:?}",
                refused.map(|r| r.status)
            );
            runtime.shutdown().await;
        });
    });
}

/// Item levels that keep a schema within 64 subschema levels.
const MAX_ITEMS: usize = 62;

// ---------------------------------------------------------------------
// 7: $ref cycles

fn tree_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/node"}},
        "required": ["root"],
        "$defs": {"node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
            },
            "required": ["name"]
        }}
    })
}

/// Reference loops that resolve to nothing are left out in every profile;
/// recursion through a property or items is a valid recursive schema.
#[test]
fn ref_cycles() {
    let loops: &[(&str, Value)] = &[
        (
            "A to B to A (the issue)",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/A"}},
                   "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}),
        ),
        (
            "A to B to A, unused",
            json!({"type": "object",
                   "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}),
        ),
        (
            "self",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/A"}},
                   "$defs": {"A": {"$ref": "#/$defs/A"}}}),
        ),
        (
            "root through allOf",
            json!({"type": "object", "allOf": [{"$ref": "#"}]}),
        ),
        (
            "three through anyOf and not",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/A"}},
                   "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}]},
                             "B": {"not": {"$ref": "#/$defs/C"}},
                             "C": {"type": "string", "allOf": [{"$ref": "#/$defs/A"}]}}}),
        ),
        (
            "into a property and back",
            json!({"type": "object", "properties": {"a": {"$ref": "#/properties/b"},
                                                    "b": {"$ref": "#/properties/a"}}}),
        ),
        (
            "through an anchor",
            json!({"type": "object", "properties": {"x": {"$ref": "#node"}},
                   "$defs": {"n": {"$anchor": "node", "oneOf": [{"$ref": "#node"}, {"type": "null"}]}}}),
        ),
        (
            "if/then",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/A"}},
                   "$defs": {"A": {"if": {"type": "string"}, "then": {"$ref": "#/$defs/A"}}}}),
        ),
    ];
    for (row, schema) in loops {
        for profile in ProviderProfile::ALL {
            check_tool(
                row,
                profile,
                "loop",
                schema.clone(),
                Expect::LeftOut(&["$ref", "cycle"]),
            );
        }
    }

    // Normalising moves the subschema to `patternProperties`, so in the
    // normal form the reference names `false`: the loop is only in the
    // schema as sent, which calls are validated against. (openai-strict
    // refuses the free-form keys first.)
    let only_as_sent = json!({"type": "object", "properties": {"a": {"type": "object",
        "additionalProperties": {"$ref": "#/properties/a/additionalProperties"}}}});
    for profile in [
        ProviderProfile::Generic,
        ProviderProfile::Anthropic,
        ProviderProfile::Gemini,
    ] {
        check_tool(
            "a loop only as sent, through additionalProperties",
            profile,
            "loop",
            only_as_sent.clone(),
            Expect::LeftOut(&["$ref", "cycle", "/properties/a/additionalProperties"]),
        );
    }

    // A nested `$id` makes `#/$defs/A` mean the nested resource's A to a
    // validator: refused rather than checked against the wrong A.
    let hidden = json!({"type": "object",
        "properties": {"x": {"$id": "https://example.invalid/x",
                             "$defs": {"A": {"$ref": "#/$defs/A"}},
                             "$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string"}}});
    for profile in ProviderProfile::ALL {
        check_tool(
            "nested $id",
            profile,
            "hidden",
            hidden.clone(),
            Expect::LeftOut(&["$id"]),
        );
    }
    // The same under a property whose name needs escaping in a JSON
    // pointer: the refusal names the place as `~1` and `~0`.
    let escaped = json!({"type": "object",
        "properties": {"a/b~c": {"$id": "https://example.invalid/x",
                                 "$defs": {"A": {"$ref": "#/$defs/A"}},
                                 "$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string"}}});
    check_tool(
        "nested $id under an escaped name",
        ProviderProfile::Generic,
        "hidden",
        escaped,
        Expect::LeftOut(&["$id", "/properties/a~1b~0c"]),
    );

    let unresolved: &[(&str, Value)] = &[
        (
            "remote",
            json!({"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}}),
        ),
        (
            "relative file",
            json!({"type": "object", "properties": {"x": {"$ref": "other.json#/a"}}}),
        ),
        (
            "missing pointer",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/none"}}}),
        ),
        (
            "missing anchor",
            json!({"type": "object", "properties": {"x": {"$ref": "#nowhere"}}}),
        ),
        (
            "not a string",
            json!({"type": "object", "properties": {"x": {"$ref": 7}}}),
        ),
    ];
    for (row, schema) in unresolved {
        for profile in ProviderProfile::ALL {
            check_tool(
                row,
                profile,
                "dangling",
                schema.clone(),
                Expect::LeftOut(&["does not resolve inside the schema"]),
            );
        }
    }

    let recursive: &[(&str, Value)] = &[
        ("tree via $defs", tree_schema()),
        (
            "root via a property",
            json!({"type": "object", "properties": {"name": {"type": "string"},
                                                    "next": {"$ref": "#"}}}),
        ),
        (
            "linked list via anyOf and a property",
            json!({"type": "object", "properties": {"list": {"$ref": "#/$defs/l"}},
                   "$defs": {"l": {"anyOf": [{"type": "null"},
                                             {"type": "object", "properties": {"next": {"$ref": "#/$defs/l"}}}]}}}),
        ),
    ];
    for (row, schema) in recursive {
        for profile in [
            ProviderProfile::Generic,
            ProviderProfile::Anthropic,
            ProviderProfile::OpenAiStrict,
        ] {
            check_tool(row, profile, "rec", schema.clone(), Expect::Kept);
        }
        // Gemini takes no `$ref`, and a recursive one cannot be inlined.
        check_tool(
            row,
            ProviderProfile::Gemini,
            "rec",
            schema.clone(),
            Expect::LeftOut(&["recursive"]),
        );
    }
}

/// The example through a runtime: `tools` leaves the loop out with
/// an error, `call` of it is an unknown tool (never an abort), and the
/// recursive tree schema still validates arguments.
#[test]
fn ref_cycles_through_the_runtime() {
    on_small_stack(|| {
        for profile in [ProviderProfile::Generic, ProviderProfile::OpenAiStrict] {
            let script = Scripted {
                tools: Arc::new(|| {
                    vec![
                        tool(
                            "loop",
                            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/A"}},
                                   "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}),
                        ),
                        tool("tree", tree_schema()),
                    ]
                }),
                result: Arc::new(|| CallToolResult {
                    content: vec![json!({"type": "text", "text": "done"}).into()],
                    structured_content: None,
                    is_error: false,
                }),
                resources: Arc::new(|| json!({})),
            };
            let runtime = scripted_runtime(script, profile);
            block_on(async {
                let catalog = runtime.catalog().await.unwrap();
                check_outcome(
                    "runtime loop",
                    profile,
                    &catalog,
                    "srv",
                    "loop",
                    Expect::LeftOut(&["$ref", "cycle"]),
                );
                assert!(matches!(
                    runtime
                        .call("srv__loop", json!({"x": 1}))
                        .await
                        .as_ref()
                        .map_err(CatalogError::kind),
                    Err(CatalogErrorKind::UnknownTool { .. })
                ));
                let good = json!({"root": {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}});
                let result = runtime.call("srv__tree", good).await.unwrap();
                assert_eq!(text_of(&result.content), "done");
                let bad = json!({"root": {"name": "a", "children": [{"children": []}]}});
                match runtime
                    .call("srv__tree", bad)
                    .await
                    .as_ref()
                    .map_err(CatalogError::kind)
                {
                    Err(CatalogErrorKind::InvalidArguments { path, .. }) => {
                        assert_eq!(path, "/root/children/0");
                    }
                    other => panic!("tree with a nameless child: {:?}", other.map(|r| r.status)),
                }
                // A legitimately recursive schema with arguments as deep as
                // the argument limit allows validates without overflow.
                let mut deep = json!({"name": "leaf"});
                for _ in 0..50 {
                    deep = json!({"name": "n", "children": [deep]});
                }
                let result = runtime.call("srv__tree", json!({"root": deep})).await;
                assert!(result.is_ok(), "{:?}", result.err());
                runtime.shutdown().await;
            });
        }
    });
}

// ---------------------------------------------------------------------
// 11: size caps

fn many_properties(count: usize, name_len: usize) -> Value {
    let mut properties = Map::new();
    for i in 0..count {
        let name = format!("{i:0name_len$}");
        properties.insert(
            name,
            json!({"type": "string", "description": "a property of a very wide schema"}),
        );
    }
    json!({"type": "object", "properties": properties})
}

/// Doubling `$ref`s: small as sent, 2^levels nodes once inlined.
fn ref_bomb(levels: usize) -> Value {
    let mut defs = Map::new();
    for i in 0..levels {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}}),
        );
    }
    defs.insert(format!("d{levels}"), json!({"type": "string"}));
    json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs})
}

#[test]
fn oversized_schemas_are_left_out() {
    type Row = (&'static str, fn() -> Value, &'static [&'static str]);
    let rows: &[Row] = &[
        (
            "60k properties, 6.6 MB (the issue)",
            || many_properties(60_000, 8),
            &["properties", "limit"],
        ),
        (
            "one 2 MB description",
            || json!({"type": "object", "description": "x".repeat(2 << 20)}),
            &["bytes"],
        ),
        (
            "20k properties",
            || many_properties(20_000, 1),
            &["properties"],
        ),
        (
            "a 1.5 MB enum of long strings",
            || prop(json!({"enum": (0..1000).map(|i| format!("{i:01500}")).collect::<Vec<_>>()})),
            &["bytes"],
        ),
        (
            "300k enum values",
            || json!({"type": "object", "properties": {"e": {"enum": (0..300_000).collect::<Vec<_>>()}}}),
            &["nodes"],
        ),
        (
            "100k anyOf branches",
            || {
                let branches: Vec<Value> = (0..100_000).map(|i| json!({"const": i})).collect();
                json!({"type": "object", "properties": {"v": {"anyOf": branches}}})
            },
            &["nodes"],
        ),
    ];
    for (row, make, fragments) in rows {
        for profile in ProviderProfile::ALL {
            check_tool(row, profile, "big", make(), Expect::LeftOut(fragments));
        }
    }
    // Small as sent, but inlining its references for gemini would build
    // 2^20 nodes: refused before it is built.
    check_tool(
        "ref bomb",
        ProviderProfile::Gemini,
        "bomb",
        ref_bomb(20),
        Expect::LeftOut(&["inlining", "nodes"]),
    );
    check_tool(
        "ref bomb",
        ProviderProfile::Generic,
        "bomb",
        ref_bomb(20),
        Expect::Kept,
    );
}

// ---------------------------------------------------------------------
// 18: translations that would change meaning

type MeaningRow = (&'static str, Value, [Expect; 4]);

/// Expectations per profile in `ProviderProfile::ALL` order: generic,
/// anthropic, openai-strict, gemini.
fn check_meaning(rows: Vec<MeaningRow>) {
    for (row, schema, expects) in rows {
        for (profile, expect) in ProviderProfile::ALL.into_iter().zip(expects) {
            check_tool(row, profile, "t", schema.clone(), expect);
        }
    }
}

const KEPT: Expect = Expect::Kept;

fn prop(schema: Value) -> Value {
    json!({"type": "object", "properties": {"v": schema}, "required": ["v"]})
}

#[test]
fn translations_that_change_meaning_are_refused() {
    const NOT: Expect = Expect::LeftOut(&["not"]);
    const ONE_OF: Expect = Expect::LeftOut(&["oneOf"]);
    const REQUIRED: Expect = Expect::LeftOut(&["required"]);
    check_meaning(vec![
        (
            "not string (the issue)",
            prop(json!({"not": {"type": "string"}})),
            [KEPT, KEPT, NOT, NOT],
        ),
        (
            "not next to a type",
            prop(json!({"type": "integer", "not": {"const": 0}})),
            [KEPT, KEPT, NOT, NOT],
        ),
        (
            "overlapping oneOf",
            prop(json!({"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 3}]})),
            [KEPT, KEPT, ONE_OF, ONE_OF],
        ),
        (
            "oneOf of number and integer",
            prop(json!({"oneOf": [{"type": "number"}, {"type": "integer"}]})),
            [KEPT, KEPT, ONE_OF, ONE_OF],
        ),
        (
            "oneOf of objects without a discriminator",
            prop(json!({"oneOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "object", "properties": {"b": {"type": "string"}}}
            ]})),
            [KEPT, KEPT, ONE_OF, ONE_OF],
        ),
        (
            "if/then/else",
            prop(
                json!({"type": "object", "if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}}),
            ),
            [
                KEPT,
                KEPT,
                Expect::LeftOut(&["if"]),
                Expect::LeftOut(&["if"]),
            ],
        ),
        (
            "dependentRequired",
            prop(
                json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "dependentRequired": {"a": ["b"]}}),
            ),
            [
                KEPT,
                KEPT,
                Expect::LeftOut(&["dependentRequired"]),
                Expect::LeftOut(&["dependentRequired"]),
            ],
        ),
        (
            "tuple",
            prop(
                json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}),
            ),
            [
                KEPT,
                KEPT,
                Expect::LeftOut(&["prefixItems"]),
                Expect::LeftOut(&["prefixItems"]),
            ],
        ),
        (
            "top-level anyOf of different required (the issue)",
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                   "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            [KEPT, REQUIRED, REQUIRED, REQUIRED],
        ),
        (
            "top-level oneOf union of objects",
            json!({"type": "object", "oneOf": [
                {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
                {"type": "object", "properties": {"y": {"type": "integer"}}, "required": ["y"]}
            ]}),
            [KEPT, REQUIRED, REQUIRED, REQUIRED],
        ),
    ]);
}

#[test]
fn translations_that_keep_meaning_stay() {
    check_meaning(vec![
        (
            "oneOf of distinct types",
            prop(json!({"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})),
            [KEPT; 4],
        ),
        (
            "oneOf with a const discriminator",
            prop(json!({"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "string"}}, "required": ["kind", "x"]},
                {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "string"}}, "required": ["kind", "y"]}
            ]})),
            [KEPT; 4],
        ),
        (
            "oneOf of distinct consts",
            prop(json!({"oneOf": [{"const": "a"}, {"const": "b"}]})),
            [KEPT; 4],
        ),
        (
            "top-level allOf adds up required",
            json!({"type": "object", "allOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "string"}}, "required": ["b"]}
            ]}),
            [KEPT; 4],
        ),
        (
            "top-level anyOf with the same required",
            json!({"type": "object", "anyOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"]}
            ]}),
            [KEPT; 4],
        ),
        (
            "bounds only relax",
            prop(json!({"type": "string", "minLength": 2, "maxLength": 5})),
            [KEPT; 4],
        ),
    ]);

    // The flattened top-level allOf requires both.
    let catalog = check_tool(
        "allOf required",
        ProviderProfile::Anthropic,
        "t",
        json!({"type": "object", "allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "string"}}, "required": ["b"]}
        ]}),
        KEPT,
    );
    let tool = catalog.get("srv__t").unwrap();
    assert_eq!(tool.input_schema()["required"], json!(["a", "b"]));
}

/// OpenAI's documented strict-mode limits; other profiles keep the tool.
#[test]
fn openai_strict_limits() {
    const STRICT: ProviderProfile = ProviderProfile::OpenAiStrict;
    type Row = (&'static str, fn() -> Value, &'static [&'static str]);
    let rows: &[Row] = &[
        (
            "11 levels of nesting",
            || nested_schema(10, wrap_property),
            &["nesting", "10"],
        ),
        (
            "5001 properties",
            || many_properties(5_001, 4),
            &["properties", "5000"],
        ),
        (
            "1001 enum values",
            || prop(json!({"enum": (0..1001).collect::<Vec<_>>()})),
            &["enum values", "1000"],
        ),
        (
            "300 long string enum values",
            || {
                let values: Vec<String> = (0..300).map(|i| format!("{i:060}")).collect();
                prop(json!({"enum": values}))
            },
            &["enum", "15000"],
        ),
        (
            "4000 property names of 31 characters",
            || many_properties(4_000, 31),
            &["120000"],
        ),
    ];
    for (row, make, fragments) in rows {
        check_tool(row, STRICT, "wide", make(), Expect::LeftOut(fragments));
        for profile in [ProviderProfile::Generic, ProviderProfile::Anthropic] {
            check_tool(row, profile, "wide", make(), Expect::Kept);
        }
    }
    // At the limits: kept.
    check_tool(
        "10 levels",
        STRICT,
        "ok10",
        nested_schema(9, wrap_property),
        Expect::Kept,
    );
    check_tool(
        "1000 enum values",
        STRICT,
        "ok1000",
        prop(json!({"enum": (0..1000).collect::<Vec<_>>()})),
        Expect::Kept,
    );
}

// ---------------------------------------------------------------------
// 19: names and schema shapes

#[test]
fn colliding_server_prefixes_are_errors_in_both_styles() {
    type Row = (&'static str, NamingStyle, &'static [&'static str]);
    let rows: &[Row] = &[
        (
            "dot and space",
            NamingStyle::OpenClaw,
            &["my.server", "my server"],
        ),
        ("three ways", NamingStyle::OpenClaw, &["a:b", "a b", "a.b"]),
        ("case", NamingStyle::OpenClaw, &["Github", "github"]),
        (
            "claw dot and space",
            NamingStyle::Claw,
            &["my.server", "my server"],
        ),
    ];
    for (row, style, servers) in rows {
        let listings: Vec<ServerTools> = servers
            .iter()
            .map(|s| listing(s, vec![tool("t", plain())]))
            .collect();
        let catalog = materialize(&listings, &MaterializeOptions::default().with_style(*style));
        let mut sorted: Vec<&str> = servers.to_vec();
        sorted.sort();
        for later in &sorted[1..] {
            assert!(
                catalog.diagnostics().iter().any(|d| d.level == Level::Error
                    && d.server == *later
                    && d.message.contains(&format!("{:?}", sorted[0]))
                    && d.message.contains(&format!("{later:?}"))),
                "{row}: an error for {later:?} naming {:?}\n{}",
                sorted[0],
                diagnostics_text(&catalog)
            );
        }
    }
    // openclaw keeps the REFERENCE vector: the second server gets `-2`.
    let listings = vec![
        listing("my.server", vec![tool("t", plain())]),
        listing("my server", vec![tool("t", plain())]),
    ];
    let catalog = materialize(&listings, &openclaw());
    assert_eq!(
        catalog.tools().iter().map(|t| t.name()).collect::<Vec<_>>(),
        ["my-server-2__t", "my-server__t"]
    );
}

#[test]
fn tool_names_and_schema_shapes() {
    let profiles = ProviderProfile::ALL;
    let rows: &[(&str, &str, Value, Expect)] = &[
        ("empty name", "", plain(), Expect::LeftOut(&["empty"])),
        (
            "name over 1024 bytes",
            &"n".repeat(1025),
            plain(),
            Expect::LeftOut(&["1024"]),
        ),
        (
            "schema true",
            "any",
            json!(true),
            Expect::Noted(Level::Warning, &["\"srv\"", "\"any\"", "any object"]),
        ),
        (
            "schema null (missing)",
            "missing",
            Value::Null,
            Expect::Noted(Level::Warning, &["\"srv\"", "\"missing\"", "any object"]),
        ),
        (
            "schema without type",
            "untyped",
            json!({"properties": {"a": {"type": "string"}}}),
            Expect::Kept,
        ),
        (
            "schema a list",
            "list",
            json!([1, 2]),
            Expect::LeftOut(&["not a JSON Schema object"]),
        ),
        (
            "schema a string",
            "string",
            json!("object"),
            Expect::LeftOut(&["not a JSON Schema object"]),
        ),
        (
            "schema a number",
            "number",
            json!(3),
            Expect::LeftOut(&["not a JSON Schema object"]),
        ),
        (
            "schema false",
            "never",
            json!(false),
            Expect::LeftOut(&["input schema"]),
        ),
        (
            "schema of a string",
            "scalar",
            json!({"type": "string"}),
            Expect::LeftOut(&["input schema"]),
        ),
    ];
    for (row, name, schema, expect) in rows {
        for profile in profiles {
            check_tool(row, profile, name, schema.clone(), *expect);
        }
    }
}

/// A schema that is not an object but holds a `$ref` below it (an array
/// of schemas, found by the fuzzer) used to panic in the cycle check,
/// which had nothing to number. Preparing it in any profile answers
/// without a panic (the catalog refuses such a tool before preparing it,
/// see `tool_names_and_schema_shapes`).
#[test]
fn non_object_schemas_holding_references_do_not_panic() {
    for schema in [
        json!([{"$ref": "#"}]),
        json!([{"$ref": "#/$defs/A"}, {"$defs": {"A": {"$ref": "#/$defs/A"}}}]),
        json!([[{"anyOf": [{"$ref": "#"}]}]]),
    ] {
        assert!(mcp_catalog::schemas::check_ref_cycles(&schema).is_ok());
        for profile in ProviderProfile::ALL {
            let _ = mcp_catalog::schemas::prepare_schema(&schema, profile);
        }
    }
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> MaterializeOptions {
    MaterializeOptions::default().with_style(NamingStyle::OpenClaw)
}
