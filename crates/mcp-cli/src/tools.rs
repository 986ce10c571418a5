//! `tools` and `call`: the materialised catalog and one call through it.
//!
//! `tools` asks the catalog crate's session runtime for the catalog (it
//! connects every runnable server concurrently, lists, names, filters and
//! normalises). `call` needs the server's raw result and its progress
//! notifications, which the runtime does not hand out, so it connects the
//! servers itself, builds the same catalog with `mcp_catalog::materialize`,
//! validates with the catalog tool, calls over the session and converts
//! with `mcp_catalog::convert_result`.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_catalog::clock::SystemClock;
use mcp_catalog::{
    Catalog, CatalogTool, MaterializeOptions, McpConnector, ModelBlock, NamingStyle,
    ProviderProfile, RuntimeOptions, ServerFeatures, ServerSet, ServerTools, SessionRuntime,
    ToolTarget, UtilityTool, convert_result, materialize,
};
use mcp_config::{Level, ScopedServer, load};
use mcp_transport::protocol::CallToolResult;
use mcp_transport::{CallOptions, ClientSession, Progress, TransportError};
use serde_json::{Map, Value, json};

use crate::cli::{CallArgs, NamingArg, ProviderArg, ToolsArgs};
use crate::context::Context;
use crate::output::{self, Outcome, errln, outln, shown, shown_lines, usage};
use crate::session;

/// Converted results larger than this are cut with a note.
const MAX_RESULT_BYTES: usize = mcp_catalog::result::DEFAULT_MAX_RESULT_BYTES;

/// The connected servers and the catalog built from their tools.
struct Connected {
    sessions: Vec<(String, Arc<ClientSession>)>,
    failures: Vec<(String, TransportError)>,
    catalog: Catalog,
}

impl Connected {
    fn session(&self, server: &str) -> Option<&ClientSession> {
        self.sessions
            .iter()
            .find(|(name, _)| name == server)
            .map(|(_, session)| session.as_ref())
    }

    async fn close(self) {
        futures::future::join_all(self.sessions.iter().map(|(_, session)| session.close())).await;
    }

    /// Prints connect failures and catalog problems on stderr.
    fn report_problems(&self) {
        for (_, err) in &self.failures {
            errln!("error: {}", shown(first_line(&err.to_string())));
        }
        for diagnostic in self.catalog.diagnostics() {
            let level = match diagnostic.level {
                Level::Error => "error",
                Level::Warning => "warning",
                Level::Info => continue,
            };
            errln!(
                "{level}: server `{}`: {}",
                shown(&diagnostic.server),
                shown(&diagnostic.message)
            );
        }
    }
}

async fn connect_all(
    context: &Context,
    naming: NamingArg,
    provider: ProviderArg,
    open: &session::Open,
) -> Connected {
    let config = load(&context.load_options());
    let runnable: Vec<&ScopedServer> = config.runnable().collect();
    let options = session::connect_options(context);
    let attempts = futures::future::join_all(runnable.iter().map(|server| {
        let options = &options;
        async move {
            let name = server.config.name.clone();
            let listed = async {
                let session = open.session(mcp_transport::connect(&server.config, options).await?);
                let tools = if session.has_capability("tools") {
                    match session.list_tools().await {
                        Ok(tools) => tools,
                        Err(err) => {
                            let _ = session.close().await;
                            return Err(err);
                        }
                    }
                } else {
                    Vec::new()
                };
                Ok::<_, TransportError>((session, tools))
            }
            .await;
            (server, name, listed)
        }
    }))
    .await;
    let mut sessions = Vec::new();
    let mut failures = Vec::new();
    let mut listings = Vec::new();
    for (server, name, listed) in attempts {
        match listed {
            Ok((session, tools)) => {
                listings.push(ServerTools {
                    server: name.clone(),
                    tools: tools.into(),
                    filter: server.config.tool_filter.clone(),
                    features: ServerFeatures::from_capabilities(session.server_capabilities()),
                });
                sessions.push((name, session));
            }
            Err(err) => failures.push((name, err)),
        }
    }
    let catalog = materialize(
        &listings,
        &MaterializeOptions {
            style: naming_style(naming),
            profile: provider_profile(provider),
            ..MaterializeOptions::default()
        },
    );
    Connected {
        sessions,
        failures,
        catalog,
    }
}

fn naming_style(naming: NamingArg) -> NamingStyle {
    match naming {
        NamingArg::Claw => NamingStyle::Claw,
        NamingArg::OpenClaw => NamingStyle::OpenClaw,
    }
}

fn provider_profile(provider: ProviderArg) -> ProviderProfile {
    match provider {
        ProviderArg::Generic => ProviderProfile::Generic,
        ProviderArg::Anthropic => ProviderProfile::Anthropic,
        ProviderArg::OpenAiStrict => ProviderProfile::OpenAiStrict,
        ProviderArg::Gemini => ProviderProfile::Gemini,
    }
}

