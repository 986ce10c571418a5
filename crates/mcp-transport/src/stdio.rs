//! The stdio transport: a child process speaking newline-delimited JSON.
//!
//! - **Spawn** without a shell (`process-wrap`), as the leader of a new
//!   process group so shutdown reaches grandchildren too (`npx` → `node`).
//!   The environment is cleared, then filled from the caller's environment
//!   map through [`mcp_config::INHERITED_ENV_ALLOWLIST`], then the entry's own
//!   `env` (REFERENCE §1.6); `cwd` is honoured.
//! - **Framing**: one JSON-RPC message per line. A line that is not JSON (a
//!   banner, a stray log line) is skipped and logged, never fatal. A line
//!   longer than the cap is not buffered: the reader stops collecting at the
//!   cap, and the connection fails with [`TransportError::MessageTooLarge`]
//!   using bounded memory whatever the line's length.
//! - **Tasks**: a reader task (stdout → decoded messages), a writer task
//!   (encoded messages → stdin, batching whatever is queued into one write)
//!   and a stderr task (the last [`crate::transport::STDERR_TAIL_BYTES`] in a
//!   ring buffer). `send` and `receive` only touch channels, so they return
//!   promptly and `receive` is cancel-safe.
//! - **Exit**: when stdout ends, `receive` fails with
//!   [`TransportError::ServerExited`] carrying the exit status and the stderr
//!   tail, so a call in flight fails promptly and says why.
//! - **Shutdown** ([`Transport::close`]): close stdin, wait ~2 s, SIGTERM the
//!   process group, wait ~2 s, SIGKILL. Dropping the transport without
//!   closing SIGKILLs the group at once, so nothing is orphaned when a client
//!   is dropped or its task cancelled.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use process_wrap::tokio::{KillOnDrop, ProcessGroup, TokioChildWrapper, TokioCommandWrap};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::codec::{Codec, DecodeError};
use crate::message::JsonRpcMessage;
use crate::transport::{StderrTail, Transport, TransportError};

/// Options of the stdio transport.
#[derive(Debug, Clone)]
pub struct StdioOptions {
    /// The environment the allow-list draws from (normally the host's
    /// process environment; tests pass their own).
    pub base_env: BTreeMap<String, String>,
    /// Largest accepted line.
    pub codec: Codec,
    /// How long to wait after closing stdin before SIGTERM.
    pub stdin_close_grace: Duration,
    /// How long to wait after SIGTERM before SIGKILL.
    pub sigterm_grace: Duration,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            base_env: BTreeMap::new(),
            codec: Codec::default(),
            stdin_close_grace: Duration::from_secs(2),
            sigterm_grace: Duration::from_secs(2),
        }
    }
}

/// What the reader task reports.
enum ReaderEvent {
    Message(JsonRpcMessage),
    TooLarge,
    ReadError(String),
    Eof,
}

/// A running stdio server.
#[derive(Debug)]
pub struct StdioTransport {
    server: String,
    codec: Codec,
    child: Option<Box<dyn TokioChildWrapper>>,
    pgid: Option<Pid>,
    outgoing: Option<mpsc::UnboundedSender<JsonRpcMessage>>,
    incoming: mpsc::Receiver<ReaderEvent>,
    writer: Option<JoinHandle<()>>,
    reader: JoinHandle<()>,
    stderr_task: Option<JoinHandle<()>>,
    stderr: StderrTail,
    /// Set once the connection has ended; later calls return it again.
    ended: Option<TransportError>,
    stdin_close_grace: Duration,
    sigterm_grace: Duration,
}

impl std::fmt::Debug for ReaderEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReaderEvent::Message(_) => f.write_str("Message"),
            ReaderEvent::TooLarge => f.write_str("TooLarge"),
            ReaderEvent::ReadError(e) => write!(f, "ReadError({e})"),
            ReaderEvent::Eof => f.write_str("Eof"),
        }
    }
}

