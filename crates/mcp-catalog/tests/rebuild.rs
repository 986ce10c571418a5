//! A rebuild through a [`SchemaCache`] gives exactly what a build from
//! scratch gives, over random sequences of edits to the servers' listings
//! and to the options: the cache only ever saves work.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use mcp_catalog::{
    MaterializeOptions, NamingStyle, ProviderProfile, SchemaCache, ServerFeatures, ServerTools,
    materialize, materialize_cached,
};
use mcp_config::ToolFilter;
use mcp_transport::Tool;
use proptest::prelude::*;
use serde_json::{Value, json};

/// Server names, some of whose prefixes meet once sanitised.
const SERVERS: [&str; 5] = ["a", "a__b", "A", "memory", "s-1"];

/// Tool names, some of which meet across those servers or a reserved
/// name, and one cut to the name length limit.
fn tool_name(i: usize) -> String {
    match i % 6 {
        0 => "x".to_owned(),
        1 => "b__x".to_owned(),
        2 => "X".to_owned(),
        3 => "status".to_owned(),
        4 => "y".repeat(70),
        _ => "query".to_owned(),
    }
}

/// Input schemas: plain, needing normalisation, refused by every profile,
/// and refused by some.
fn input_schema(i: usize) -> Value {
    match i % 5 {
        0 => json!({"type": "object"}),
        1 => json!({
            "type": "object",
            "properties": {
                "q": {"type": ["string", "null"], "format": "uri"},
                "n": {"type": "integer", "nullable": true}
            },
            "required": ["q"]
        }),
        2 => json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
        3 => json!({"anyOf": [{"type": "object"}, {"type": "string"}]}),
        _ => json!({"type": "object", "properties": {"b": {"type": "boolean"}}}),
    }
}

fn output_schema(i: usize) -> Option<Value> {
    match i % 4 {
        0 | 1 => None,
        2 => Some(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}})),
        _ => Some(json!("not a schema")),
    }
}

fn tools(spec: &[(usize, usize, usize)]) -> Vec<Tool> {
    spec.iter()
        .map(|&(name, input, output)| Tool {
            name: tool_name(name),
            title: None,
            description: Some(format!("does {name} with {input}")),
            input_schema: input_schema(input),
            output_schema: output_schema(output),
            annotations: None,
            execution: None,
        })
        .collect()
}

/// One change between two builds.
#[derive(Debug, Clone)]
enum Edit {
    /// The server lists these tools (a new listing).
    List(usize, Vec<(usize, usize, usize)>),
    /// The server lists the same tools again, in a new allocation.
    Relist(usize),
    Remove(usize),
    Features(usize, bool, bool),
    Filter(usize, bool),
    DescriptionLimit(usize, Option<usize>),
    Profile(usize),
    Style(bool),
    Reserve(bool),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    let server = 0..SERVERS.len();
    let spec = prop::collection::vec((0..6usize, 0..5usize, 0..4usize), 0..5);
    prop_oneof![
        4 => (server.clone(), spec).prop_map(|(s, spec)| Edit::List(s, spec)),
        3 => server.clone().prop_map(Edit::Relist),
        1 => server.clone().prop_map(Edit::Remove),
        1 => (server.clone(), any::<bool>(), any::<bool>())
            .prop_map(|(s, r, p)| Edit::Features(s, r, p)),
        1 => (server.clone(), any::<bool>()).prop_map(|(s, f)| Edit::Filter(s, f)),
        1 => (server, prop::option::of(1..40usize))
            .prop_map(|(s, l)| Edit::DescriptionLimit(s, l)),
        1 => (0..ProviderProfile::ALL.len()).prop_map(Edit::Profile),
        1 => any::<bool>().prop_map(Edit::Style),
        1 => any::<bool>().prop_map(Edit::Reserve),
    ]
}

fn apply(
    edit: &Edit,
    servers: &mut BTreeMap<&'static str, ServerTools>,
    options: &mut MaterializeOptions,
) {
    let entry = |servers: &mut BTreeMap<&'static str, ServerTools>, s: usize| {
        servers
            .entry(SERVERS[s])
            .or_insert_with(|| ServerTools::new(SERVERS[s], Vec::new()))
            .clone()
    };
    match edit {
        Edit::List(s, spec) => {
            let mut listing = entry(servers, *s);
            listing.tools = tools(spec).into();
            servers.insert(SERVERS[*s], listing);
        }
        Edit::Relist(s) => {
            let mut listing = entry(servers, *s);
            listing.tools = listing.tools.to_vec().into();
            servers.insert(SERVERS[*s], listing);
        }
        Edit::Remove(s) => {
            servers.remove(SERVERS[*s]);
        }
        Edit::Features(s, resources, prompts) => {
            let listing = entry(servers, *s).with_features(
                ServerFeatures::default()
                    .with_resources(*resources)
                    .with_prompts(*prompts),
            );
            servers.insert(SERVERS[*s], listing);
        }
        Edit::Filter(s, on) => {
            let filter = if *on {
                ToolFilter::default().with_exclude(["x", "prompts_*"])
            } else {
                ToolFilter::default()
            };
            let listing = entry(servers, *s).with_filter(filter);
            servers.insert(SERVERS[*s], listing);
        }
        Edit::DescriptionLimit(s, limit) => {
            let listing =
                entry(servers, *s).with_description_limit(limit.and_then(NonZeroUsize::new));
            servers.insert(SERVERS[*s], listing);
        }
        Edit::Profile(p) => options.profile = ProviderProfile::ALL[*p],
        Edit::Style(openclaw) => {
            options.style = if *openclaw {
                NamingStyle::OpenClaw
            } else {
                NamingStyle::Claw
            }
        }
        Edit::Reserve(on) => {
            options.reserved_names = if *on {
                ["a__x", "mcp__a__x", "memory__status"]
                    .map(str::to_owned)
                    .into()
            } else {
                Default::default()
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_cached_rebuild_is_a_build_from_scratch(
        edits in prop::collection::vec(edit_strategy(), 1..12),
    ) {
        let mut servers = BTreeMap::new();
        let mut options = MaterializeOptions::default();
        let mut cache = SchemaCache::default();
        for edit in &edits {
            apply(edit, &mut servers, &mut options);
            let listings: Vec<ServerTools> = servers.values().cloned().collect();
            let rebuilt = materialize_cached(&listings, &options, &mut cache);
            let fresh = materialize(&listings, &options);
            prop_assert_eq!(
                serde_json::to_string(&rebuilt.report()).unwrap(),
                serde_json::to_string(&fresh.report()).unwrap(),
                "after {:?}", edit
            );
            prop_assert_eq!(
                serde_json::to_string(&rebuilt).unwrap(),
                serde_json::to_string(&fresh).unwrap()
            );
        }
    }
}
