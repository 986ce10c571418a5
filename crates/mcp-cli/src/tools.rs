//! `tools` and `call`: the materialised catalog and one call through it.
//!
//! Both ask the catalog crate's session runtime, which connects every
//! runnable server concurrently, lists, names, filters and normalises;
//! `call` then calls through the same runtime, so the model output it
//! prints is exactly what a host's model is given. This module only
//! parses the arguments and lays the answer out.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_catalog::{
    Catalog, CatalogErrorKind, CatalogTool, MaterializeOptions, McpConnector, ModelBlock,
    NamingStyle, ProviderProfile, RuntimeOptions, ServerSet, SessionRuntime, ToolTarget,
};
use mcp_config::LoadedConfig;
use mcp_transport::Progress;
use mcp_transport::ProgressCallback;
use serde_json::{Map, Value, json};

use crate::cli::{CallArgs, NamingArg, ProviderArg, ToolsArgs};
use crate::context::Context;
use crate::diagnostics;
use crate::output::{self, Frame, Outcome, Stream, errln, outln, shown, shown_lines, usage};
use crate::{connecting, session, target, wait};

/// Converted results larger than this are cut with a note.
const MAX_RESULT_BYTES: usize = mcp_catalog::results::DEFAULT_MAX_RESULT_BYTES;

/// A runtime over the approved servers of `config`, named and normalised
/// as asked, registered so a signal closes it. With `tool_call_timeout`,
/// every server's tool calls get that timeout.
pub(crate) fn open_runtime(
    context: &Context,
    open: &connecting::Open,
    config: LoadedConfig,
    naming: NamingArg,
    provider: ProviderArg,
    tool_call_timeout: Option<Duration>,
) -> Arc<SessionRuntime> {
    let materialize = MaterializeOptions::default()
        .with_style(naming_style(naming))
        .with_profile(provider_profile(provider));
    open_runtime_with(context, open, config, materialize, tool_call_timeout, None)
}

/// [`open_runtime`] materialising with `materialize`; with `handler`,
/// what servers ask goes there instead of to the person at the terminal.
pub(crate) fn open_runtime_with(
    context: &Context,
    open: &connecting::Open,
    mut config: LoadedConfig,
    materialize: MaterializeOptions,
    tool_call_timeout: Option<Duration>,
    handler: Option<Arc<dyn mcp_transport::ClientHandler>>,
) -> Arc<SessionRuntime> {
    if let Some(timeout) = tool_call_timeout {
        for server in &mut config.servers {
            server.config.timeouts.tool_call = timeout;
        }
    }
    // Only approved servers start; the others are listed in the diagnostics.
    let servers = ServerSet::from_loaded_with_hint(&config, &crate::approve::approve_step);
    let mut connect =
        session::connect_options(context, config.servers.iter().map(|server| &server.config));
    if let Some(handler) = handler {
        connect.session.handler = Some(handler);
    }
    let connector = Arc::new(McpConnector::new(connect));
    let options = RuntimeOptions::default()
        .with_materialize(materialize)
        .with_max_result_bytes(MAX_RESULT_BYTES);
    open.runtime(
        SessionRuntime::builder("mcp-cli", servers, connector)
            .with_options(options)
            .build(),
    )
}