/// The child's environment: the allow-listed part of `base_env`, then the
/// entry's own `env` on top.
pub fn child_env(
    base_env: &BTreeMap<String, String>,
    entry_env: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = base_env
        .iter()
        .filter(|(key, _)| mcp_config::INHERITED_ENV_ALLOWLIST.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    env.extend(entry_env.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

impl StdioTransport {
    /// Spawns the server. Fails with [`TransportError::Spawn`] when the
    /// program cannot be started.
    pub fn spawn(
        server: impl Into<String>,
        config: &mcp_config::StdioConfig,
        options: &StdioOptions,
    ) -> Result<StdioTransport, TransportError> {
        let server = server.into();
        let env = child_env(&options.base_env, &config.env);
        let mut command = TokioCommandWrap::with_new(&config.command, |command| {
            command
                .args(&config.args)
                .env_clear()
                .envs(&env)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if let Some(cwd) = &config.cwd {
                command.current_dir(cwd);
            }
        });
        command.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let mut child = command.spawn().map_err(|e| TransportError::Spawn {
            server: server.clone(),
            command: config.command.clone(),
            message: e.to_string(),
        })?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let io_error = |what: &str| TransportError::Spawn {
            server: server.clone(),
            command: config.command.clone(),
            message: format!("no {what} pipe"),
        };
        let stdin = child.stdin().take().ok_or_else(|| io_error("stdin"))?;
        let stdout = child.stdout().take().ok_or_else(|| io_error("stdout"))?;
        let stderr_pipe = child.stderr().take().ok_or_else(|| io_error("stderr"))?;

        let stderr = StderrTail::default();
        let stderr_task = tokio::spawn(read_stderr(stderr_pipe, stderr.clone(), server.clone()));
        let (outgoing_tx, outgoing_rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_messages(stdin, outgoing_rx, options.codec));
        let (incoming_tx, incoming_rx) = mpsc::channel(256);
        let reader = tokio::spawn(read_messages(
            stdout,
            incoming_tx,
            options.codec,
            server.clone(),
        ));
        Ok(StdioTransport {
            server,
            codec: options.codec,
            child: Some(child),
            pgid,
            outgoing: Some(outgoing_tx),
            incoming: incoming_rx,
            writer: Some(writer),
            reader,
            stderr_task: Some(stderr_task),
            stderr,
            ended: None,
            stdin_close_grace: options.stdin_close_grace,
            sigterm_grace: options.sigterm_grace,
        })
    }

    /// The child's process id (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.pgid.and_then(|pid| u32::try_from(pid.as_raw()).ok())
    }

    /// Builds the error for a server whose stdout ended: waits briefly for
    /// the exit status and the rest of stderr, so the error says why.
    async fn exited_error(&mut self) -> TransportError {
        let status = match &mut self.child {
            Some(child) => {
                match tokio::time::timeout(Duration::from_millis(500), child.inner_mut().wait())
                    .await
                {
                    Ok(Ok(status)) => status.to_string(),
                    Ok(Err(e)) => format!("wait failed: {e}"),
                    Err(_) => "stdout closed".to_string(),
                }
            }
            None => "stdout closed".to_string(),
        };
        if let Some(task) = &mut self.stderr_task
            && tokio::time::timeout(Duration::from_millis(200), task)
                .await
                .is_ok()
        {
            self.stderr_task = None;
        }
        TransportError::ServerExited {
            server: self.server.clone(),
            status,
            stderr_tail: self.stderr.snapshot(),
        }
    }

    fn signal_group(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is gone) is the expected outcome late in shutdown.
            let _ = killpg(pgid, signal);
        }
    }

    fn group_alive(&self) -> bool {
        self.pgid.is_some_and(|pgid| killpg(pgid, None).is_ok())
    }

    /// Waits up to `grace` for the leader to exit and the group to empty.
    async fn wait_gone(&mut self, grace: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + grace;
        if let Some(child) = &mut self.child
            && tokio::time::timeout_at(deadline, child.inner_mut().wait())
                .await
                .is_err()
        {
            return false;
        }
        while self.group_alive() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        true
    }
}

#[async_trait]
impl Transport for StdioTransport {
    async fn send(&mut self, message: JsonRpcMessage) -> Result<(), TransportError> {
        if let Some(ended) = &self.ended {
            return Err(ended.clone());
        }
        let Some(outgoing) = &self.outgoing else {
            return Err(TransportError::Closed {
                server: self.server.clone(),
            });
        };
        outgoing.send(message).map_err(|_| TransportError::Closed {
            server: self.server.clone(),
        })
    }

