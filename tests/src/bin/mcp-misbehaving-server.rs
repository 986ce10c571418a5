//! `mcp-misbehaving-server`: the example server over stdio with one scripted
//! fault (see `mcp_integration_tests::misbehaving`), for the fault injection
//! suite.
//!
//! `--fault crash --at tools/call` exits when a `tools/call` arrives;
//! `--fault hang --at initialize` stops dead at `initialize`;
//! `--fault huge=52428800 --at tools/call` answers calls with 50 MiB;
//! `--fault flood=10000 --at notifications/initialized` sends 10,000
//! notifications a second once the handshake is done. `--pid-file` writes
//! the process id first, so a test can check that nothing outlives it.
//!
//! Stdin is read by a plain thread (so a hang can stop it), answers are
//! written by a task on the one runtime thread (so a hang there stops
//! everything).

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use mcp_integration_tests::misbehaving::{Fault, Script};
use mcp_integration_tests::server::{Era, ExampleServer, ServerOptions};
use mcp_transport::wire::Codec;
use mcp_transport::{JsonRpcMessage, RequestId};
use serde_json::json;
use tokio::sync::mpsc;

/// The example MCP server over stdio, misbehaving as scripted.
#[derive(Debug, Parser)]
#[command(name = "mcp-misbehaving-server", version, about)]
struct Cli {
    #[command(flatten)]
    options: ServerOptions,
    /// What goes wrong: crash, hang, partial-line, invalid-utf8, unknown-id,
    /// duplicate-response, huge=BYTES, flood=PER_SECOND.
    #[arg(long)]
    fault: Fault,
    /// The method of the message the fault fires at.
    #[arg(long)]
    at: String,
    /// Write the process id to this file first.
    #[arg(long)]
    pid_file: Option<PathBuf>,
}

/// Which request each id belongs to, so an answer's fault can be found.
type Methods = Arc<Mutex<HashMap<RequestId, String>>>;

/// Set once the server hangs: nothing is written any more.
static HUNG: AtomicBool = AtomicBool::new(false);

fn log(message: &str) {
    let _ = writeln!(std::io::stderr(), "mcp-misbehaving-server: {message}");
}

