//! A stdio-only host: starts the server given as argv, lists its tools and
//! prints their names (the same job as `footprint-rmcp`).

use mcp_config::{ServerConfig, StdioConfig, TransportConfig};
use mcp_transport::ConnectOptions;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, args)) = argv.split_first() else {
        eprintln!("usage: footprint-ours <server command> [args…]");
        return std::process::ExitCode::from(2);
    };
    let config = ServerConfig::new(
        "server",
        TransportConfig::Stdio(StdioConfig::new(command.clone()).with_args(args.to_vec())),
    );
    let tools = match mcp_transport::connect(&config, &ConnectOptions::default()).await {
        Ok(session) => session.list_tools().await,
        Err(error) => Err(error),
    };
    match tools {
        Ok(tools) => {
            for tool in tools {
                println!("{}", tool.name);
            }
            println!("(full schema validation: {})", mcp_catalog::FULL_VALIDATION);
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            std::process::ExitCode::FAILURE
        }
    }
}