    async fn receive(&mut self) -> Result<Option<JsonRpcMessage>, TransportError> {
        if let Some(ended) = &self.ended {
            return Err(ended.clone());
        }
        let event = self.incoming.recv().await.unwrap_or(ReaderEvent::Eof);
        let error = match event {
            ReaderEvent::Message(message) => return Ok(Some(message)),
            ReaderEvent::TooLarge => TransportError::MessageTooLarge {
                server: self.server.clone(),
                max: self.codec.max_message_bytes(),
            },
            ReaderEvent::ReadError(message) => TransportError::Io {
                server: self.server.clone(),
                message: format!("reading stdout failed: {message}"),
            },
            ReaderEvent::Eof => {
                // Record the end first so a cancelled wait below still leaves
                // the transport ended; the error is refined once it completes.
                self.ended = Some(TransportError::ServerExited {
                    server: self.server.clone(),
                    status: "stdout closed".to_string(),
                    stderr_tail: self.stderr.snapshot(),
                });
                self.exited_error().await
            }
        };
        self.ended = Some(error.clone());
        Err(error)
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        // 1. Close stdin: let the writer flush what is queued, then drop the pipe.
        self.outgoing = None;
        if let Some(writer) = self.writer.take()
            && tokio::time::timeout(self.stdin_close_grace, writer)
                .await
                .is_err()
        {
            tracing::debug!(server = %self.server, "stdin writer did not finish");
        }
        // 2. Wait for a voluntary exit, then SIGTERM, then SIGKILL.
        if !self.wait_gone(self.stdin_close_grace).await {
            self.signal_group(Signal::SIGTERM);
            if !self.wait_gone(self.sigterm_grace).await {
                tracing::debug!(server = %self.server, "server ignored SIGTERM; killing its process group");
                self.signal_group(Signal::SIGKILL);
                let _ = self.wait_gone(Duration::from_secs(2)).await;
            }
        }
        self.reader.abort();
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
        self.child = None;
        self.pgid = None;
        if self.ended.is_none() {
            self.ended = Some(TransportError::Closed {
                server: self.server.clone(),
            });
        }
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "stdio"
    }

    fn stderr_tail(&self) -> Option<StderrTail> {
        Some(self.stderr.clone())
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Not closed gracefully: make sure nothing outlives us. The child
        // itself is also killed (and reaped by tokio) by KillOnDrop.
        if self.child.is_some() {
            self.signal_group(Signal::SIGKILL);
        }
        self.reader.abort();
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
        if let Some(task) = self.writer.take() {
            task.abort();
        }
    }
}

async fn write_messages(
    stdin: ChildStdin,
    mut outgoing: mpsc::UnboundedReceiver<JsonRpcMessage>,
    codec: Codec,
) {
    let mut stdin = stdin;
    let mut buffer = Vec::with_capacity(8 * 1024);
    while let Some(message) = outgoing.recv().await {
        buffer.clear();
        codec.encode_into(&message, &mut buffer);
        buffer.push(b'\n');
        // Batch whatever else is already queued into the same write.
        while buffer.len() < 1024 * 1024 {
            match outgoing.try_recv() {
                Ok(message) => {
                    codec.encode_into(&message, &mut buffer);
                    buffer.push(b'\n');
                }
                Err(_) => break,
            }
        }
        if let Err(e) = stdin.write_all(&buffer).await {
            tracing::debug!(error = %e, "writing to server stdin failed");
            return;
        }
    }
    let _ = stdin.shutdown().await;
}

/// Reads lines up to the cap. A longer line is drained without buffering
/// and reported once as too large (ending the connection).
async fn read_messages(
    stdout: ChildStdout,
    incoming: mpsc::Sender<ReaderEvent>,
    codec: Codec,
    server: String,
) {
    let max = codec.max_message_bytes();
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line: Vec<u8> = Vec::with_capacity(8 * 1024);
    loop {
        line.clear();
        let mut too_large = false;
        let mut saw_newline = false;
        loop {
            let available = match reader.fill_buf().await {
                Ok(available) => available,
                Err(e) => {
                    let _ = incoming.send(ReaderEvent::ReadError(e.to_string())).await;
                    return;
                }
            };
            if available.is_empty() {
                break;
            }
            let (chunk, consumed, done) = match memchr_newline(available) {
                Some(index) => (&available[..index], index + 1, true),
                None => (available, available.len(), false),
            };
            if !too_large {
                if line.len() + chunk.len() > max {
                    too_large = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            reader.consume(consumed);
            if done {
                saw_newline = true;
                break;
            }
        }
        if too_large {
            tracing::warn!(server = %server, max, "server sent a message past the size cap");
            let _ = incoming.send(ReaderEvent::TooLarge).await;
            return;
        }
        if !saw_newline && line.iter().all(u8::is_ascii_whitespace) {
            let _ = incoming.send(ReaderEvent::Eof).await;
            return;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match codec.decode(&line) {
            Ok(decoded) => {
                for message in decoded {
                    if incoming.send(ReaderEvent::Message(message)).await.is_err() {
                        return;
                    }
                }
            }
            Err(DecodeError::NotJson(reason)) => {
                tracing::info!(server = %server, %reason, "skipping a stdout line that is not JSON");
            }
            Err(error) => {
                tracing::warn!(server = %server, %error, "skipping an invalid message");
            }
        }
        if !saw_newline {
            let _ = incoming.send(ReaderEvent::Eof).await;
            return;
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Keeps the last bytes of stderr; logs each chunk at trace level.
async fn read_stderr(mut stderr: ChildStderr, tail: StderrTail, server: String) {
    let mut buffer = vec![0u8; 8 * 1024];
    loop {
        match stderr.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                tracing::trace!(server = %server, bytes = n, "server stderr");
                tail.push(&buffer[..n]);
            }
        }
    }
}