/// Blocks the calling thread for good.
fn hang_forever() -> ! {
    HUNG.store(true, Ordering::SeqCst);
    loop {
        std::thread::park();
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(path) = &cli.pid_file
        && let Err(e) = std::fs::write(path, std::process::id().to_string())
    {
        log(&format!("cannot write the pid file: {e}"));
        return ExitCode::FAILURE;
    }
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
    let script = Script::new(cli.fault, &cli.at);
    log(&format!(
        "serving with {} at {} (pid {})",
        script.fault,
        script.at,
        std::process::id()
    ));
    let mut options = cli.options;
    if matches!(
        script.at.as_str(),
        "initialize" | "notifications/initialized"
    ) {
        // A fault in the `initialize` handshake needs a server that is
        // reached through it: a dual-era one answers the session's
        // `server/discover` and is never initialized.
        options.era = Era::Legacy;
    }
    runtime.block_on(serve(options, script));
    ExitCode::SUCCESS
}

async fn serve(options: ServerOptions, script: Script) {
    let methods = Methods::default();
    let (incoming_tx, incoming_rx) = mpsc::unbounded_channel();
    let (outgoing_tx, outgoing_rx) = mpsc::channel(256);
    let reader_script = script.clone();
    let reader_methods = Arc::clone(&methods);
    let runtime = tokio::runtime::Handle::current();
    let flood_tx = outgoing_tx.clone();
    std::thread::spawn(move || {
        read_stdin(
            &reader_script,
            &reader_methods,
            &incoming_tx,
            &runtime,
            flood_tx,
        )
    });
    tokio::spawn(write_stdout(outgoing_rx, script, methods));
    let server = Arc::new(ExampleServer::new(options));
    // Returns when stdin closes; the process then ends with the runtime.
    server.run(incoming_rx, outgoing_tx).await;
}

fn read_stdin(
    script: &Script,
    methods: &Methods,
    incoming: &mpsc::UnboundedSender<JsonRpcMessage>,
    runtime: &tokio::runtime::Handle,
    flood: mpsc::Sender<JsonRpcMessage>,
) {
    let codec = Codec::new(usize::MAX);
    let stdin = std::io::stdin();
    let mut stdin = stdin.lock();
    let mut line = Vec::new();
    let mut flood = Some(flood);
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(decoded) = codec.decode(&line) else {
            log("skipping a line that is not a message");
            continue;
        };
        for message in decoded {
            if let JsonRpcMessage::Request(request) = &message {
                lock(methods).insert(request.id.clone(), request.method.clone());
            }
            if message.method() == Some(script.at.as_str()) {
                match script.fault {
                    Fault::Crash => {
                        log(&format!("crashing at {} as scripted", script.at));
                        std::process::exit(1);
                    }
                    Fault::Hang => {
                        log(&format!("hanging at {} as scripted", script.at));
                        hang_forever();
                    }
                    Fault::Flood(per_second) => {
                        if let Some(sender) = flood.take() {
                            log(&format!("flooding {per_second} notifications a second"));
                            runtime.spawn(send_flood(sender, per_second));
                        }
                    }
                    _ => {}
                }
            }
            if incoming.send(message).is_err() {
                return;
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// `per_second` log notifications a second, in batches every 10 ms, until
/// the process ends.
async fn send_flood(outgoing: mpsc::Sender<JsonRpcMessage>, per_second: u32) {
    let per_tick = (per_second / 100).max(1);
    let mut tick = tokio::time::interval(Duration::from_millis(10));
    let mut sent: u64 = 0;
    loop {
        tick.tick().await;
        for _ in 0..per_tick {
            sent += 1;
            let note = JsonRpcMessage::notification(
                "notifications/message",
                Some(
                    json!({"level": "info", "logger": "flood", "data": format!("message {sent}")}),
                ),
            );
            if outgoing.send(note).await.is_err() {
                return;
            }
        }
    }
}

/// Writes answers, applying the script to the answer of the scripted
/// request.
async fn write_stdout(
    mut outgoing: mpsc::Receiver<JsonRpcMessage>,
    script: Script,
    methods: Methods,
) {
    let codec = Codec::default();
    let mut stdout = std::io::stdout();
    while let Some(message) = outgoing.recv().await {
        if HUNG.load(Ordering::SeqCst) {
            hang_forever();
        }
        let scripted = match &message {
            JsonRpcMessage::Response(response) => response
                .id
                .as_ref()
                .and_then(|id| lock(&methods).remove(id))
                .is_some_and(|method| method == script.at),
            _ => false,
        };
        let mut line = codec.encode(&message);
        line.push(b'\n');
        let JsonRpcMessage::Response(mut response) = message else {
            if stdout
                .write_all(&line)
                .and_then(|()| stdout.flush())
                .is_err()
            {
                return;
            }
            continue;
        };
        if scripted {
            match script.fault {
                Fault::PartialLine => {
                    log("writing half an answer, then hanging as scripted");
                    let _ = stdout.write_all(&line[..line.len() / 2]);
                    let _ = stdout.flush();
                    hang_forever();
                }
                Fault::InvalidUtf8 => {
                    let id = serde_json::to_string(&response.id).unwrap_or_default();
                    line = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"bad "#
                    )
                    .into_bytes();
                    line.extend_from_slice(b"\xff\xfe\xfd");
                    line.extend_from_slice(b"\"}]}}\n");
                }
                Fault::UnknownId => {
                    response.id = Some(RequestId::Number(987_654_321));
                    line = codec.encode(&JsonRpcMessage::Response(response));
                    line.push(b'\n');
                }
                Fault::DuplicateResponse => {
                    let again = line.clone();
                    line.extend_from_slice(&again);
                }
                Fault::Huge(bytes) => {
                    // Written piecewise: encoding 50 MiB through serde would
                    // take longer than the timeouts under test.
                    let id = serde_json::to_string(&response.id).unwrap_or_default();
                    let head = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
                    );
                    let chunk = vec![b'x'; 1 << 20];
                    let mut left = bytes;
                    let mut written = stdout.write_all(head.as_bytes());
                    while left > 0 && written.is_ok() {
                        let n = left.min(chunk.len());
                        written = stdout.write_all(&chunk[..n]);
                        left -= n;
                    }
                    line = b"\"}]}}\n".to_vec();
                }
                Fault::Crash | Fault::Hang | Fault::Flood(_) => {}
            }
        }
        if stdout
            .write_all(&line)
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}
