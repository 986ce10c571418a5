//! Schema normalisation (REFERENCE §3.4), provider profiles and argument
//! validation.

mod support;

use mcp_catalog::ProviderProfile;
use mcp_catalog::schemas::{
    normalize_schema, prepare_schema, schema_for_profile, strip_optional_nulls,
};
use mcp_catalog::{CatalogErrorKind, MaterializeOptions, ServerTools, materialize};
use mcp_transport::Tool;
use serde_json::{Value, json};

/// Normalises `input` and compares with `expect`; also checks that a
/// second pass changes nothing.
fn check(input: Value, expect: Value) {
    let once = normalize_schema(&input);
    assert_eq!(once, expect, "normalize_schema({input})");
    assert_eq!(
        normalize_schema(&once),
        once,
        "normalize is idempotent for {input}"
    );
}

#[test]
fn format_is_deleted() {
    check(
        json!({"type": "object", "properties": {"when": {"type": "string", "format": "date-time"}, "format": {"type": "string"}}}),
        json!({"type": "object", "properties": {"when": {"type": "string"}, "format": {"type": "string"}}}),
    );
}

#[test]
fn array_type_becomes_any_of() {
    check(
        json!({"type": "object", "properties": {"v": {"type": ["string", "integer"]}}}),
        json!({"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}),
    );
    check(
        json!({"type": "object", "properties": {"v": {"type": ["string"]}}}),
        json!({"type": "object", "properties": {"v": {"type": "string"}}}),
    );
}

#[test]
fn array_type_next_to_any_of_keeps_both() {
    check(
        json!({"type": "object", "properties": {"v": {"type": ["string", "null"], "anyOf": [{"minLength": 1}, {"type": "null"}]}}}),
        json!({"type": "object", "properties": {"v": {"allOf": [
            {"anyOf": [{"minLength": 1}, {"type": "null"}]},
            {"anyOf": [{"type": "string"}, {"type": "null"}]}
        ]}}}),
    );
}

#[test]
fn nullable_adds_null() {
    check(
        json!({"type": "object", "properties": {"v": {"type": "string", "nullable": true}}}),
        json!({"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}),
    );
    check(
        json!({"type": "object", "properties": {"v": {"type": "string", "enum": ["a"], "nullable": true}}}),
        json!({"type": "object", "properties": {"v": {"enum": ["a", null], "anyOf": [{"type": "string"}, {"type": "null"}]}}}),
    );
    check(
        json!({"type": "object", "properties": {"v": {"type": "string", "nullable": false}}}),
        json!({"type": "object", "properties": {"v": {"type": "string"}}}),
    );
}

#[test]
fn map_objects_use_pattern_properties() {
    check(
        json!({"type": "object", "properties": {"env": {"type": "object", "additionalProperties": {"type": "string"}}}}),
        json!({"type": "object", "properties": {"env": {
            "type": "object",
            "patternProperties": {".*": {"type": "string"}},
            "additionalProperties": false
        }}}),
    );
    // with named properties it stays
    check(
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}),
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}),
    );
    // boolean additionalProperties stays
    check(
        json!({"type": "object", "additionalProperties": false}),
        json!({"type": "object", "additionalProperties": false}),
    );
}

#[test]
fn dynamic_ref_becomes_ref() {
    check(
        json!({"type": "object", "properties": {"n": {"$dynamicRef": "#node"}}}),
        json!({"type": "object", "properties": {"n": {"$ref": "#node"}}}),
    );
    check(
        json!({"type": "object", "properties": {"n": {"$ref": "#/a", "$dynamicRef": "#node"}}}),
        json!({"type": "object", "properties": {"n": {"$ref": "#/a", "$dynamicRef": "#node"}}}),
    );
}

#[test]
fn arrays_get_items_and_top_level_gets_type() {
    check(json!({}), json!({"type": "object"}));
    check(json!(true), json!({"type": "object"}));
    check(
        json!({"properties": {"xs": {"type": "array"}}}),
        json!({"properties": {"xs": {"type": "array", "items": {}}}, "type": "object"}),
    );
}

