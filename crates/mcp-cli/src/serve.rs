//! `serve`: every approved server (or the ad-hoc one given) served as one
//! MCP server over standard input and output, through `mcp-gateway`. The
//! servers start lazily, on the first request that needs the catalog;
//! SIGINT, SIGTERM and SIGHUP close every one of them (see
//! `connecting`), and so does the client closing standard input.

use std::sync::Arc;

use mcp_catalog::{MaterializeOptions, ToolBudget};
use mcp_gateway::{
    Gateway, HttpOptions, Naming, Relay, bearer_token, is_loopback, serve_http, serve_stdio,
};

use mcp_catalog::{ServerSet, SessionRuntime};
use mcp_config::Level;
use mcp_config::policy::{MANAGED_MCP_FILE, MANAGED_SETTINGS_FILE, REQUIREMENTS_FILE};
use mcp_gateway::{ConfigWatch, Reload, watch_config};

use crate::cli::ServeArgs;
use crate::context::Context;
use crate::output::{Outcome, errln, protocol_output, shown};
use crate::{connecting, target, tools};

pub(crate) fn serve(context: &Context, args: &ServeArgs) -> anyhow::Result<Outcome> {
    let config = target::select(context, &args.target, None)?;
    let mut files = config.files.clone();
    // The managed files too when they are not there yet: a policy an
    // administrator deploys while the gateway runs applies at once.
    if !files.is_empty() {
        for file in [MANAGED_MCP_FILE, MANAGED_SETTINGS_FILE, REQUIREMENTS_FILE] {
            let path = context.managed_dir.join(file);
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    let connecting = connecting::Connecting::new()?;
    let style = tools::naming_style(args.naming);
    // Resources and prompts are served as themselves, not as tools.
    let budget = args
        .tool_budget
        .map(|tokens| ToolBudget::new(tokens).with_pinned(args.pin.iter().cloned()));
    let materialize = MaterializeOptions::default()
        .with_style(style)
        .with_utility_tools(false)
        .with_budget(budget);
    // What a server asks goes to the client whose call it belongs to.
    let relay = Relay::new();
    let runtime = tools::open_runtime_with(
        context,
        connecting.open(),
        config,
        materialize,
        None,
        Some(relay.handler()),
    );
    let naming = match args.passthrough {
        true => Naming::passthrough(style),
        false => Naming::prefixed(style),
    };
    let gateway = Arc::new(Gateway::new(Arc::clone(&runtime), naming).with_relay(relay));
    // Held for as long as the gateway serves.
    let _watch = connecting.run(async { watch(context, args, &runtime, &files) })??;
    let Some(listen) = args.listen else {
        let served = connecting.run(async {
            let served = serve_stdio(gateway, tokio::io::stdin(), protocol_output()).await;
            runtime.shutdown().await;
            served
        })?;
        served?;
        return Ok(Outcome::Ok);
    };
    let mut options = HttpOptions::default();
    for origin in &args.allow_origin {
        options = options.with_allowed_origin(origin.clone());
    }
    if !is_loopback(&listen) {
        if !args.allow_remote {
            anyhow::bail!(
                "{listen} is not a loopback address: add --allow-remote to serve beyond this machine (every request must then carry the bearer token)"
            );
        }
        let path = context.home.join(".mcp-cli").join("gateway-token");
        options = options
            .with_bearer_token(bearer_token(&path)?)
            .with_allowed_host(listen.ip().to_string());
        errln!(
            "serving beyond loopback; the bearer token is in {}",
            path.display()
        );
    }
    connecting.run(async {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        errln!("serving MCP at http://{}/mcp", listener.local_addr()?);
        serve_http(gateway, listener, options, std::future::pending()).await;
        runtime.shutdown().await;
        Ok::<(), anyhow::Error>(())
    })??;
    Ok(Outcome::Ok)
}

/// Watches the configuration's files and applies each change (see
/// `mcp_gateway::watch_config`); an edit with errors keeps the last good
/// configuration and is reported, except a managed policy that no longer
/// reads: that withdraws every server (fail closed). Nothing to watch for
/// an ad-hoc server.
fn watch(
    context: &Context,
    args: &ServeArgs,
    runtime: &Arc<SessionRuntime>,
    files: &[std::path::PathBuf],
) -> anyhow::Result<Option<ConfigWatch>> {
    if files.is_empty() {
        return Ok(None);
    }
    let context = context.clone();
    let target = args.target.clone();
    let load = move || {
        let config =
            target::select(&context, &target, None).map_err(|error| vec![error.to_string()])?;
        let errors: Vec<String> = config
            .diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.level == Level::Error)
            .map(mcp_config::diagnostic_line)
            .collect();
        // A configuration with errors keeps the last good one, except when
        // the managed policy is what broke: then every server stops.
        if !errors.is_empty() && !config.policy.is_unreadable() {
            return Err(errors);
        }
        Ok(ServerSet::from_loaded_with_hint(
            &config,
            &crate::approve::approve_step,
        ))
    };
    let report = |reload: Reload| match reload {
        Reload::Applied(applied) if applied.is_unchanged() => {}
        Reload::Applied(applied) => {
            errln!(
                "configuration reloaded: {} added, {} changed, {} removed",
                applied.added.len(),
                applied.changed.len(),
                applied.removed.len()
            );
        }
        Reload::Kept(problems) => {
            errln!("the configuration has errors; the last good one stays:");
            for problem in problems {
                errln!("  {}", shown(&problem));
            }
        }
        _ => {}
    };
    Ok(Some(watch_config(
        Arc::clone(runtime),
        files,
        load,
        report,
    )?))
}
