//! `probe [NAME]`: connect to servers concurrently and report, per server,
//! ok or the error (with an excerpt of its stderr: the first error-looking
//! line with a little context, then the last lines), the protocol version, the
//! server's name and version, its tool, resource and prompt counts and the
//! connect time. The catalog crate's session runtime connects and counts
//! ([`SessionRuntime::probe`]); this module lays the answers out.
//!
//! On a terminal each server has a live status line that is redrawn as
//! servers answer; otherwise each server's line is printed once, in name
//! order, as soon as it and every server before it are done.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use mcp_catalog::sessions::ConnectReport;
use mcp_catalog::{CatalogError, McpConnector, ServerSet, SessionRuntime};
use mcp_config::{LoadedConfig, ScopedServer};
use serde::Serialize;

use crate::cli::ProbeArgs;
use crate::context::Context;
use crate::output::{self, Frame, Outcome, Stream, outln, shown, shown_lines};
use crate::read::{state, unknown_server};
use crate::{connecting, session};

/// What probing one server found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProbeReport {
    name: String,
    kind: &'static str,
    scope: &'static str,
    /// `ok`, `error` or `skipped`.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_info: Option<ServerInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompts: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    connect_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stderr_tail: Option<String>,
    /// Why a server was not probed (disabled, pending approval, denied).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
struct ServerInfo {
    name: String,
    version: String,
}

pub(crate) fn probe(context: &Context, args: &ProbeArgs) -> anyhow::Result<Outcome> {
    let config = crate::target::select(context, &args.target, None)?;
    let servers = chosen(&config, args.name.as_deref())?;
    if servers.is_empty() {
        if context.json {
            output::print_json(&serde_json::json!({ "servers": [] }))?;
        } else {
            outln!("no servers configured");
        }
        return Ok(Outcome::Ok);
    }
    let timeout = args
        .timeout
        .map(|seconds| session::seconds(seconds, "--timeout"))
        .transpose()?;
    let connecting = connecting::Connecting::new()?;
    let reports = connecting.run(probe_all(context, &servers, timeout, connecting.open()))?;
    let failed = reports.iter().any(|report| report.status == "error");
    if context.json {
        output::print_json(&serde_json::json!({ "servers": reports }))?;
    }
    Ok(if failed { Outcome::Failed } else { Outcome::Ok })
}

/// The servers to probe: the one named, or every server, in name order.
fn chosen<'a>(
    config: &'a LoadedConfig,
    name: Option<&str>,
) -> anyhow::Result<Vec<&'a ScopedServer>> {
    match name {
        Some(name) => match config.server(name) {
            Some(server) => Ok(vec![server]),
            None => anyhow::bail!("{}", unknown_server(config, name)),
        },
        None => Ok(config.servers.iter().collect()),
    }
}

async fn probe_all(
    context: &Context,
    servers: &[&ScopedServer],
    timeout: Option<Duration>,
    open: &connecting::Open,
) -> Vec<ProbeReport> {
    let probed = |server: &ScopedServer| server.is_runnable();
    let runnable = servers
        .iter()
        .filter(|server| probed(server))
        .map(|server| {
            let mut config = server.config.clone();
            if let Some(timeout) = timeout {
                config.timeouts.connect = timeout;
                config.timeouts.request = timeout;
            }
            config
        });
    let connector = Arc::new(McpConnector::new(session::connect_options(
        context,
        servers.iter().map(|server| &server.config),
    )));
    let session_runtime = open
        .runtime(SessionRuntime::builder("mcp-cli", ServerSet::all(runnable), connector).build());
    let mut display = Display::new(context, servers);
    let mut reports: Vec<Option<ProbeReport>> = vec![None; servers.len()];
    let mut pending = FuturesUnordered::new();
    for (index, server) in servers.iter().enumerate() {
        if probed(server) {
            let session_runtime = &session_runtime;
            pending.push(async move {
                let found = session_runtime.probe(&server.config.name).await;
                (index, probe_report(server, found))
            });
        } else {
            reports[index] = Some(skipped(server));
            display.done(index, reports[index].as_ref());
        }
    }
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while !pending.is_empty() {
        tokio::select! {
            Some((index, report)) = pending.next() => {
                reports[index] = Some(report);
                display.done(index, reports[index].as_ref());
            }
            _ = tick.tick() => display.tick(),
        }
    }
    drop(pending);
    session_runtime.shutdown().await;
    display.finish(&reports);
    reports.into_iter().flatten().collect()
}

