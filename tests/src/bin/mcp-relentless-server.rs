//! `mcp-relentless-server`: the script of
//! `mcp_integration_tests::relentless` over stdio: a server that keeps a
//! request from ending (progress that never advances, a task whose status
//! message changes on every poll, `input_required` for ever).
//!
//! `--pattern stalled-progress --revision 2025-06-18`,
//! `--pattern input-loop --at tools/call --revision 2024-11-05`; with
//! `--log FILE` each request's method is appended to FILE as it arrives.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use mcp_integration_tests::relentless::{Pattern, Relentless, Reply, progress};
use serde_json::Value;

/// A stdio MCP server that never lets a request end on its own.
#[derive(Debug, Parser)]
#[command(name = "mcp-relentless-server", version, about)]
struct Cli {
    /// stalled-progress, advancing-progress, chatty-task, input-loop,
    /// input-flood=N.
    #[arg(long)]
    pattern: Pattern,
    /// The protocol revision the server speaks.
    #[arg(long, default_value = "2025-06-18")]
    revision: String,
    /// The method the input patterns answer with `input_required`.
    #[arg(long, default_value = "tools/call")]
    at: String,
    /// Milliseconds between two progress notifications.
    #[arg(long, default_value_t = 300)]
    interval_ms: u64,
    /// Append each request's method to this file.
    #[arg(long)]
    log: Option<PathBuf>,
}

type Out = Arc<Mutex<std::io::Stdout>>;

fn write(out: &Out, message: &Value) -> bool {
    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
    writeln!(out, "{message}")
        .and_then(|()| out.flush())
        .is_ok()
}

fn record(log: Option<&PathBuf>, method: &str) {
    let Some(path) = log else { return };
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(file, "{method}");
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut server = Relentless::new(cli.pattern, &cli.revision, &cli.at);
    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    let interval = Duration::from_millis(cli.interval_ms);
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message.get("id").is_some()
            && let Some(method) = message.get("method").and_then(Value::as_str)
        {
            record(cli.log.as_ref(), method);
        }
        match server.reply(&message) {
            Reply::Send(answer) => {
                if !write(&out, &answer) {
                    break;
                }
            }
            Reply::Progress { token, advancing } => {
                let out = Arc::clone(&out);
                std::thread::spawn(move || {
                    for step in 1.. {
                        std::thread::sleep(interval);
                        if !write(&out, &progress(&token, step, advancing)) {
                            return;
                        }
                    }
                });
            }
            Reply::Nothing => {}
        }
    }
    ExitCode::SUCCESS
}
