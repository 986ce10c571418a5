//! Properties of materialisation over arbitrary names and schemas.

mod support;

use std::borrow::Cow;
use std::collections::HashSet;

use mcp_catalog::ProviderProfile;
use mcp_catalog::schemas::{
    SchemaLimits, check_composition, normalize_schema, prepare_schema, prepare_schema_shared,
    schema_for_profile,
};
use mcp_catalog::tools::materialize_among;
use mcp_catalog::tools::{is_valid_name, tool_owners};
use mcp_catalog::{
    MaterializeOptions, NamingStyle, SchemaCache, ServerFeatures, ServerTools, materialize,
};
use mcp_transport::Tool;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn name_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,8}",
        "[A-Za-z0-9_.: -]{0,12}",
        "\\PC{0,20}",
        "[a-z]{60,90}",
        Just("memory".to_owned()),
        Just("status".to_owned()),
        Just("claude.ai Example Server".to_owned()),
        Just(String::new()),
    ]
}

fn listings_strategy() -> impl Strategy<Value = Vec<ServerTools>> {
    prop::collection::btree_map(
        name_strategy(),
        (
            prop::collection::vec(name_strategy(), 0..6),
            any::<bool>(),
            any::<bool>(),
        ),
        0..6,
    )
    .prop_map(|servers| {
        servers
            .into_iter()
            .map(|(server, (tools, resources, prompts))| {
                ServerTools::new(
                    server,
                    tools
                        .into_iter()
                        .map(|name| Tool {
                            name,
                            title: None,
                            description: None,
                            input_schema: json!({"type": "object"}),
                            output_schema: None,
                            annotations: None,
                            execution: None,
                        })
                        .collect::<Vec<_>>(),
                )
                .with_features(
                    ServerFeatures::default()
                        .with_resources(resources)
                        .with_prompts(prompts),
                )
            })
            .collect()
    })
}

fn style_strategy() -> impl Strategy<Value = NamingStyle> {
    prop_oneof![Just(NamingStyle::OpenClaw), Just(NamingStyle::Claw)]
}

fn options(style: NamingStyle) -> MaterializeOptions {
    MaterializeOptions::default()
        .with_style(style)
        .with_reserved_names(["memory__status", "read", "mcp__memory__status"])
}

/// Arbitrary JSON-Schema-like values, hostile ones included.
fn schema_strategy() -> impl Strategy<Value = Value> {
    schemas_from(Vec::new())
}

/// Schemas holding references, some of them into places normalising
/// rewrites or moves (`additionalProperties`, `anyOf`, `type`).
fn schema_with_refs_strategy() -> impl Strategy<Value = Value> {
    schemas_from(vec![
        json!({"$ref": "#"}),
        json!({"$ref": "#/properties/p0"}),
        json!({"$ref": "#/additionalProperties"}),
        json!({"$ref": "#/properties/p0/additionalProperties"}),
        json!({"$ref": "#/anyOf/0"}),
        json!({"$ref": "#/allOf/0"}),
        json!({"$ref": "#/items"}),
        json!({"$ref": "#/$defs/p0"}),
        json!({"$ref": "#/$defs/p1/anyOf/1"}),
        json!({"$dynamicRef": "#/properties/p1"}),
        json!({"type": ["string", "integer"], "anyOf": [{"$ref": "#/anyOf/0"}]}),
    ])
}

