//! Loads the MCP servers a user has configured, connects to every runnable
//! one and prints the materialised catalog as JSON.
//!
//! ```text
//! cargo run -p mcp-catalog --example print_catalog -- \
//!     [--project DIR] [--home DIR] [--openclaw-home DIR] \
//!     [--style openclaw|claw] [--profile generic|anthropic|openai-strict|gemini] \
//!     [--report]
//! ```
//!
//! Without `--report` it prints exactly the tool list a host would send;
//! with it, also where each tool leads, filtered counts and diagnostics.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use mcp_catalog::clock::SystemClock;
use mcp_catalog::{
    MaterializeOptions, McpConnector, NamingStyle, ProviderProfile, RuntimeOptions, SessionRuntime,
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
        style: NamingStyle::OpenClaw,
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
    let servers: Vec<_> = loaded.runnable().map(|s| s.config.clone()).collect();
    let options = RuntimeOptions {
        materialize: MaterializeOptions {
            style: args.style,
            profile: args.profile,
            ..MaterializeOptions::default()
        },
        idle_ttl: loaded.session_idle_ttl,
        ..RuntimeOptions::default()
    };
    let runtime = SessionRuntime::new(
        "print-catalog",
        servers,
        // Stdio children draw their allow-listed variables from this
        // process's environment, as a host's own would.
        Arc::new(McpConnector::new(ConnectOptions {
            env: std::env::vars().collect(),
            ..ConnectOptions::default()
        })),
        Arc::new(SystemClock),
        options,
    );
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