/// The report of one probed server, from what the runtime found.
fn probe_report(server: &ScopedServer, found: ConnectReport) -> ProbeReport {
    let mut report = base_report(server, "ok");
    report.connect_ms = Some(millis(found.connect_time));
    if let Some(identity) = found.identity {
        report.protocol_version = Some(identity.protocol_version);
        report.server_info = Some(ServerInfo {
            name: identity.name,
            version: identity.version,
        });
    }
    if let Some(counts) = found.counts {
        report.tools = Some(counts.tools);
        report.resources = Some(counts.resources);
        report.prompts = Some(counts.prompts);
    }
    match &found.error {
        Some(error) => failed(report, error),
        None => report,
    }
}

fn base_report(server: &ScopedServer, status: &'static str) -> ProbeReport {
    ProbeReport {
        name: server.config.name.clone(),
        kind: server.config.transport.kind().as_str(),
        scope: server.scope.as_str(),
        status,
        protocol_version: None,
        server_info: None,
        tools: None,
        resources: None,
        prompts: None,
        connect_ms: None,
        error: None,
        stderr_tail: None,
        reason: None,
    }
}

fn skipped(server: &ScopedServer) -> ProbeReport {
    let mut report = base_report(server, "skipped");
    report.reason = Some(crate::approve::skip_reason(server, state(server)));
    report
}

/// An error report: the transport's own message when the transport failed
/// (the line names the server already, and the stderr tail is shown on its
/// own lines), else the runtime's.
fn failed(mut report: ProbeReport, err: &CatalogError) -> ProbeReport {
    report.status = "error";
    let Some(transport) = err.transport_error() else {
        report.error = Some(first_line(&err.to_string()));
        return report;
    };
    let tail = transport
        .stderr_tail()
        .map(str::trim_end)
        .filter(|tail| !tail.is_empty())
        .map(str::to_owned);
    let mut message = transport.to_string();
    // The tail is shown on its own lines, so the message stops before it.
    if let Some(at) = message.find("; stderr: ").filter(|_| tail.is_some()) {
        message.truncate(at);
    }
    let prefix = format!("{}: ", report.name);
    let message = message.strip_prefix(&prefix).unwrap_or(&message);
    report.error = Some(first_line(message));
    report.stderr_tail = tail;
    report
}

fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_owned()
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// How many lines of a failed server's stderr a human report shows.
const STDERR_EXCERPT_LINES: usize = 14;
/// About how many bytes of it.
const STDERR_EXCERPT_BYTES: usize = 4096;

/// One human line for a finished (or skipped) server; every field the
/// config or the server wrote is shown escaped.
fn line(report: &ProbeReport, name_width: usize) -> Vec<String> {
    let name = format!("{:name_width$}", shown(&report.name));
    let mut lines = Vec::new();
    match report.status {
        "ok" => {
            let info = report
                .server_info
                .as_ref()
                .map(|info| format!("{} {}", shown(&info.name), shown(&info.version)))
                .unwrap_or_default();
            lines.push(format!(
                "ok    {name}  {:5}  {}  {info}  tools {}, resources {}, prompts {}  {} ms",
                report.kind,
                shown(report.protocol_version.as_deref().unwrap_or("?")),
                report.tools.unwrap_or(0),
                report.resources.unwrap_or(0),
                report.prompts.unwrap_or(0),
                report.connect_ms.unwrap_or(0),
            ));
        }
        "error" => {
            lines.push(format!(
                "fail  {name}  {:5}  {}  ({} ms)",
                report.kind,
                shown(report.error.as_deref().unwrap_or("failed")),
                report.connect_ms.unwrap_or(0),
            ));
            if let Some(tail) = &report.stderr_tail {
                // Around the first error-looking line, then the last lines:
                // a server's error often sits above a page of usage text.
                let excerpt = mcp_transport::kinds::stderr_excerpt(
                    tail,
                    STDERR_EXCERPT_LINES,
                    STDERR_EXCERPT_BYTES,
                );
                for stderr_line in shown_lines(&excerpt).lines() {
                    lines.push(format!("      | {stderr_line}"));
                }
            }
        }
        _ => lines.push(format!(
            "skip  {name}  {:5}  {}",
            report.kind,
            shown(report.reason.as_deref().unwrap_or(""))
        )),
    }
    lines
}

