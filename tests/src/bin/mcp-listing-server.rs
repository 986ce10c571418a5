//! `mcp-listing-server`: the listings of `mcp_integration_tests::listing`
//! over stdio, one answer per line, for the hostile listing rows.
//!
//! `--tools 'valid*150000'` lists 150,000 tools on one page;
//! `--tools 'no-name*5000/valid*10'` two pages; `--templates error=-32601`
//! answers `resources/templates/list` with method not found.

use std::io::{BufRead, Write};

use clap::Parser;
use mcp_integration_tests::listing::{Listing, Script, answer};
use serde_json::Value;

/// A stdio MCP server whose listings are scripted.
#[derive(Debug, Parser)]
#[command(name = "mcp-listing-server", version, about)]
struct Cli {
    /// `tools/list`: pages separated by `/`, each `KIND*COUNT` runs joined by `+`, or `error=CODE`.
    #[arg(long, default_value = "")]
    tools: Listing,
    /// `resources/list`, as `--tools`.
    #[arg(long, default_value = "")]
    resources: Listing,
    /// `resources/templates/list`, as `--tools`.
    #[arg(long, default_value = "")]
    templates: Listing,
    /// `prompts/list`, as `--tools`.
    #[arg(long, default_value = "")]
    prompts: Listing,
}

fn main() {
    let cli = Cli::parse();
    let script = Script {
        tools: cli.tools,
        resources: cli.resources,
        templates: cli.templates,
        prompts: cli.prompts,
    };
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(answer) = answer(&script, &request) else {
            continue;
        };
        if stdout
            .write_all(answer.as_bytes())
            .and_then(|()| stdout.write_all(b"\n"))
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}