/// `tools`: the catalog of the catalog crate's session runtime; with
/// `--json` exactly the tool list a host sends.
pub(crate) fn tools(context: &Context, args: &ToolsArgs) -> anyhow::Result<Outcome> {
    let config = load(&context.load_options());
    // Only approved servers start; the others are listed in the diagnostics.
    let servers = ServerSet::from_loaded(&config);
    let connector = Arc::new(McpConnector::new(session::connect_options(context)));
    let options = RuntimeOptions {
        materialize: MaterializeOptions {
            style: naming_style(args.naming),
            profile: provider_profile(args.provider),
            ..MaterializeOptions::default()
        },
        ..RuntimeOptions::default()
    };
    let connecting = session::Connecting::new()?;
    let session_runtime = connecting.open().runtime(SessionRuntime::for_servers(
        "mcp-cli",
        servers,
        connector,
        Arc::new(SystemClock),
        options,
    ));
    let catalog = connecting.run(async {
        let catalog = session_runtime.catalog().await;
        session_runtime.shutdown().await;
        catalog
    })??;
    report_diagnostics(&catalog);
    if context.json {
        output::print_json(&catalog.tools())?;
    } else if catalog.tools().is_empty() {
        outln!("no tools");
    } else {
        for (index, tool) in catalog.tools().iter().enumerate() {
            if index > 0 {
                outln!("");
            }
            print_tool(tool);
        }
    }
    Ok(if catalog.has_errors() {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}

/// Prints the catalog's errors and warnings on stderr.
fn report_diagnostics(catalog: &Catalog) {
    for diagnostic in catalog.diagnostics() {
        let level = match diagnostic.level {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info => continue,
        };
        // Most messages already name the server; do not name it twice.
        if diagnostic
            .message
            .contains(&format!("\"{}\"", diagnostic.server))
        {
            errln!("{level}: {}", shown(&diagnostic.message));
        } else {
            errln!(
                "{level}: server `{}`: {}",
                shown(&diagnostic.server),
                shown(&diagnostic.message)
            );
        }
    }
}

fn print_tool(tool: &CatalogTool) {
    let origin = tool.origin();
    let raw = match &origin.target {
        ToolTarget::Tool { name } => name.clone(),
        ToolTarget::Utility { utility } => utility.raw_name().to_owned(),
        #[allow(unreachable_patterns)]
        _ => String::new(),
    };
    outln!(
        "{}  ({} / {})",
        shown(tool.name()),
        shown(&origin.server),
        shown(&raw)
    );
    let description = shown_lines(tool.description());
    for line in description.lines().filter(|line| !line.trim().is_empty()) {
        outln!("    {}", line.trim_end());
    }
    for parameter in parameters(tool.original_schema()) {
        outln!("    - {}", shown(&parameter));
    }
}

/// `name: type (required) — description` for each top-level property.
fn parameters(schema: &Value) -> Vec<String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties
        .iter()
        .map(|(name, property)| {
            let kind = match property.get("type") {
                Some(Value::String(kind)) => kind.clone(),
                Some(Value::Array(kinds)) => kinds
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("|"),
                _ => "any".to_owned(),
            };
            let mut text = format!("{name}: {kind}");
            if required.contains(&name.as_str()) {
                text.push_str(" (required)");
            }
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                text.push_str(" — ");
                text.push_str(first_line(description));
            }
            text
        })
        .collect()
}

/// `call TOOL`: validate, call, print the converted (and raw) result.
pub(crate) fn call(context: &Context, args: &CallArgs) -> anyhow::Result<Outcome> {
    let timeout = args
        .timeout
        .map(|seconds| session::seconds(seconds, "--timeout"))
        .transpose()?;
    let given = given_arguments(args)?;
    let connecting = session::Connecting::new()?;
    let open = connecting.open();
    connecting.run(async {
        let connected = connect_all(context, args.naming, ProviderArg::Generic, open).await;
        let outcome = call_in(context, args, &connected, given, timeout).await;
        connected.close().await;
        outcome
    })?
}

