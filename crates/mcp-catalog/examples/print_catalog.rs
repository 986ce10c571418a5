//! Loads the MCP servers a user has configured, connects to every approved
//! one and prints the materialised catalog as JSON.
//!
//! Project servers (`.mcp.json`) start only once the user approved them:
//! the servers go through [`ServerSet::from_loaded`], and each one held
//! back (awaiting approval or denied) is reported on stderr before any
//! server starts, and again in the catalog's diagnostics.
//!
//! ```text
//! cargo run -p mcp-catalog --example print_catalog -- \
//!     [--project DIR] [--home DIR] [--openclaw-home DIR] \
//!     [--style claw|openclaw] [--profile generic|anthropic|openai-strict|gemini] \
//!     [--report]
//! ```
//!
//! Without `--report` it prints exactly the tool list a host would send;
//! with it, also where each tool leads, filtered counts and diagnostics.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use mcp_catalog::{
    MaterializeOptions, McpConnector, NamingStyle, ProviderProfile, RuntimeOptions, ServerSet,
    SessionRuntime,
};
use mcp_config::{LoadOptions, load};
use mcp_transport::ConnectOptions;

struct Args {
    load: LoadOptions,
    style: NamingStyle,
    profile: ProviderProfile,
    report: bool,
}

fn parse_args() -> Result<Args, String> {
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let mut load = LoadOptions::default();
    load.home = env.get("HOME").map(PathBuf::from);
    load.project = std::env::current_dir().ok();
    let mut args = Args {
        load: load.with_env(env),
        style: NamingStyle::default(),
        profile: ProviderProfile::Generic,
        report: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "--project" => args.load.project = Some(PathBuf::from(value("--project")?)),
            "--home" => args.load.home = Some(PathBuf::from(value("--home")?)),
            "--openclaw-home" => {
                args.load.openclaw_home = Some(PathBuf::from(value("--openclaw-home")?))
            }
            "--style" => {
                let text = value("--style")?;
                args.style = NamingStyle::parse(&text).ok_or(format!("unknown style {text:?}"))?;
            }
            "--profile" => {
                let text = value("--profile")?;
                args.profile =
                    ProviderProfile::parse(&text).ok_or(format!("unknown profile {text:?}"))?;
            }
            "--report" => args.report = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(error) => {
            eprintln!("print_catalog: {error}");
            return ExitCode::from(2);
        }
    };
    let loaded = load(&args.load);
    for diagnostic in &loaded.diagnostics {
        eprintln!("config {:?}: {}", diagnostic.level, diagnostic.message);
    }
    // The approval path: unapproved project servers never reach the
    // connector.
    let servers = ServerSet::from_loaded(&loaded);
    for pending in servers.withheld() {
        eprintln!("not started {}: {}", pending.server, pending.message);
    }
    let options = RuntimeOptions::default()
        .with_materialize(
            MaterializeOptions::default()
                .with_style(args.style)
                .with_profile(args.profile),
        )
        .with_idle_ttl(loaded.session_idle_ttl);
    // Stdio children draw their allow-listed variables from this
    // process's environment, as a host's own would.
    let connector = Arc::new(McpConnector::new(
        ConnectOptions::default().with_env(std::env::vars().collect()),
    ));
    let runtime = SessionRuntime::builder("print-catalog", servers, connector)
        .with_options(options)
        .build();
    let result = runtime.catalog().await;
    let code = match result {
        Ok(catalog) => {
            let json = if args.report {
                serde_json::to_string_pretty(&catalog.report())
            } else {
                serde_json::to_string_pretty(catalog.as_ref())
            };
            match json {
                Ok(json) => println!("{json}"),
                Err(error) => eprintln!("print_catalog: {error}"),
            }
            for diagnostic in catalog.diagnostics() {
                eprintln!(
                    "catalog {:?} {}: {}",
                    diagnostic.level, diagnostic.server, diagnostic.message
                );
            }
            if catalog.has_errors() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(error) => {
            eprintln!("print_catalog: {error}");
            ExitCode::from(1)
        }
    };
    runtime.shutdown().await;
    code
}
