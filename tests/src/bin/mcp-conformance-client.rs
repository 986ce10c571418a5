#![allow(clippy::print_stderr)]

//! `mcp-conformance-client [ARGS…] <server url>`: the client the official MCP
//! conformance suite drives (`cargo xtask conformance`).
//!
//! The suite starts a test server per scenario, names the scenario in
//! `MCP_CONFORMANCE_SCENARIO`, the revision it runs the scenario at in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` and passes the server url as the last
//! argument. The client does what a host does, on our crates alone: it
//! connects over streamable HTTP, opens a session at that revision at most
//! (advertising roots and form elicitation), lists the tools and calls each
//! with arguments built from its input schema (or makes exactly the calls
//! a scenario's `MCP_CONFORMANCE_CONTEXT` names in `toolCalls`), then
//! closes. Server requests on the way are answered
//! by [`Host`]: elicitation accepts with every schema default applied
//! (SEP-1034), roots are empty.
//!
//! Skills scenarios (`sep-2640-*`) get what a host does with the skills
//! extension ([`use_skills`]): list the skills, and only when the
//! scenario stands for a host asked to use one (`sep-2640-client-verify-*`)
//! load the first and read its supporting files if it verified.
//!
//! Auth scenarios plug in through [`auth_provider`]: an
//! [`mcp_oauth::AuthProvider`] handed to the transport, built from
//! `MCP_CONFORMANCE_CONTEXT` when the suite sends one.

use std::process::ExitCode;
use std::sync::Arc;

use async_trait::async_trait;
use mcp_transport::HttpOptions;
use mcp_transport::kinds::StreamableHttpTransport;
use mcp_transport::{ClientHandler, ClientSession, SessionOptions};
use mcp_transport::{ErrorObject, TransportError, TransportErrorKind};
use serde_json::{Map, Value, json};

/// The host side of the conformance client.
#[derive(Debug)]
struct Host;

#[async_trait]
impl ClientHandler for Host {
    fn capabilities(&self) -> Value {
        json!({"roots": {"listChanged": false}, "elicitation": {"form": {}}})
    }

    async fn list_roots(&self, _params: Option<Value>) -> Result<Value, ErrorObject> {
        Ok(json!({"roots": []}))
    }

    async fn elicit(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let schema = params
            .as_ref()
            .and_then(|p| p.get("requestedSchema"))
            .cloned()
            .unwrap_or(Value::Null);
        Ok(json!({"action": "accept", "content": defaults_of(&schema)}))
    }
}

/// The form a person would submit without typing: every property's
/// `default` (SEP-1034), nothing else.
fn defaults_of(schema: &Value) -> Value {
    let mut content = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(default) = property.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    Value::Object(content)
}

/// Arguments for a tool call: defaults where the schema has them, else a
/// plain value of the declared type.
fn sample_arguments(schema: &Value) -> Value {
    let mut arguments = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (index, (name, property)) in properties.iter().enumerate() {
            arguments.insert(name.clone(), sample_value(property, index));
        }
    }
    Value::Object(arguments)
}

fn sample_value(property: &Value, index: usize) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    if let Some(first) = property
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match property.get("type").and_then(Value::as_str) {
        Some("number") | Some("integer") => json!(index + 1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("test"),
    }
}

/// Credentials for the scenario, if it needs any: an `mcp_oauth` provider
/// for the `auth/*` scenarios, built from `MCP_CONFORMANCE_CONTEXT`
/// ([`mcp_integration_tests::conformance_auth`]); none otherwise.
fn auth_provider(
    scenario: &str,
    url: &str,
) -> Result<Option<Arc<dyn mcp_oauth::AuthProvider>>, String> {
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT").ok();
    mcp_integration_tests::conformance_auth::auth_provider(scenario, url, context.as_deref())
}