#[test]
fn recursion_reaches_every_subschema_keyword() {
    let f = json!({"type": "string", "format": "uri"});
    let clean = json!({"type": "string"});
    let input = json!({
        "type": "object",
        "$defs": {"a": f}, "definitions": {"b": f},
        "properties": {"c": f}, "patternProperties": {"^d": f}, "dependentSchemas": {"e": f},
        "items": f, "prefixItems": [f], "additionalProperties": f, "contains": f,
        "if": f, "then": f, "else": f, "not": f,
        "allOf": [f], "anyOf": [f], "oneOf": [f],
        "propertyNames": f, "unevaluatedItems": f, "unevaluatedProperties": f
    });
    let expect = json!({
        "type": "object",
        "$defs": {"a": clean}, "definitions": {"b": clean},
        "properties": {"c": clean}, "patternProperties": {"^d": clean}, "dependentSchemas": {"e": clean},
        "items": clean, "prefixItems": [clean], "additionalProperties": clean, "contains": clean,
        "if": clean, "then": clean, "else": clean, "not": clean,
        "allOf": [clean], "anyOf": [clean], "oneOf": [clean],
        "propertyNames": clean, "unevaluatedItems": clean, "unevaluatedProperties": clean
    });
    check(input, expect);
}

fn assert_accepted(profile: ProviderProfile, schema: &Value) {
    let problems = support::problems_for(profile, schema);
    assert!(
        problems.is_empty(),
        "{} rejects {schema:#}: {problems:?}",
        profile.as_str()
    );
}

#[test]
fn anthropic_flattens_top_level_combinators() {
    // Every branch requires the same properties and a const tells them
    // apart: one object schema says the same.
    let schema = json!({
        "oneOf": [
            {"type": "object", "properties": {"v": {"type": "string"}, "kind": {"const": "id"}}, "required": ["kind"]},
            {"type": "object", "properties": {"v": {"type": "integer"}, "kind": {"const": "name"}}, "required": ["kind"]}
        ]
    });
    let out = prepare_schema(&schema, ProviderProfile::Anthropic).unwrap();
    assert_accepted(ProviderProfile::Anthropic, &out);
    assert_eq!(
        out,
        json!({
            "type": "object",
            "properties": {
                "v": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "kind": {"anyOf": [{"const": "id"}, {"const": "name"}]}
            },
            "required": ["kind"]
        })
    );
}

#[test]
fn anthropic_refuses_a_top_level_union_that_would_lose_required() {
    // Flattened, neither `id` nor `name` could be required any more.
    let schema = json!({
        "oneOf": [
            {"type": "object", "properties": {"id": {"type": "string"}, "kind": {"const": "id"}}, "required": ["id", "kind"]},
            {"type": "object", "properties": {"name": {"type": "string"}, "kind": {"const": "name"}}, "required": ["name", "kind"]}
        ]
    });
    let error = prepare_schema(&schema, ProviderProfile::Anthropic).unwrap_err();
    assert_eq!(support::refused(&error).0, "/oneOf");
    assert!(
        support::refused(&error)
            .1
            .contains("require different properties ([id, kind] or [kind, name])"),
        "{error}"
    );
}

#[test]
fn anthropic_all_of_unions_required() {
    let schema = json!({
        "type": "object",
        "allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"$ref": "#/$defs/b"}
        ],
        "$defs": {"b": {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}}
    });
    let out = prepare_schema(&schema, ProviderProfile::Anthropic).unwrap();
    assert_accepted(ProviderProfile::Anthropic, &out);
    assert_eq!(out["required"], json!(["a", "b"]));
}

