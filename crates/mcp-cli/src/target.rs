//! Which servers a connecting verb connects: the configured ones (only
//! the approved ones start), narrowed by `--server` or a verb's server
//! argument, or one server described on the command line (`--url URL` or
//! `-- CMD ARGS…`), which needs no config file and no approval, since the
//! person running the command named it. Either way the verb gets a
//! [`LoadedConfig`], so every verb lays out its servers the same way.

use std::path::Path;

use mcp_config::{
    Approval, ApprovalBasis, EntryOutcome, Level, LoadedConfig, ParseEnv, Scope, ScopedServer,
    TransportKind, load, parse_file,
};
use serde_json::json;

use crate::cli::{RemoteTransportArg, TargetArgs};
use crate::context::Context;
use crate::entry_args::adhoc_entry;
use crate::output::usage;
use crate::read::unknown_server;

/// Where an ad-hoc server's entry is said to come from.
const COMMAND_LINE: &str = "<command line>";

/// The servers `target` (and a verb's own server argument, `server`)
/// select, with the loaded configuration's diagnostics.
pub(crate) fn select(
    context: &Context,
    target: &TargetArgs,
    server: Option<&str>,
) -> anyhow::Result<LoadedConfig> {
    if target.url.is_some() || !target.command.is_empty() {
        if let Some(server) = server {
            return Err(usage(format!(
                "server `{server}` is not read from config when --url or a command after `--` is given"
            )));
        }
        return adhoc(context, target);
    }
    let mut config = load(&context.load_options());
    let mut wanted: Vec<&str> = target.servers.iter().map(String::as_str).collect();
    wanted.extend(server);
    if wanted.is_empty() {
        return Ok(config);
    }
    let unknown: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|name| !config.servers.iter().any(|s| s.config.name == *name))
        .collect();
    if let Some(first) = unknown.first() {
        return Err(usage(unknown_server(&config, first)));
    }
    config
        .servers
        .retain(|s| wanted.contains(&s.config.name.as_str()));
    Ok(config)
}

/// Whether the selection is one server the person named (by `--server`, a
/// verb's server argument or an ad-hoc description), so a bare tool name
/// means that server's tool.
pub(crate) fn single(target: &TargetArgs, server: Option<&str>, config: &LoadedConfig) -> bool {
    let named = target.url.is_some()
        || !target.command.is_empty()
        || !target.servers.is_empty()
        || server.is_some();
    named && config.servers.len() == 1
}

fn adhoc(context: &Context, target: &TargetArgs) -> anyhow::Result<LoadedConfig> {
    let remote = target.url.as_deref().map(|url| {
        let kind = match target.transport {
            None | Some(RemoteTransportArg::Http) => TransportKind::Http,
            Some(RemoteTransportArg::Sse) => TransportKind::Sse,
            Some(RemoteTransportArg::Ws) => TransportKind::Ws,
        };
        (kind, url)
    });
    let entry = adhoc_entry(remote, &target.headers, &target.command, &target.env)?;
    let name = target.name.as_str();
    let text = json!({ "mcpServers": { name: entry } }).to_string();
    // The loader's own entry parser: the same checks, env safety and
    // expansion as a configured server gets.
    let parsed = parse_file(
        &text,
        Path::new(COMMAND_LINE),
        Scope::Local,
        ParseEnv::new(&context.env).with_home(&context.home),
    );
    let errors: Vec<&str> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.level == Level::Error)
        .map(|d| d.message.as_str())
        .collect();
    if !errors.is_empty() {
        return Err(usage(errors.join("; ")));
    }
    let Some(parsed_entry) = parsed.entries.into_iter().next() else {
        return Err(usage(format!("server `{name}`: not a usable server")));
    };
    let EntryOutcome::Server(config) = parsed_entry.outcome else {
        return Err(usage(format!("server `{name}`: not a usable server")));
    };
    // The policy applies to a server described on the command line as to
    // a configured one.
    let policy = load(&context.load_options()).policy;
    if let Some(block) = policy.check(&config, Scope::Local, Some(&parsed_entry.raw)) {
        anyhow::bail!("server `{name}` is blocked by policy: {block}");
    }
    // No directory, so nothing is read: the ad-hoc server is the whole
    // configuration.
    let mut loaded = load(&mcp_config::LoadOptions::default().with_env(context.env.clone()));
    loaded.servers = vec![ScopedServer {
        config,
        scope: Scope::Local,
        source: COMMAND_LINE.into(),
        plugin: None,
        approval: Approval::Approved,
        approval_basis: ApprovalBasis::NotNeeded,
    }];
    loaded.raw_entries = [(name.to_owned(), parsed_entry.raw)].into();
    loaded.diagnostics = parsed.diagnostics;
    Ok(loaded)
}
