//! `mcp-stdio-host`: a minimal host that connects one stdio server through
//! `mcp-transport`, for the process tests of the hostile transport suite.
//!
//! `mcp-stdio-host --spawn-from main|worker|thread|blocking -- SERVER [ARGS...]`
//! spawns the server from the main thread (the future `block_on` drives),
//! from a task on a runtime worker, from a short-lived thread that
//! exits right after, or from a blocking-pool thread that exits once idle
//! (keep-alive 100 ms); waits until that thread is surely gone; checks that
//! the server still answers; sends the notification `hostile/hold` (a
//! scripted server stops reading there, so the end of its stdin cannot end
//! it); prints `ready <server pid>` and then lives
//! until its stdin closes or it is killed. A test kills it (SIGKILL, no
//! cleanup runs) and checks that the server dies with it.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::Duration;

use mcp_config::StdioConfig;
use mcp_integration_tests::harness::test_env;
use mcp_transport::StdioOptions;
use mcp_transport::kinds::StdioTransport;
use mcp_transport::{ClientSession, SessionOptions, TransportError};

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "mcp-stdio-host: {message}");
    ExitCode::FAILURE
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (spawn_from, server) = match args.as_slice() {
        [flag, from, dashes, server @ ..]
            if flag == "--spawn-from" && dashes == "--" && !server.is_empty() =>
        {
            (from.clone(), server.to_vec())
        }
        _ => {
            return fail(
                "usage: mcp-stdio-host --spawn-from main|worker|thread|blocking -- SERVER [ARGS...]",
            );
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_keep_alive(Duration::from_millis(100))
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    let config = StdioConfig::new(server[0].clone()).with_args(server[1..].to_vec());
    let options = StdioOptions::default().with_base_env(test_env());
    match runtime.block_on(host(&spawn_from, config, options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

async fn host(spawn_from: &str, config: StdioConfig, options: StdioOptions) -> Result<(), String> {
    let spawn = move || StdioTransport::spawn("hosted", &config, &options);
    let transport = match spawn_from {
        // the future `block_on` drives runs on the main thread
        "main" => spawn(),
        "worker" => tokio::spawn(async move { spawn() })
            .await
            .map_err(|e| format!("the worker task failed: {e}"))?,
        "thread" => {
            let runtime = tokio::runtime::Handle::current();
            std::thread::spawn(move || {
                let _entered = runtime.enter();
                spawn()
            })
            .join()
            .map_err(|_| "the spawning thread panicked".to_owned())?
        }
        "blocking" => tokio::task::spawn_blocking(spawn)
            .await
            .map_err(|e| format!("the blocking task failed: {e}"))?,
        other => return Err(format!("unknown --spawn-from {other:?}")),
    }
    .map_err(|e| e.to_string())?;
    let pid = transport.pid().ok_or("the server has no pid")?;
    // Long enough for an idle blocking-pool thread (keep-alive 100 ms) to
    // have exited, and for a parent-death signal to have arrived.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let session =
        ClientSession::initialize(Box::new(transport), "hosted", SessionOptions::default())
            .await
            .map_err(|e: TransportError| format!("the server no longer answers: {e}"))?;
    session.ping().await.map_err(|e| e.to_string())?;
    // Scripted servers can be told to stop reading here, so that only a
    // signal, not the end of their stdin, can end them.
    session
        .notify("hostile/hold", None)
        .map_err(|e| e.to_string())?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "ready {pid}")
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))?;
    // Live until stdin closes (the test ends) or a signal ends the process.
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        while std::io::stdin()
            .lock()
            .read_line(&mut line)
            .is_ok_and(|n| n > 0)
        {
            line.clear();
        }
    })
    .await
    .map_err(|e| e.to_string())?;
    drop(session);
    Ok(())
}