/// The tool calls `MCP_CONFORMANCE_CONTEXT` asks for (`toolCalls`: name
/// and arguments), if it asks for any.
fn scenario_tool_calls() -> Option<Vec<(String, Value)>> {
    let context: Value =
        serde_json::from_str(&std::env::var("MCP_CONFORMANCE_CONTEXT").ok()?).ok()?;
    tool_calls_of(&context)
}

fn tool_calls_of(context: &Value) -> Option<Vec<(String, Value)>> {
    let calls = context.get("toolCalls")?.as_array()?;
    Some(
        calls
            .iter()
            .filter_map(|call| {
                let name = call.get("name")?.as_str()?.to_owned();
                let arguments = call.get("arguments").cloned().unwrap_or_else(|| json!({}));
                Some((name, arguments))
            })
            .collect(),
    )
}

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let mut options = HttpOptions::new("conformance", url);
    options.auth = auth_provider(scenario, url)?;
    let transport = StreamableHttpTransport::connect(options)
        .await
        .map_err(|e| e.to_string())?;
    let mut session_options = SessionOptions::default();
    session_options.client_info.name = "mcp-conformance-client".to_owned();
    session_options.handler = Some(Arc::new(Host));
    // The newest revision the scenario runs at: a 2025-11-25 scenario
    // expects the `initialize` handshake, not a `server/discover` probe.
    if let Ok(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        && !version.is_empty()
    {
        session_options.protocol_version = version;
    }
    let session = ClientSession::initialize(Box::new(transport), "conformance", session_options)
        .await
        .map_err(|e| e.to_string())?;
    eprintln!("initialized: protocol {}", session.protocol_version());
    if scenario.starts_with("sep-2640-") {
        let outcome = use_skills(&session, scenario.starts_with("sep-2640-client-verify")).await;
        session.close().await.map_err(|e| e.to_string())?;
        return outcome;
    }
    let tools = session.list_tools().await.map_err(|e| e.to_string())?;
    eprintln!(
        "tools: {}",
        tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    // json-schema-2020-12-preservation asks for the focal tool's
    // inputSchema back through its echo tool, exactly as the session holds
    // it, so the suite sees what parsing kept.
    let focal_schema = tools
        .iter()
        .find(|tool| tool.name == "json_schema_2020_12_tool")
        .map(|tool| tool.input_schema.clone());
    // A scenario that names the calls to make (`toolCalls` in
    // `MCP_CONFORMANCE_CONTEXT`, e.g. http-custom-headers) gets exactly
    // those, with its arguments; otherwise every listed tool is called once.
    let calls: Vec<(String, Value)> = match scenario_tool_calls() {
        Some(calls) => calls,
        None => tools
            .iter()
            .map(|tool| {
                let arguments = match (&focal_schema, tool.name.as_str()) {
                    (Some(schema), "json_schema_echo") => json!({"schema": schema}),
                    _ => sample_arguments(&tool.input_schema),
                };
                (tool.name.clone(), arguments)
            })
            .collect(),
    };
    let mut failures = Vec::new();
    for (name, arguments) in calls {
        let outcome = session.call_tool(&name, Some(arguments)).await;
        note(
            &mut failures,
            &name,
            outcome.map(|result| json!(result.content)),
        );
    }
    // What a host reaches for next: the resources and prompts the server
    // offers, one read and one get (so every request shape goes out).
    if session.has_capability("resources") {
        let listed = session.list_resources().await;
        if let Ok(Some(first)) = listed.as_ref().map(|list| list.first()) {
            let read = session.read_resource(&first.uri).await;
            note(
                &mut failures,
                "resources/read",
                read.map(|r| json!(r.contents)),
            );
        }
        note(
            &mut failures,
            "resources/list",
            listed.map(|l| json!(l.len())),
        );
    }
    if session.has_capability("prompts") {
        let listed = session.list_prompts().await;
        if let Ok(Some(first)) = listed.as_ref().map(|list| list.first()) {
            let arguments = prompt_arguments(&first.arguments);
            let got = session.get_prompt(&first.name, Some(arguments)).await;
            note(&mut failures, "prompts/get", got.map(|g| json!(g.messages)));
        }
        note(
            &mut failures,
            "prompts/list",
            listed.map(|l| json!(l.len())),
        );
    }
    session.close().await.map_err(|e| e.to_string())?;
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

/// Records one request's outcome: a JSON-RPC error is the server's answer
/// (a scenario server may list what it does not implement), anything else
/// that failed is the client's failure.
fn note(failures: &mut Vec<String>, what: &str, outcome: Result<Value, TransportError>) {
    match outcome {
        Ok(answer) => eprintln!("{what}: {answer}"),
        Err(e) if matches!(e.kind(), TransportErrorKind::Rpc { .. }) => {
            eprintln!("{what}: the server answered {e}")
        }
        Err(e) => failures.push(format!("{what}: {e}")),
    }
}

/// Arguments for `prompts/get`: a plain string for every declared argument.
fn prompt_arguments(arguments: &[Value]) -> Value {
    let mut map = Map::new();
    for argument in arguments {
        if let Some(name) = argument.get("name").and_then(Value::as_str) {
            map.insert(name.to_owned(), json!("test"));
        }
    }
    Value::Object(map)
}

/// What a host does with a server's skills: list them (reading no file),
/// and when `use_one` (the host was asked to use a skill) load the first
/// and read its supporting files, each verified, only if its `SKILL.md`
/// verified.
async fn use_skills(session: &ClientSession, use_one: bool) -> Result<(), String> {
    use mcp_catalog::agent_skills::{SkillFiles, advertises_skills};
    if !advertises_skills(session.server_capabilities()) {
        return Err("the server does not offer the skills extension".into());
    }
    let source = mcp_catalog::agent_skills::SessionSkills::new("conformance", session);
    let listing = mcp_catalog::agent_skills::list_skills(&source)
        .await
        .map_err(|e| e.to_string())?;
    for note in &listing.diagnostics {
        eprintln!("{}", note.message);
    }
    let names: Vec<&str> = listing.skills.iter().map(|s| s.name.as_str()).collect();
    eprintln!("skills: {}", names.join(", "));
    let Some(skill) = listing.skills.first().filter(|_| use_one) else {
        return Ok(());
    };
    let loaded = mcp_catalog::agent_skills::load_skill(&source, skill)
        .await
        .map_err(|e| e.to_string())?;
    eprintln!("loaded {} ({} bytes)", skill.uri, loaded.text.len());
    if let SkillFiles::Listed(files) = &skill.files {
        for file in files.iter().filter(|f| f.uri != skill.uri) {
            let content = loaded
                .read_file(&source, &file.uri)
                .await
                .map_err(|e| e.to_string())?;
            eprintln!("read {} ({} bytes)", content.uri, content.bytes.len());
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: mcp-conformance-client [ARGS…] <server url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("scenario {scenario:?} against {url}");
    match run(&url, &scenario).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elicitation_answers_with_exactly_the_schema_defaults() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "nickname": {"type": "string"}
        }});
        assert_eq!(
            defaults_of(&schema),
            json!({"name": "John Doe", "age": 30, "status": "active"})
        );
        assert_eq!(defaults_of(&json!(null)), json!({}));
    }

    #[test]
    fn the_scenario_context_names_the_calls_to_make() {
        let context = json!({"name": "http-custom-headers", "toolCalls": [
            {"name": "a", "arguments": {"verbose": null}},
            {"name": "b"}
        ]});
        assert_eq!(
            tool_calls_of(&context),
            Some(vec![
                ("a".to_owned(), json!({"verbose": null})),
                ("b".to_owned(), json!({}))
            ])
        );
        assert_eq!(tool_calls_of(&json!({"client_id": "x"})), None);
    }

    #[test]
    fn tool_arguments_follow_the_schema_types() {
        let schema = json!({"properties": {"a": {"type": "number"}, "b": {"type": "number"}, "s": {"type": "string"}}});
        assert_eq!(
            sample_arguments(&schema),
            json!({"a": 1, "b": 2, "s": "test"})
        );
    }
}
