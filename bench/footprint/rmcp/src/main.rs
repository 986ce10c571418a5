//! A stdio-only host over rmcp: starts the server given as argv, lists its
//! tools and prints their names (the same job as `footprint-ours`).

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, args)) = argv.split_first() else {
        eprintln!("usage: footprint-rmcp <server command> [args…]");
        return std::process::ExitCode::from(2);
    };
    let mut child = tokio::process::Command::new(command);
    child.args(args);
    let tools = async {
        let transport = TokioChildProcess::new(child).map_err(|e| e.to_string())?;
        let client = ().serve(transport).await.map_err(|e| e.to_string())?;
        client.list_all_tools().await.map_err(|e| e.to_string())
    };
    match tools.await {
        Ok(tools) => {
            for tool in tools {
                println!("{}", tool.name);
            }
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            std::process::ExitCode::FAILURE
        }
    }
}
