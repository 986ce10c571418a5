//! Snapshots of the whole catalog materialised from a fixture server with
//! hostile names and schemas, in both naming styles and every provider
//! profile. Each produced schema is also checked against what its provider
//! accepts.

#![allow(clippy::expect_used)]

mod support;

use mcp_catalog::{
    MaterializeOptions, NamingStyle, ProviderProfile, ServerFeatures, ServerTools, materialize,
};
use mcp_config::ToolFilter;
use mcp_transport::Tool;
use serde_json::Value;

fn hostile() -> (Vec<String>, Vec<ServerTools>) {
    let text = include_str!("fixtures/hostile.json").replace(
        "\"REPEAT\"",
        &format!("\"{}\"", "very long words ".repeat(100)),
    );
    let fixture: Value = serde_json::from_str(&text).expect("fixture parses");
    let reserved = fixture["reserved"]
        .as_array()
        .expect("reserved")
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let servers = fixture["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .map(|entry| {
            let strings = |v: &Value| -> Vec<String> {
                v.as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            ServerTools::new(
                entry["server"].as_str().expect("server").to_owned(),
                serde_json::from_value::<Vec<Tool>>(entry["tools"].clone()).expect("tools"),
            )
            .with_filter(
                ToolFilter::default()
                    .with_include(strings(&entry["filter"]["include"]))
                    .with_exclude(strings(&entry["filter"]["exclude"])),
            )
            .with_features(
                ServerFeatures::default()
                    .with_resources(entry["features"]["resources"].as_bool().unwrap_or(false))
                    .with_prompts(entry["features"]["prompts"].as_bool().unwrap_or(false)),
            )
        })
        .collect();
    (reserved, servers)
}

fn check(style: NamingStyle, profile: ProviderProfile) {
    let (reserved, servers) = hostile();
    let options = MaterializeOptions::default()
        .with_style(style)
        .with_profile(profile)
        .with_reserved_names(reserved)
        .with_description_limit(200);
    let catalog = materialize(&servers, &options);
    for tool in catalog.tools() {
        let problems = support::problems_for(profile, tool.input_schema());
        assert!(problems.is_empty(), "{}: {problems:?}", tool.name());
        assert!(
            mcp_catalog::tools::is_valid_name(tool.name()),
            "{}",
            tool.name()
        );
    }
    let name = format!("hostile_{}_{}", style.as_str(), profile.as_str());
    insta::assert_json_snapshot!(name, catalog.report());
}

#[test]
fn hostile_openclaw_generic() {
    check(NamingStyle::OpenClaw, ProviderProfile::Generic);
}

#[test]
fn hostile_openclaw_anthropic() {
    check(NamingStyle::OpenClaw, ProviderProfile::Anthropic);
}

#[test]
fn hostile_openclaw_openai_strict() {
    check(NamingStyle::OpenClaw, ProviderProfile::OpenAiStrict);
}

#[test]
fn hostile_openclaw_gemini() {
    check(NamingStyle::OpenClaw, ProviderProfile::Gemini);
}

#[test]
fn hostile_claw_anthropic() {
    check(NamingStyle::Claw, ProviderProfile::Anthropic);
}

#[test]
fn the_host_payload_is_the_tool_list() {
    let (_, servers) = hostile();
    let options = MaterializeOptions::default().with_profile(ProviderProfile::OpenAiStrict);
    let catalog = materialize(&servers, &options);
    let payload = serde_json::to_value(&catalog).unwrap();
    let first = &payload[0];
    assert_eq!(first["type"], "function");
    assert_eq!(first["strict"], true);
    assert!(first.get("parameters").is_some());
    assert_eq!(payload.as_array().unwrap().len(), catalog.tools().len());
    // the bytes are stable from one build to the next
    let again = serde_json::to_string(&materialize(&servers, &options)).unwrap();
    assert_eq!(serde_json::to_string(&catalog).unwrap(), again);
}