#[test]
fn non_object_top_level_is_refused() {
    let error = prepare_schema(&json!({"type": "string"}), ProviderProfile::Anthropic).unwrap_err();
    assert_eq!(support::refused(&error).0, "/type");
    let error = prepare_schema(
        &json!({"anyOf": [{"type": "string"}, {"type": "object"}]}),
        ProviderProfile::Anthropic,
    )
    .unwrap_err();
    assert_eq!(support::refused(&error).0, "/anyOf/0");
    assert!(
        error.to_string().contains("not an object schema"),
        "{error}"
    );
}

#[test]
fn openai_strict_closes_objects_and_makes_optional_nullable() {
    let schema = json!({
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "default": 10},
            "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}}
        },
        "required": ["q"]
    });
    let out = prepare_schema(&schema, ProviderProfile::OpenAiStrict).unwrap();
    assert_accepted(ProviderProfile::OpenAiStrict, &out);
    assert_eq!(
        out,
        json!({
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "opts": {"anyOf": [{
                    "type": "object",
                    "properties": {"deep": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}},
                    "additionalProperties": false,
                    "required": ["deep"]
                }, {"type": "null"}]}
            },
            "required": ["q", "limit", "opts"],
            "additionalProperties": false
        })
    );
}

#[test]
fn openai_strict_refuses_a_tuple() {
    // `prefixItems` is outside strict mode's subset; dropping it would lose
    // what each position holds.
    let schema = json!({"type": "object", "properties": {
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}
    }, "required": ["pair"]});
    let error = prepare_schema(&schema, ProviderProfile::OpenAiStrict).unwrap_err();
    assert_eq!(support::refused(&error).0, "/properties/pair/prefixItems");
    assert!(
        support::refused(&error).1.contains("a tuple (prefixItems)"),
        "{error}"
    );
}

#[test]
fn openai_strict_drops_object_keywords_of_a_non_object_type() {
    // `properties` on a string constrains nothing; strict mode would take
    // it for an object it must close, so it goes (found by fuzzing).
    let schema = json!({"type": "object", "properties": {
        "from": {"anyOf": [{"$ref": "#/$defs/point"}, {"type": "null"}]}
    }, "$defs": {"point": {"type": "string", "properties": {"x": {"type": "number"}}, "required": ["x"]}}});
    let out = prepare_schema(&schema, ProviderProfile::OpenAiStrict).unwrap();
    assert_accepted(ProviderProfile::OpenAiStrict, &out);
    assert_eq!(out["$defs"]["point"], json!({"type": "string"}), "{out}");
}

#[test]
fn openai_strict_refuses_free_form_maps() {
    let schema = json!({"type": "object", "properties": {"env": {"type": "object", "additionalProperties": {"type": "string"}}}});
    let error = prepare_schema(&schema, ProviderProfile::OpenAiStrict).unwrap_err();
    assert_eq!(
        support::refused(&error).0,
        "/properties/env/patternProperties"
    );
    // the other profiles express it
    for profile in [
        ProviderProfile::Generic,
        ProviderProfile::Anthropic,
        ProviderProfile::Gemini,
    ] {
        assert_accepted(profile, &prepare_schema(&schema, profile).unwrap());
    }
}

#[test]
fn gemini_inlines_refs_and_uses_nullable() {
    let schema = json!({
        "type": "object",
        "properties": {
            "point": {"$ref": "#/$defs/point", "description": "where"},
            "label": {"type": ["string", "null"]},
            "mode": {"const": "fast"},
            "n": {"enum": [1, 2]}
        },
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number", "exclusiveMinimum": 0}}, "additionalProperties": false}}
    });
    let out = prepare_schema(&schema, ProviderProfile::Gemini).unwrap();
    assert_accepted(ProviderProfile::Gemini, &out);
    assert_eq!(
        out,
        json!({
            "type": "object",
            "properties": {
                "point": {"type": "object", "properties": {"x": {"type": "number"}}, "description": "where"},
                "label": {"type": "string", "nullable": true},
                "mode": {"enum": ["fast"], "type": "string"},
                "n": {}
            }
        })
    );
}

