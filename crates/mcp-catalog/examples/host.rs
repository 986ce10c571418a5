//! A complete host over these crates, step by step: the configured servers
//! (after the user's approval) and one in-process server become one
//! Anthropic tool catalog; the host calls tools and hands their results
//! back in Anthropic's `tool_result` shape, answers the servers' questions
//! (roots, elicitation) through a typed handler, and notices when the
//! catalog changes.
//!
//! ```text
//! cargo run -p mcp-catalog --example host -- [--home DIR] [--project DIR]
//! ```
//!
//! Without flags it reads the real configuration (`$HOME` and the current
//! folder). The configuration names the in-process server like any other
//! entry, `"notes": {"type": "sdk", "name": "notes"}`; it is the host that
//! registers what an `sdk` entry names. If the configuration also has a
//! server called `example` (the workspace's `mcp-example-server`), the host
//! calls its `add`, `ask_roots` and `elicit` tools too. CI runs it that way, and any
//! step that fails makes the example exit with an error.
//!
//! Its output is for people; a real host would send `catalog` to its model
//! and the `tool_result` blocks back with the next turn.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use mcp_catalog::{
    Catalog, MaterializeOptions, McpConnector, ProviderProfile, RuntimeOptions, ServerSet,
    SessionRuntime, ToolTarget,
};
use mcp_config::{LoadOptions, load};
use mcp_transport::handler::{
    ElicitAction, ElicitParams, ElicitResult, ElicitValue, ElicitationHandler, ListRootsResult,
    RequestContext, Root, RootsProvider, Typed, TypedClientHandler,
};
use mcp_transport::kinds::{SdkRegistry, ToolOutput, ToolRouter, ToolSpec};
use mcp_transport::{ConnectOptions, ErrorObject, SessionOptions};
use serde_json::{Value, json};

/// How long the host waits for a change it caused before calling it lost.
const CHANGE_PATIENCE: Duration = Duration::from_secs(10);

/// The host's answers to what servers ask: its project folder as the one
/// root, and a form elicitation answered as a user would (non-interactive
/// here: every text field gets the host's name).
struct Answers {
    project: Option<PathBuf>,
}

impl TypedClientHandler for Answers {
    // Handing out a feature is what declares its capability.
    fn roots(&self) -> Option<&dyn RootsProvider> {
        Some(self)
    }

    fn elicitation(&self) -> Option<&dyn ElicitationHandler> {
        Some(self)
    }
}

#[async_trait]
impl RootsProvider for Answers {
    async fn list_roots(&self, _: RequestContext<'_>) -> Result<ListRootsResult, ErrorObject> {
        let roots = self
            .project
            .iter()
            .filter_map(|folder| url::Url::from_directory_path(folder).ok())
            .map(|uri| Root::new(uri.as_str()))
            .collect();
        Ok(ListRootsResult { roots })
    }
}

#[async_trait]
impl ElicitationHandler for Answers {
    async fn elicit(
        &self,
        context: RequestContext<'_>,
        params: ElicitParams,
    ) -> Result<ElicitResult, ErrorObject> {
        let ElicitParams::Form {
            message,
            requested_schema,
        } = params
        else {
            // Only form mode is declared, so nothing else arrives.
            return Ok(ElicitResult::action(ElicitAction::Decline));
        };
        println!("  {} asks: {message}", context.server);
        let properties = requested_schema["properties"].as_object();
        let answer: BTreeMap<String, ElicitValue> = properties
            .into_iter()
            .flatten()
            .filter(|(_, property)| property["type"] == "string")
            .map(|(field, _)| (field.clone(), ElicitValue::String("host example".into())))
            .collect();
        Ok(ElicitResult::accept(answer))
    }
}

/// The host's own tools, served in-process: notes kept in memory.
fn notes_server() -> ToolRouter {
    #[derive(serde::Deserialize)]
    struct Note {
        text: String,
    }
    let notes = Arc::new(Mutex::new(Vec::<String>::new()));
    let kept = Arc::clone(&notes);
    let text =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
    ToolRouter::new("notes", "1.0.0")
        .with_typed_tool(
            ToolSpec::new("add_note", text).with_description("Keeps a note"),
            move |Note { text }| {
                let notes = Arc::clone(&kept);
                async move {
                    let mut notes = notes.lock().map_err(|_| "the notes are unreadable")?;
                    notes.push(text);
                    Ok::<_, &str>(ToolOutput::text(format!("notes kept: {}", notes.len())))
                }
            },
        )
        .with_tool(
            ToolSpec::new("list_notes", json!({"type": "object"}))
                .with_description("Lists the notes"),
            move |_| {
                let notes = notes
                    .lock()
                    .map(|notes| notes.clone())
                    .map_err(|_| "the notes are unreadable");
                async move { Ok::<_, &str>(ToolOutput::structured(json!({ "notes": notes? }))) }
            },
        )
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("host: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    // 1. The configuration, and the user's approval of project servers.
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let mut home = env.get("HOME").map(PathBuf::from);
    let mut project = std::env::current_dir().ok();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let folder = args.next().map(PathBuf::from);
        match (flag.as_str(), folder) {
            ("--home", Some(folder)) => home = Some(folder),
            ("--project", Some(folder)) => project = Some(folder),
            _ => {
                return Err(format!(
                    "usage: host [--home DIR] [--project DIR] (at {flag:?})"
                ));
            }
        }
    }
    let mut load_options = LoadOptions::default().with_env(env.clone());
    if let Some(home) = &home {
        load_options = load_options.with_home(home);
    }
    if let Some(project) = &project {
        load_options = load_options.with_project(project);
    }
    let loaded = load(&load_options);
    for diagnostic in &loaded.diagnostics {
        eprintln!("config {:?}: {}", diagnostic.level, diagnostic.message);
    }
    // Project servers the user has not approved stay out (with a note).
    let servers = ServerSet::from_loaded(&loaded);
    for note in servers.withheld() {
        eprintln!("withheld {}: {}", note.server, note.message);
    }
    let names: Vec<&str> = servers.runnable().iter().map(|s| s.name.as_str()).collect();
    println!("servers: {}", names.join(", "));

    // 2. How sessions connect: the in-process server, the typed answers
    // to server requests, the environment stdio children draw from.
    let notes = notes_server();
    let mut registry = SdkRegistry::new();
    registry.register("notes", Arc::new(notes.clone()));
    let answers = Typed::shared(Answers { project });
    let connect = ConnectOptions::new()
        .with_env(env)
        .with_sdk_servers(Arc::new(registry))
        .with_session(SessionOptions::default().with_handler(answers));

    // 3. A runtime that connects lazily, on the first catalog, and an
    // Anthropic-shaped catalog.
    let options = RuntimeOptions::default()
        .with_materialize(MaterializeOptions::default().with_profile(ProviderProfile::Anthropic))
        .with_idle_ttl(loaded.session_idle_ttl);
    let connector = Arc::new(McpConnector::new(connect));
    let runtime = SessionRuntime::builder("host-example", servers, connector)
        .with_options(options)
        .build();
    let outcome = converse(&runtime, &notes).await;
    runtime.shutdown().await;
    outcome
}

