//! `mcp-example-server`: the example MCP server over stdio (newline-delimited
//! JSON on stdin/stdout, diagnostics on stderr).
//!
//! With no flags it is a small demo server named `example` (tools `echo`,
//! `add`, ..., a resource and a prompt). The flags script misbehaviour for
//! tests and benchmarks; see `--help`.
//!
//! Everything runs on one runtime thread: a stdin pipe is read without
//! blocking through the runtime's reactor, and answers are written to
//! stdout from the same thread, batching whatever is queued into one write.
//! Without thread hops the server's share of round-trip benchmarks stays
//! small. (A stdin that is not a pipe, such as a terminal, is read by a
//! plain thread instead, so its flags are never changed.)

use std::io::{BufRead, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use mcp_integration_tests::server::{ExampleServer, Exit, ProcessInfo, ServerOptions};
use mcp_transport::wire::Codec;
use mcp_transport::{JsonRpcMessage, TransportErrorKind};
use tokio::io::AsyncBufReadExt;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;

/// An example MCP server over stdio.
#[derive(Debug, Parser)]
#[command(name = "mcp-example-server", version, about)]
struct Cli {
    #[command(flatten)]
    options: ServerOptions,
}

fn log(message: &str) {
    let _ = writeln!(std::io::stderr(), "mcp-example-server: {message}");
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            log(&format!("cannot start the runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(serve(cli.options))
}

async fn serve(options: ServerOptions) -> ExitCode {
    let mut process = ProcessInfo::default();
    // Kept alive for the process's lifetime; it shares our process group.
    let _grandchild = if options.spawn_grandchild {
        match std::process::Command::new("sleep")
            .arg("600")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
        {
            Ok(child) => {
                process.grandchild_pid = Some(child.id());
                Some(child)
            }
            Err(e) => {
                log(&format!("cannot start the grandchild: {e}"));
                None
            }
        }
    } else {
        None
    };
    if options.ignore_sigterm {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sigterm) => {
                tokio::spawn(async move {
                    while sigterm.recv().await.is_some() {
                        log("ignoring SIGTERM");
                    }
                });
            }
            Err(e) => log(&format!("cannot install the SIGTERM handler: {e}")),
        }
    }
    log(&format!(
        "serving {:?} on stdio (pid {})",
        options.name,
        std::process::id()
    ));

    let (incoming_tx, incoming_rx) = mpsc::unbounded_channel();
    let (outgoing_tx, outgoing_rx) = mpsc::channel(256);
    let keep_stdin_open = options.ignore_stdin_close;
    match nonblocking_stdin_pipe() {
        Some(stdin) => {
            tokio::spawn(read_stdin_pipe(stdin, incoming_tx, keep_stdin_open));
        }
        None => {
            std::thread::spawn(move || read_stdin(incoming_tx, keep_stdin_open));
        }
    }
    let garbage = options.garbage_lines;
    let writer = tokio::spawn(write_stdout(outgoing_rx, garbage));

    let server = Arc::new(ExampleServer::with_process(options, process));
    let exit = server.run(incoming_rx, outgoing_tx).await;
    match exit {
        Exit::ClientClosed => {
            // Every sender is gone once the aborted tasks are dropped; the
            // writer then flushes and ends.
            let _ = writer.await;
            ExitCode::SUCCESS
        }
        Exit::Crash => {
            log("crash requested: exiting with status 3");
            ExitCode::from(3)
        }
        Exit::ExitDuringInitialize => {
            log("fatal: exiting during initialize as asked");
            ExitCode::from(2)
        }
    }
}

/// Stdin as a non-blocking pipe driven by the runtime, when it is a pipe.
fn nonblocking_stdin_pipe() -> Option<pipe::Receiver> {
    let owned = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    // Checks that it is a FIFO and sets O_NONBLOCK.
    pipe::Receiver::from_owned_fd(owned).ok()
}

/// Decodes one line and queues its messages; false once the server stopped.
fn decode_line(
    codec: &Codec,
    line: &[u8],
    incoming: &mpsc::UnboundedSender<JsonRpcMessage>,
) -> bool {
    if line.iter().all(u8::is_ascii_whitespace) {
        return true;
    }
    match codec.decode(line) {
        Ok(decoded) => {
            for message in decoded {
                if incoming.send(message).is_err() {
                    return false;
                }
            }
        }
        Err(TransportErrorKind::NotJson { reason }) => {
            log(&format!("skipping a line that is not JSON: {reason}"))
        }
        Err(e) => log(&format!("skipping an invalid message: {e}")),
    }
    true
}

async fn read_stdin_pipe(
    stdin: pipe::Receiver,
    incoming: mpsc::UnboundedSender<JsonRpcMessage>,
    keep_open: bool,
) {
    let codec = Codec::new(usize::MAX);
    let mut stdin = tokio::io::BufReader::with_capacity(64 * 1024, stdin);
    let mut line = Vec::with_capacity(8 * 1024);
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if !decode_line(&codec, &line, &incoming) {
            return;
        }
    }
    if keep_open {
        log("stdin closed; staying up as asked");
        // Holding the sender keeps the server running.
        std::future::pending::<()>().await;
    }
}

fn read_stdin(incoming: mpsc::UnboundedSender<JsonRpcMessage>, keep_open: bool) {
    let codec = Codec::new(usize::MAX);
    let stdin = std::io::stdin();
    let mut stdin = stdin.lock();
    let mut line = Vec::with_capacity(8 * 1024);
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if !decode_line(&codec, &line, &incoming) {
            return;
        }
    }
    if keep_open {
        log("stdin closed; staying up as asked");
        // Holding the sender keeps the server running.
        loop {
            std::thread::park();
        }
    }
}

/// Writes answers with blocking writes on the runtime thread: a pipe write
/// is quick, and a full pipe means the client is behind anyway.
async fn write_stdout(mut outgoing: mpsc::Receiver<JsonRpcMessage>, garbage: bool) {
    let codec = Codec::default();
    let mut stdout = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout());
    let mut buffer = Vec::with_capacity(8 * 1024);
    while let Some(message) = outgoing.recv().await {
        let mut next = Some(message);
        while let Some(message) = next.take() {
            buffer.clear();
            if garbage {
                buffer.extend_from_slice(b"this line is not json\n");
            }
            codec.encode_into(&message, &mut buffer);
            buffer.push(b'\n');
            if garbage {
                buffer.extend_from_slice(b"{not json either\n\n");
            }
            if stdout.write_all(&buffer).is_err() {
                return;
            }
            next = outgoing.try_recv().ok();
        }
        if stdout.flush().is_err() {
            return;
        }
    }
    let _ = stdout.flush();
}