async fn call_in(
    context: &Context,
    args: &CallArgs,
    connected: &Connected,
    given: Given,
    timeout: Option<Duration>,
) -> anyhow::Result<Outcome> {
    let Some(tool) = connected.catalog.get(&args.tool) else {
        connected.report_problems();
        return Err(usage(unknown_tool(&connected.catalog, &args.tool)));
    };
    let server = &tool.origin().server;
    let arguments = given.resolve(tool.original_schema())?;
    let arguments = tool
        .prepare_arguments(arguments)
        .map_err(|err| usage(err.to_string()))?;
    let session = connected
        .session(server)
        .ok_or_else(|| anyhow::anyhow!("server `{server}` is not connected"))?;
    let progress = ProgressLine::start(&args.tool, context.json);
    let mut options = CallOptions::with_progress({
        let progress = Arc::clone(&progress);
        move |update| ProgressLine::update(&progress, &update)
    });
    options.timeout = timeout;
    let (method, params) = match &tool.origin().target {
        ToolTarget::Tool { name } => (
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        ),
        ToolTarget::Utility { utility } => utility_request(*utility, arguments),
        #[allow(unreachable_patterns)]
        _ => anyhow::bail!("tool `{}` has a target this build cannot call", args.tool),
    };
    let ticker = tokio::spawn({
        let progress = Arc::clone(&progress);
        async move {
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                ProgressLine::redraw(&progress);
            }
        }
    });
    let answer = session.request_with(method, Some(params), &options).await;
    ticker.abort();
    ProgressLine::clear(&progress);
    let raw = answer?;
    let result: CallToolResult = if method == "tools/call" {
        serde_json::from_value(raw.clone())
            .map_err(|err| anyhow::anyhow!("server `{server}`: invalid tools/call result: {err}"))?
    } else {
        // A utility answers with the server's own listing or contents.
        CallToolResult {
            content: vec![json!({
                "type": "text",
                "text": serde_json::to_string_pretty(&raw)?,
            })],
            structured_content: None,
            is_error: false,
        }
    };
    let converted = convert_result(&result, MAX_RESULT_BYTES);
    if context.json {
        let mut document = json!({
            "tool": args.tool,
            "server": server,
            "result": converted,
        });
        if args.raw {
            document["raw"] = raw;
        }
        output::print_json(&document)?;
    } else {
        print_blocks(&converted.content);
        if converted.truncated {
            errln!("warning: the result was cut at {MAX_RESULT_BYTES} bytes");
        }
        if args.raw {
            outln!("--- raw result");
            outln!("{}", serde_json::to_string_pretty(&raw)?);
        }
    }
    if converted.is_error() {
        errln!("error: tool `{}` reported an error", shown(&args.tool));
        return Ok(Outcome::Failed);
    }
    Ok(Outcome::Ok)
}