/// What a host does turn after turn: show the model the catalog, run the
/// tools it calls, and keep the catalog current.
async fn converse(runtime: &SessionRuntime, notes: &ToolRouter) -> Result<(), String> {
    let catalog = runtime.catalog().await.map_err(|e| e.to_string())?;
    for diagnostic in catalog.diagnostics() {
        eprintln!(
            "catalog {:?} {}: {}",
            diagnostic.level, diagnostic.server, diagnostic.message
        );
    }
    // Exactly the `tools` array of an Anthropic Messages request.
    let tools = serde_json::to_value(catalog.as_ref()).map_err(|e| e.to_string())?;
    println!(
        "catalog: {} tools, about {} tokens",
        catalog.tools().len(),
        catalog.total_tokens()
    );
    for tool in catalog.tools() {
        println!("  {} ({})", tool.name(), tool.origin().server);
    }
    let name_of = |server: &str, tool: &str| {
        name_in(&catalog, server, tool)
            .ok_or_else(|| format!("the catalog has no {tool} of {server}"))
    };
    if tools.as_array().is_none_or(Vec::is_empty) {
        return Err("the catalog sent to the model is empty".into());
    }

    // 4. The model calls tools; each result goes back as `tool_result`.
    let mut calls = vec![(name_of("notes", "add_note")?, json!({"text": "buy milk"}))];
    calls.push((name_of("notes", "list_notes")?, json!({})));
    if catalog
        .tools()
        .iter()
        .any(|t| t.origin().server == "example")
    {
        calls.push((name_of("example", "add")?, json!({"a": 2, "b": 3})));
        // The server asks for the host's roots, then the user a question;
        // `Answers` replies to both.
        calls.push((name_of("example", "ask_roots")?, json!({})));
        calls.push((name_of("example", "elicit")?, json!({})));
    }
    for (number, (name, arguments)) in calls.into_iter().enumerate() {
        let result = runtime
            .call(&name, arguments)
            .await
            .map_err(|e| e.to_string())?;
        let block = result.to_anthropic(&format!("toolu_{number:02}"));
        println!("{name} -> {block}");
        if block["is_error"] == Value::Bool(true) {
            return Err(format!("{name} failed"));
        }
    }

    // 5. The in-process server grows a tool; the runtime hears its
    // `list_changed` and the host awaits the next catalog version.
    let mut updates = runtime.subscribe();
    wait_until_heard(notes).await?;
    notes.add_tool(
        ToolSpec::new("clear_notes", json!({"type": "object"}))
            .with_description("Forgets every note"),
        |_| async { Ok::<_, String>(ToolOutput::text("forgotten")) },
    );
    let version = tokio::time::timeout(CHANGE_PATIENCE, updates.changed())
        .await
        .map_err(|_| "no catalog change after the tool list changed")?
        .ok_or("the runtime shut down")?;
    let catalog = runtime.catalog().await.map_err(|e| e.to_string())?;
    let added =
        name_in(&catalog, "notes", "clear_notes").ok_or("the new catalog lacks clear_notes")?;
    println!("catalog version {version}: now also {added}");
    Ok(())
}

/// The router announces a change only to sessions listening for it; at
/// 2026-07-28 a session opens its subscription just after connecting.
async fn wait_until_heard(notes: &ToolRouter) -> Result<(), String> {
    tokio::time::timeout(CHANGE_PATIENCE, async {
        while notes.listeners() == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .map_err(|_| "no session listens to the notes server".to_owned())
}

/// The catalog's name for `server`'s tool `tool` (the model sees only
/// catalog names; the naming style decides them).
fn name_in(catalog: &Catalog, server: &str, tool: &str) -> Option<String> {
    catalog
        .tools()
        .iter()
        .find(|t| {
            let origin = t.origin();
            origin.server == server
                && matches!(&origin.target, ToolTarget::Tool { name } if name == tool)
        })
        .map(|t| t.name().to_owned())
}