/// Schemas made of the usual leaves and `extra` ones, up to four levels.
fn schemas_from(extra: Vec<Value>) -> impl Strategy<Value = Value> {
    let mut leaves = vec![
        json!({"type": "string", "format": "uri"}),
        json!({"type": ["string", "null"]}),
        json!({"type": "integer", "nullable": true}),
        json!({"type": "array"}),
        json!({"$dynamicRef": "#meta"}),
        json!({"enum": [1, "a", null]}),
        json!({"type": []}),
        json!(true),
        json!(false),
        json!({}),
        json!(null),
        json!("string"),
    ];
    leaves.extend(extra);
    let leaf = prop::sample::select(leaves);
    leaf.prop_recursive(4, 40, 4, |inner| {
        let keywords = prop_oneof![
            Just("properties"),
            Just("items"),
            Just("additionalProperties"),
            Just("anyOf"),
            Just("allOf"),
            Just("oneOf"),
            Just("$defs"),
            Just("not"),
            Just("prefixItems"),
        ];
        prop::collection::vec(
            (keywords, prop::collection::vec(inner, 1..3), any::<bool>()),
            1..4,
        )
        .prop_map(|entries| {
            let mut map = Map::new();
            for (keyword, children, nullable) in entries {
                let value = match keyword {
                    "properties" | "$defs" => Value::Object(
                        children
                            .into_iter()
                            .enumerate()
                            .map(|(i, c)| (format!("p{i}"), c))
                            .collect(),
                    ),
                    "anyOf" | "allOf" | "oneOf" | "prefixItems" => Value::Array(children),
                    _ => children.into_iter().next().unwrap_or(Value::Bool(true)),
                };
                map.insert(keyword.to_owned(), value);
                if nullable {
                    map.insert("nullable".into(), Value::Bool(true));
                }
            }
            Value::Object(map)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn names_are_valid_and_unique(listings in listings_strategy(), style in style_strategy()) {
        let options = options(style);
        let catalog = materialize(&listings, &options);
        let mut seen = HashSet::new();
        for tool in catalog.tools() {
            prop_assert!(is_valid_name(tool.name()), "invalid name {:?}", tool.name());
            let key = match style {
                NamingStyle::OpenClaw => tool.name().to_ascii_lowercase(),
                NamingStyle::Claw => tool.name().to_owned(),
                other => panic!("no uniqueness rule for {other:?}"),
            };
            prop_assert!(seen.insert(key), "duplicate name {:?}", tool.name());
            let reserved = options.reserved_names.iter().any(|r| match style {
                NamingStyle::OpenClaw => r.eq_ignore_ascii_case(tool.name()),
                NamingStyle::Claw => r == tool.name(),
                other => panic!("no reservation rule for {other:?}"),
            });
            prop_assert!(!reserved, "reserved name {:?} handed out", tool.name());
        }
    }

    #[test]
    fn answer_order_does_not_matter(
        listings in listings_strategy(),
        style in style_strategy(),
        seed in any::<u64>(),
    ) {
        let options = options(style);
        let expected = serde_json::to_string(&materialize(&listings, &options).report()).unwrap();
        let mut shuffled = listings.clone();
        // a deterministic shuffle from the seed
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let j = (state % (i as u64 + 1)) as usize;
            shuffled.swap(i, j);
        }
        let actual = serde_json::to_string(&materialize(&shuffled, &options).report()).unwrap();
        prop_assert_eq!(expected, actual);
    }

    #[test]
    fn every_name_is_found_among_its_owners_and_named_alike_alone(
        listings in listings_strategy(),
        style in style_strategy(),
    ) {
        let options = options(style);
        let catalog = materialize(&listings, &options);
        let servers: Vec<&str> = listings.iter().map(|l| l.server.as_str()).collect();
        for tool in catalog.tools() {
            let owners = tool_owners(style, servers.iter().copied(), tool.name());
            prop_assert!(
                owners.contains(&tool.origin().server.as_str()),
                "{:?} of {:?} not among {:?}", tool.name(), tool.origin().server, owners
            );
        }
        for listing in &listings {
            let alone = materialize_among(
                std::slice::from_ref(listing),
                servers.iter().copied(),
                &options,
                &mut SchemaCache::default(),
            );
            // Names that needed a tie broken between tools may differ
            // without the other servers' tools; every other name is the same.
            let adjusted = catalog.diagnostics().iter().chain(alone.diagnostics())
                .any(|d| d.server == listing.server && d.tool.is_some());
            if adjusted {
                continue;
            }
            let full: Vec<&str> = catalog.tools().iter()
                .filter(|t| t.origin().server == listing.server)
                .map(|t| t.name())
                .collect();
            let own: Vec<&str> = alone.tools().iter().map(|t| t.name()).collect();
            prop_assert_eq!(full, own);
        }
    }

    #[test]
    fn normalising_twice_changes_nothing(schema in schema_strategy()) {
        let once = normalize_schema(&schema);
        prop_assert_eq!(normalize_schema(&once), once.clone());
    }

    #[test]
    fn sharing_an_already_normal_schema_gives_what_rewriting_gives(schema in schema_strategy()) {
        for profile in ProviderProfile::ALL {
            // Errors compare by what they say: the path and the reason.
            let shared = prepare_schema_shared(&schema, profile)
                .map(Cow::into_owned)
                .map_err(|e| e.to_string());
            let rewritten =
                schema_for_profile(&normalize_schema(&schema), profile).map_err(|e| e.to_string());
            prop_assert_eq!(shared, rewritten);
        }
        let normal = normalize_schema(&schema);
        if normal.is_object()
            && let Ok(shared) = prepare_schema_shared(&normal, ProviderProfile::Generic)
        {
            prop_assert!(matches!(shared, Cow::Borrowed(_)), "{:#} was copied", normal);
        }
    }

    #[test]
    fn a_prepared_schema_passes_the_reference_checks_as_sent(schema in schema_with_refs_strategy()) {
        // Calls are validated against the schema as sent: whatever the
        // preparation accepts, its references must not loop or fan out.
        for profile in ProviderProfile::ALL {
            if prepare_schema(&schema, profile).is_ok() {
                prop_assert!(
                    check_composition(&schema, &SchemaLimits::default()).is_ok(),
                    "{} accepted {:#}", profile.as_str(), schema
                );
            }
        }
    }

    #[test]
    fn every_produced_schema_is_accepted_by_its_provider(schema in schema_strategy()) {
        for profile in ProviderProfile::ALL {
            if let Ok(out) = prepare_schema(&schema, profile) {
                let problems = support::problems_for(profile, &out);
                prop_assert!(problems.is_empty(), "{} produced {:#} from {:#}: {:?}", profile.as_str(), out, schema, problems);
            }
        }
    }
}

#[test]
fn duplicate_server_names_do_not_depend_on_order() {
    let a = ServerTools::new("dup", Vec::new());
    let mut b = a.clone();
    b.features.resources = true;
    b.tools = vec![Tool {
        name: "x".into(),
        title: None,
        description: None,
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: None,
        execution: None,
    }]
    .into();
    let options = MaterializeOptions::default();
    let first =
        serde_json::to_string(&materialize(&[a.clone(), b.clone()], &options).report()).unwrap();
    let second = serde_json::to_string(&materialize(&[b, a], &options).report()).unwrap();
    assert_eq!(first, second);
}
