//! `serve`: every approved server (or the ad-hoc one given) served as one
//! MCP server over standard input and output, through `mcp-gateway`. The
//! servers start lazily, on the first request that needs the catalog;
//! SIGINT, SIGTERM and SIGHUP close every one of them (see
//! `connecting`), and so does the client closing standard input.

use std::sync::Arc;

use mcp_catalog::MaterializeOptions;
use mcp_gateway::{Gateway, Naming, serve_stdio};

use crate::cli::ServeArgs;
use crate::context::Context;
use crate::output::Outcome;
use crate::{connecting, target, tools};

pub(crate) fn serve(context: &Context, args: &ServeArgs) -> anyhow::Result<Outcome> {
    let config = target::select(context, &args.target, None)?;
    let connecting = connecting::Connecting::new()?;
    let style = tools::naming_style(args.naming);
    // Resources and prompts are served as themselves, not as tools.
    let materialize = MaterializeOptions::default()
        .with_style(style)
        .with_utility_tools(false);
    let runtime = tools::open_runtime_with(context, connecting.open(), config, materialize, None);
    let naming = match args.passthrough {
        true => Naming::passthrough(style),
        false => Naming::prefixed(style),
    };
    let gateway = Arc::new(Gateway::new(Arc::clone(&runtime), naming));
    let served = connecting.run(async {
        let served = serve_stdio(gateway, tokio::io::stdin(), tokio::io::stdout()).await;
        runtime.shutdown().await;
        served
    })?;
    served?;
    Ok(Outcome::Ok)
}