/// The human output: live lines on a terminal, ordered plain lines otherwise.
struct Display {
    mode: Mode,
    names: Vec<(String, &'static str)>,
    name_width: usize,
    finished: BTreeMap<usize, Vec<String>>,
    /// Plain mode: how many servers have been printed.
    printed: usize,
    frame: usize,
    started: Instant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `--json`: nothing until the end.
    Quiet,
    Plain,
    Live,
}

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

impl Display {
    fn new(context: &Context, servers: &[&ScopedServer]) -> Display {
        let mode = if context.json {
            Mode::Quiet
        } else if Stream::Stdout.is_terminal()
            && std::env::var_os("TERM").is_some_and(|t| t != "dumb")
        {
            Mode::Live
        } else {
            Mode::Plain
        };
        let names: Vec<(String, &'static str)> = servers
            .iter()
            .map(|s| {
                (
                    shown(&s.config.name).into_owned(),
                    s.config.transport.kind().as_str(),
                )
            })
            .collect();
        let name_width = names
            .iter()
            .map(|(name, _)| name.chars().count())
            .max()
            .unwrap_or(0);
        let display = Display {
            mode,
            names,
            name_width,
            finished: BTreeMap::new(),
            printed: 0,
            frame: 0,
            started: Instant::now(),
        };
        if mode == Mode::Live {
            display.draw(false);
        }
        display
    }

    fn done(&mut self, index: usize, report: Option<&ProbeReport>) {
        let Some(report) = report else { return };
        self.finished.insert(index, line(report, self.name_width));
        match self.mode {
            Mode::Quiet => {}
            Mode::Plain => {
                while let Some(lines) = self.finished.get(&self.printed) {
                    for text in lines {
                        outln!("{text}");
                    }
                    self.printed += 1;
                }
            }
            Mode::Live => self.draw(true),
        }
    }

    fn tick(&mut self) {
        if self.mode == Mode::Live {
            self.frame += 1;
            self.draw(true);
        }
    }

    /// On a terminal, prints the stderr tails below the final block.
    fn finish(&mut self, _reports: &[Option<ProbeReport>]) {
        if self.mode == Mode::Live {
            self.draw(true);
            for lines in self.finished.values() {
                for extra in lines.iter().skip(1) {
                    outln!("{extra}");
                }
            }
        }
    }

    /// Draws one status line per server, over the block drawn last time.
    fn draw(&self, redraw: bool) {
        // Back to the top of the block drawn last time.
        let mut frame = Frame::default().up(if redraw { self.names.len() } else { 0 });
        for (index, (name, kind)) in self.names.iter().enumerate() {
            let line = match self.finished.get(&index) {
                Some(lines) => lines[0].clone(),
                None => format!(
                    "{}     {name:width$}  {kind:5}  connecting… {:.1} s",
                    SPINNER[self.frame % SPINNER.len()],
                    self.started.elapsed().as_secs_f64(),
                    width = self.name_width
                ),
            };
            frame = frame.clear_line().text(&line).text("\n");
        }
        frame.draw(Stream::Stdout);
    }
}