/// The method and params a utility tool stands for.
fn utility_request(utility: UtilityTool, arguments: Value) -> (&'static str, Value) {
    let cursor = |arguments: &Value| match arguments.get("cursor") {
        Some(cursor) => json!({ "cursor": cursor }),
        None => json!({}),
    };
    match utility {
        UtilityTool::ResourcesList => ("resources/list", cursor(&arguments)),
        UtilityTool::ResourcesRead => ("resources/read", json!({ "uri": arguments["uri"] })),
        UtilityTool::PromptsList => ("prompts/list", cursor(&arguments)),
        UtilityTool::PromptsGet => {
            let pairs: Map<String, Value> = arguments["arguments"]
                .as_array()
                .map(|pairs| {
                    pairs
                        .iter()
                        .filter_map(|pair| {
                            Some((pair["name"].as_str()?.to_owned(), pair["value"].clone()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            (
                "prompts/get",
                json!({ "name": arguments["name"], "arguments": pairs }),
            )
        }
        #[allow(unreachable_patterns)]
        _ => ("ping", json!({})),
    }
}

fn print_blocks(blocks: &[ModelBlock]) {
    if blocks.is_empty() {
        outln!("(no content)");
    }
    for block in blocks {
        match block {
            ModelBlock::Text { text } => outln!("{}", shown_lines(text.trim_end_matches('\n'))),
            ModelBlock::Image { data, mime_type } => {
                outln!(
                    "[image {}, {} bytes of base64]",
                    shown(mime_type),
                    data.len()
                );
            }
            #[allow(unreachable_patterns)]
            other => outln!("{}", serde_json::to_string(other).unwrap_or_default()),
        }
    }
}

fn unknown_tool(catalog: &Catalog, name: &str) -> String {
    let lowered = name.to_lowercase();
    let tail = lowered.rsplit("__").next().unwrap_or(&lowered).to_owned();
    let close: Vec<&str> = catalog
        .tools()
        .iter()
        .map(CatalogTool::name)
        .filter(|candidate| {
            let candidate = candidate.to_lowercase();
            candidate.contains(&lowered) || candidate.ends_with(&format!("__{tail}"))
        })
        .take(5)
        .collect();
    if catalog.tools().is_empty() {
        format!("no tool named `{name}`: the catalog is empty")
    } else if close.is_empty() {
        format!("no tool named `{name}` in the catalog (see `mcp-cli tools`)")
    } else {
        format!(
            "no tool named `{name}` in the catalog; did you mean {}?",
            close.join(", ")
        )
    }
}

/// The arguments as given on the command line, before the schema is known.
enum Given {
    Object(Value),
    Pairs(Vec<(String, PairValue)>),
}

enum PairValue {
    /// `K=V`: a string, unless the schema asks for another type.
    Text(String),
    /// `K:=JSON`.
    Json(Value),
}

fn given_arguments(args: &CallArgs) -> anyhow::Result<Given> {
    if let Some(text) = &args.args {
        let value: Value = serde_json::from_str(text)
            .map_err(|err| usage(format!("--args is not valid JSON: {err}")))?;
        if !value.is_object() {
            return Err(usage("--args must be a JSON object"));
        }
        return Ok(Given::Object(value));
    }
    let mut pairs = Vec::new();
    for pair in &args.arg {
        if let Some((key, raw)) = pair.split_once(":=").filter(|(key, _)| !key.contains('=')) {
            let value = serde_json::from_str(raw).map_err(|err| {
                usage(format!(
                    "--arg {key}:=…: the value is not valid JSON: {err}"
                ))
            })?;
            pairs.push((checked_key(key)?, PairValue::Json(value)));
        } else if let Some((key, text)) = pair.split_once('=') {
            pairs.push((checked_key(key)?, PairValue::Text(text.to_owned())));
        } else {
            return Err(usage(format!(
                "--arg `{pair}`: expected KEY=VALUE or KEY:=JSON"
            )));
        }
    }
    Ok(Given::Pairs(pairs))
}

fn checked_key(key: &str) -> anyhow::Result<String> {
    if key.is_empty() {
        Err(usage("--arg with an empty key"))
    } else {
        Ok(key.to_owned())
    }
}

impl Given {
    /// The argument object; a `K=V` value becomes a number, boolean, array
    /// or object when the tool's schema gives the property that type and
    /// the text parses as one.
    fn resolve(self, schema: &Value) -> anyhow::Result<Value> {
        let pairs = match self {
            Given::Object(value) => return Ok(value),
            Given::Pairs(pairs) => pairs,
        };
        let mut object = Map::new();
        for (key, value) in pairs {
            let value = match value {
                PairValue::Json(value) => value,
                PairValue::Text(text) => {
                    let wants_string = match schema
                        .pointer(&format!("/properties/{}/type", pointer_token(&key)))
                    {
                        Some(Value::String(kind)) => kind == "string",
                        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "string"),
                        _ => true,
                    };
                    match serde_json::from_str::<Value>(&text) {
                        Ok(parsed) if !wants_string && !parsed.is_string() => parsed,
                        _ => Value::String(text),
                    }
                }
            };
            if object.insert(key.clone(), value).is_some() {
                return Err(usage(format!("--arg {key} is given more than once")));
            }
        }
        Ok(Value::Object(object))
    }
}

fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// Shows that a call is running: a spinner with the elapsed time and the
/// latest progress on a terminal, one line per progress update otherwise.
struct ProgressLine {
    tool: String,
    started: Instant,
    live: bool,
    quiet: bool,
    latest: Option<String>,
    frame: usize,
    drawn: bool,
}

impl ProgressLine {
    fn start(tool: &str, json: bool) -> Arc<Mutex<ProgressLine>> {
        Arc::new(Mutex::new(ProgressLine {
            tool: tool.to_owned(),
            started: Instant::now(),
            live: std::io::stderr().is_terminal(),
            quiet: json && !std::io::stderr().is_terminal(),
            latest: None,
            frame: 0,
            drawn: false,
        }))
    }

    fn update(line: &Mutex<ProgressLine>, update: &Progress) {
        let Ok(mut line) = line.lock() else { return };
        let mut text = match update.total {
            Some(total) => format!("{}/{}", update.progress, total),
            None => format!("{}", update.progress),
        };
        if let Some(message) = &update.message {
            text.push_str(": ");
            text.push_str(first_line(message));
        }
        if line.live {
            line.latest = Some(text);
            line.draw();
        } else if !line.quiet {
            errln!("progress {}", shown(&text));
        }
    }

    fn redraw(line: &Mutex<ProgressLine>) {
        let Ok(mut line) = line.lock() else { return };
        // A fast call finishes without ever showing a spinner.
        if line.live && line.started.elapsed() > Duration::from_millis(300) {
            line.frame += 1;
            line.draw();
        }
    }

    fn draw(&mut self) {
        const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
        let mut text = format!(
            "\r\x1b[2K{} calling {} ({:.1} s)",
            SPINNER[self.frame % SPINNER.len()],
            shown(&self.tool),
            self.started.elapsed().as_secs_f64()
        );
        if let Some(latest) = &self.latest {
            text.push_str("  ");
            text.push_str(&shown(latest));
        }
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(text.as_bytes());
        let _ = stderr.flush();
        self.drawn = true;
    }

    fn clear(line: &Mutex<ProgressLine>) {
        let Ok(line) = line.lock() else { return };
        if line.drawn {
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(b"\r\x1b[2K");
            let _ = stderr.flush();
        }
    }
}