pub(crate) fn naming_style(naming: NamingArg) -> NamingStyle {
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
    let config = target::select(context, &args.target, args.server.as_deref())?;
    let connecting = connecting::Connecting::new()?;
    let session_runtime = open_runtime(
        context,
        connecting.open(),
        config,
        args.naming,
        args.provider,
        None,
    );
    let catalog = connecting.run(async {
        let catalog = wait::showing(&session_runtime, session_runtime.catalog()).await;
        session_runtime.shutdown().await;
        catalog
    })??;
    diagnostics::report(&catalog, context.verbose);
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

fn print_tool(tool: &CatalogTool) {
    let origin = tool.origin();
    let raw = origin.target.raw_name();
    outln!(
        "{}  ({} / {})",
        shown(tool.name()),
        shown(&origin.server),
        shown(raw)
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

/// `call TOOL`: resolve the arguments, call through the runtime, print
/// the model output (and with `--raw` the server's result).
pub(crate) fn call(context: &Context, args: &CallArgs) -> anyhow::Result<Outcome> {
    let timeout = args
        .timeout
        .map(|seconds| session::seconds(seconds, "--timeout"))
        .transpose()?;
    let given = given_arguments(args)?;
    let config = target::select(context, &args.target, None)?;
    let single = target::single(&args.target, None, &config).then(|| {
        config
            .servers
            .first()
            .map(|server| server.config.name.clone())
            .unwrap_or_default()
    });
    let servers: Vec<String> = config
        .servers
        .iter()
        .map(|server| server.config.name.clone())
        .collect();
    let connecting = connecting::Connecting::new()?;
    let session_runtime = open_runtime(
        context,
        connecting.open(),
        config,
        args.naming,
        ProviderArg::Generic,
        timeout,
    );
    connecting.run(async {
        let outcome = call_in(
            context,
            args,
            &session_runtime,
            given,
            Owner {
                single: single.as_deref(),
                servers: &servers,
            },
        )
        .await;
        session_runtime.shutdown().await;
        outcome
    })?
}

/// What `call` knows about which server owns its tool before connecting.
struct Owner<'a> {
    /// The one server the person named, whose raw tool names are accepted
    /// too.
    single: Option<&'a str>,
    /// Every selected server.
    servers: &'a [String],
}

async fn call_in(
    context: &Context,
    args: &CallArgs,
    session_runtime: &SessionRuntime,
    given: Given,
    owner: Owner<'_>,
) -> anyhow::Result<Outcome> {
    // Only the servers whose tool prefix begins the name are connected:
    // one call never waits on the others.
    let mut owners = session_runtime.owners_of(&args.tool);
    if owners.is_empty() {
        match owner.single {
            Some(single) => owners.push(single.to_owned()),
            None => return Err(usage(no_owner(&args.tool, args.naming, owner.servers))),
        }
    }
    let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
    let catalog = wait::showing(session_runtime, session_runtime.catalog_of(&owners)).await?;
    let found = catalog.get(&args.tool).or_else(|| {
        // A bare tool name of the one server named on the command line.
        owner.single.and_then(|single| {
            catalog.tools().iter().find(|tool| {
                tool.origin().server == single
                    && matches!(&tool.origin().target, ToolTarget::Tool { name } if *name == args.tool)
            })
        })
    });
    let Some(tool) = found else {
        diagnostics::report_notes(&catalog, context.verbose);
        return Err(usage(unknown_tool(&catalog, &args.tool)));
    };
    let server = &tool.origin().server;
    let arguments = given.resolve(tool.original_schema())?;
    let progress = ProgressLine::start(&args.tool, context.json);
    let callback: ProgressCallback = {
        let progress = Arc::clone(&progress);
        Arc::new(move |update| ProgressLine::update(&progress, &update))
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
    let answer = if args.raw {
        session_runtime
            .call_tool_raw(tool, arguments, Some(callback))
            .await
            .map(|output| (output.model, Some(output.raw)))
    } else {
        session_runtime
            .call_tool_with_progress(tool, arguments, Some(callback))
            .await
            .map(|model| (model, None))
    };
    ticker.abort();
    ProgressLine::clear(&progress);
    let (converted, raw) = answer.map_err(|err| match err.kind() {
        CatalogErrorKind::InvalidArguments { .. } => usage(err.to_string()),
        _ => err.into(),
    })?;
    diagnostics::report_call(&converted);
    if context.json {
        let mut document = json!({
            "tool": args.tool,
            "server": server,
            "result": converted,
        });
        if let Some(raw) = raw {
            document["raw"] = raw;
        }
        output::print_json(&document)?;
    } else {
        print_blocks(&converted.content);
        if converted.truncated {
            errln!("warning: the result was cut at {MAX_RESULT_BYTES} bytes");
        }
        if let Some(raw) = &raw {
            outln!("--- raw result");
            outln!("{}", output::json_text(raw)?);
        }
    }
    if converted.is_error() {
        errln!("error: tool `{}` reported an error", shown(&args.tool));
        return Ok(Outcome::Failed);
    }
    Ok(Outcome::Ok)
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
            // A block kind added later: shown by its JSON, escaped.
            other => outln!(
                "{}",
                shown_lines(&serde_json::to_string(other).unwrap_or_default())
            ),
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

/// Why a name no server's prefix begins is in no catalog, said before
/// anything is connected.
fn no_owner(name: &str, naming: NamingArg, servers: &[String]) -> String {
    let form = match naming {
        NamingArg::Claw => "mcp__SERVER__TOOL",
        NamingArg::OpenClaw => "SERVER__TOOL",
    };
    if servers.is_empty() {
        return format!("no tool named `{name}`: no servers are configured");
    }
    format!(
        "no tool named `{name}`: catalog names are {form} for one of the servers {} (see `mcp-cli tools`, or give `--server NAME` to call a tool by its own name)",
        servers.join(", ")
    )
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
            live: Stream::Stderr.is_terminal(),
            quiet: json && !Stream::Stderr.is_terminal(),
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
            if !crate::host::question_shown() {
                line.draw();
            }
        } else if !line.quiet {
            errln!("progress {}", shown(&text));
        }
    }

    fn redraw(line: &Mutex<ProgressLine>) {
        let Ok(mut line) = line.lock() else { return };
        // A fast call finishes without ever showing a spinner.
        if line.live
            && line.started.elapsed() > Duration::from_millis(300)
            && !crate::host::question_shown()
        {
            line.frame += 1;
            line.draw();
        }
    }

    fn draw(&mut self) {
        const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
        let mut text = format!(
            "{} calling {} ({:.1} s)",
            SPINNER[self.frame % SPINNER.len()],
            shown(&self.tool),
            self.started.elapsed().as_secs_f64()
        );
        if let Some(latest) = &self.latest {
            text.push_str("  ");
            text.push_str(&shown(latest));
        }
        Frame::default()
            .clear_line()
            .text(&text)
            .draw(Stream::Stderr);
        self.drawn = true;
    }

    fn clear(line: &Mutex<ProgressLine>) {
        let Ok(line) = line.lock() else { return };
        if line.drawn {
            Frame::default().clear_line().draw(Stream::Stderr);
        }
    }
}