#[test]
fn gemini_refuses_recursive_refs() {
    let schema = json!({
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}
    });
    let error = prepare_schema(&schema, ProviderProfile::Gemini).unwrap_err();
    assert!(
        support::refused(&error)
            .1
            .contains("recursive #/$defs/node"),
        "{error}"
    );
    // the generic profile keeps the reference
    assert!(prepare_schema(&schema, ProviderProfile::Generic).is_ok());
}

#[test]
fn profiles_start_from_the_normalised_schema() {
    let normalized = normalize_schema(
        &json!({"type": "object", "properties": {"a": {"type": "string", "format": "email"}}}),
    );
    assert_eq!(
        schema_for_profile(&normalized, ProviderProfile::Generic).unwrap(),
        normalized
    );
}

#[test]
fn strict_nulls_for_optional_properties_are_dropped() {
    let normalized = normalize_schema(&json!({
        "type": "object",
        "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}, "maybe": {"type": ["string", "null"]}},
        "required": ["q"]
    }));
    let mut args = json!({"q": "x", "limit": null, "maybe": null});
    strip_optional_nulls(&normalized, &mut args);
    assert_eq!(args, json!({"q": "x", "maybe": null}));
}

fn tool_with_schema(schema: Value) -> ServerTools {
    ServerTools::new(
        "s",
        vec![Tool {
            name: "t".into(),
            title: None,
            description: None,
            input_schema: schema,
            output_schema: None,
            annotations: None,
            execution: None,
        }],
    )
}

#[test]
fn arguments_are_validated_with_the_failing_path() {
    let listing = tool_with_schema(json!({
        "type": "object",
        "properties": {"user": {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}}},
        "required": ["user"]
    }));
    let catalog = materialize(&[listing], &openclaw());
    let tool = catalog.get("s__t").unwrap();
    assert!(tool.prepare_arguments(json!({"user": {"age": 3}})).is_ok());
    let error = tool
        .prepare_arguments(json!({"user": {"age": -1}}))
        .unwrap_err();
    match error.kind() {
        CatalogErrorKind::InvalidArguments { tool, path, .. } => {
            assert_eq!(tool, "s__t");
            assert_eq!(path, "/user/age");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        error
            .to_string()
            .starts_with("invalid arguments for tool \"s__t\" at /user/age: "),
        "{error}"
    );
    let error = tool.prepare_arguments(Value::Null).unwrap_err();
    assert!(
        matches!(error.kind(), CatalogErrorKind::InvalidArguments { path, .. } if path == "/"),
        "{error}"
    );
}

#[test]
fn strict_profile_arguments_lose_their_nulls_before_validation() {
    let listing = tool_with_schema(json!({
        "type": "object",
        "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["q"]
    }));
    let options = openclaw().with_profile(ProviderProfile::OpenAiStrict);
    let catalog = materialize(&[listing], &options);
    let tool = catalog.get("s__t").unwrap();
    assert_eq!(
        tool.prepare_arguments(json!({"q": "x", "limit": null}))
            .unwrap(),
        json!({"q": "x"})
    );
}

#[test]
fn unconvertible_tools_are_left_out_and_reported() {
    let listing = tool_with_schema(json!({"type": "array"}));
    let catalog = materialize(&[listing], &openclaw());
    assert!(catalog.tools().is_empty());
    let diagnostic = &catalog.diagnostics()[0];
    assert_eq!(diagnostic.tool.as_deref(), Some("t"));
    assert!(
        diagnostic.message.contains("the tool is left out"),
        "{}",
        diagnostic.message
    );
}

#[test]
fn profiles_parse() {
    for profile in ProviderProfile::ALL {
        assert_eq!(ProviderProfile::parse(profile.as_str()), Some(profile));
    }
    assert_eq!(ProviderProfile::parse("openai"), None);
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> MaterializeOptions {
    MaterializeOptions::default().with_style(mcp_catalog::NamingStyle::OpenClaw)
}
