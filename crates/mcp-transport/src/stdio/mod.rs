//! The stdio transport: a child process speaking newline-delimited JSON.
//!
//! - **Spawn** without a shell (`process-wrap`), as the leader of a new
//!   process group so shutdown reaches grandchildren too (`npx` → `node`).
//!   The environment is cleared, then filled from the caller's environment
//!   map through [`mcp_config::env::is_inherited_env_name`] (the allow-list,
//!   proxy and CA variables, `XDG_*`) and the entry's `envPassthrough`
//!   names, then the entry's own `env`, without the keys env safety
//!   refuses (REFERENCE §1.6); `cwd` is honoured.
//! - **Framing**: one JSON-RPC message per line. A line that is not JSON (a
//!   banner, a stray log line) is skipped and logged, never fatal. A line
//!   longer than the cap is not buffered: the reader stops collecting at the
//!   cap, and the connection fails with [`TransportErrorKind::MessageTooLarge`]
//!   using bounded memory whatever the line's length.
//! - **Tasks**: a writer task (queued messages → stdin, everything queued
//!   in one write) and a stderr task (the last
//!   [`crate::transport::STDERR_TAIL_BYTES`] in a ring buffer, and the
//!   first error-looking line with its context, see [`crate::stderr_tail`];
//!   a connect timeout of a server that wrote nothing there carries
//!   [`silence_note`]). Stdout is
//!   read by `receive` itself, on the session's driver task, saving a task
//!   hop per answer; it is cancel-safe because its only await is
//!   `fill_buf` and the partial line lives in the transport. `send` never
//!   waits for the pipe. [`TransportInfo::sender`](crate::TransportInfo::sender) hands out the queue so the
//!   session's callers enqueue requests directly; a lone request on an idle
//!   pipe is written by its caller at once, without waking the writer.
//! - **Exit**: when stdout ends, `receive` fails with
//!   [`TransportErrorKind::ServerExited`] carrying the exit status and the stderr
//!   tail, so a call in flight fails promptly and says why.
//! - **Shutdown** ([`Transport::close`]): close stdin, wait ~2 s, SIGTERM the
//!   process group, wait ~2 s, SIGKILL. Dropping the transport without
//!   closing SIGKILLs the group at once, so nothing is orphaned when a client
//!   is dropped or its task cancelled.
//! - **Host death** (Linux): the child also gets a parent-death signal,
//!   SIGTERM, so a host that is killed outright (SIGKILL, a crash, the OOM
//!   killer), which runs no drop and no shutdown, still ends its direct
//!   children; a server that ignores SIGTERM, or its grandchildren, are not
//!   covered (the process group is, by every orderly exit). The kernel sends
//!   that signal when the *thread* that created the child exits, not the
//!   process, and a tokio runtime would spawn from whichever worker or
//!   blocking-pool thread calls [`StdioTransport::spawn`], which may exit
//!   long before the host does (an idle blocking thread does after ten
//!   seconds). So every server is started from one dedicated thread that
//!   lives as long as the process; `connect` awaits it, and the pipes and
//!   the child are registered with the caller's runtime. The process's main
//!   thread lives as long too, so on Linux a server is started right there
//!   when the caller runs on it (a current-thread runtime's, or the future
//!   a `block_on` drives): the hand-off there and back is saved, and so is
//!   starting the dedicated thread for a process's first server (0.1–0.2
//!   ms). The signal is set by a `pre_exec` hook (`launch.rs`);
//!   a host that died before the `prctl` is caught by comparing the
//!   parent's pid: the server is then not started.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use process_wrap::tokio::TokioChildWrapper;
use tokio::task::JoinHandle;

mod launch;
mod program;
mod reader;

use launch::{Started, launch_job, on_spawner_thread, on_spawner_thread_async, register};
use reader::{LineReader, ReaderEvent, read_stderr};

use crate::codec::Codec;
use crate::error::{TransportError, TransportErrorKind};
use crate::message::{Incoming, JsonRpcMessage};
use crate::outbox::Outbox;
use crate::stderr_tail::StderrTail;
use crate::transport::{MessageSender, Transport, TransportInfo};

/// Options of the stdio transport. Its `Debug` names the variables of
/// `base_env`, never their values.
#[non_exhaustive]
#[derive(Clone)]
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

impl StdioOptions {
    /// Options with an empty base environment, the default line cap and two-second grace periods: the same as `StdioOptions::default()`.
    pub fn new() -> Self {
        StdioOptions::default()
    }

    /// Sets the environment the allow-list draws from.
    #[must_use]
    pub fn with_base_env(mut self, base_env: BTreeMap<String, String>) -> Self {
        self.base_env = base_env;
        self
    }

    /// Sets the codec (its cap is the largest accepted line).
    #[must_use]
    pub fn with_codec(mut self, codec: Codec) -> Self {
        self.codec = codec;
        self
    }

    /// Sets how long to wait after closing stdin before SIGTERM.
    #[must_use]
    pub fn with_stdin_close_grace(mut self, stdin_close_grace: Duration) -> Self {
        self.stdin_close_grace = stdin_close_grace;
        self
    }

    /// Sets how long to wait after SIGTERM before SIGKILL.
    #[must_use]
    pub fn with_sigterm_grace(mut self, sigterm_grace: Duration) -> Self {
        self.sigterm_grace = sigterm_grace;
        self
    }
}

impl std::fmt::Debug for StdioOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioOptions")
            .field("base_env", &self.base_env.keys().collect::<Vec<_>>())
            .field("codec", &self.codec)
            .field("stdin_close_grace", &self.stdin_close_grace)
            .field("sigterm_grace", &self.sigterm_grace)
            .finish()
    }
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

/// A running stdio server.
#[derive(Debug)]
pub struct StdioTransport {
    server: String,
    codec: Codec,
    child: Option<Box<dyn TokioChildWrapper>>,
    pgid: Option<Pid>,
    /// Encoded messages on their way to stdin; shared with the handles
    /// from [`TransportInfo::sender`](crate::TransportInfo::sender).
    outbox: Arc<Outbox>,
    /// False once [`Transport::close`] began.
    accepting: bool,
    stdout: LineReader,
    writer: Option<JoinHandle<()>>,
    stderr_task: Option<JoinHandle<()>>,
    stderr: StderrTail,
    /// Set once the connection has ended; later calls return it again.
    ended: Option<TransportError>,
    stdin_close_grace: Duration,
    sigterm_grace: Duration,
}

/// The child's environment: the inherited part of `base_env` (the
/// allow-list, proxy and CA variables, `XDG_*`, and the names of
/// `passthrough`), then the entry's own `env` on top, without any key env
/// safety refuses. The loader already dropped such keys, but a host may
/// build an entry by hand.
pub(crate) fn child_env(
    base_env: &BTreeMap<String, String>,
    entry_env: &BTreeMap<String, String>,
    passthrough: &[String],
) -> BTreeMap<String, String> {
    mcp_config::child_env(base_env, entry_env, passthrough)
}

/// The note a connect timeout carries when the server wrote nothing on
/// stderr: a package runner (`npx -y`, `uvx`) that cannot reach its
/// registry often waits silently. It names the proxy and CA variables the
/// child got, or says none is set, and the `envPassthrough` names the host
/// does not have: names only, never a value.
pub(crate) fn silence_note(
    base_env: &BTreeMap<String, String>,
    config: &mcp_config::StdioConfig,
) -> String {
    let passed: Vec<&str> = mcp_config::env::INHERITED_NETWORK_ENV
        .iter()
        .copied()
        .filter(|name| base_env.contains_key(*name) || config.env.contains_key(*name))
        .collect();
    let mut note =
        String::from("the server wrote nothing on stderr; if it downloads packages (npx, uvx), ");
    if passed.is_empty() {
        note.push_str(
            "a proxy or CA variable may be missing (none of HTTPS_PROXY, HTTP_PROXY, \
             NO_PROXY, SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE is set; \
             they are passed when set)",
        );
    } else {
        let verb = if passed.len() == 1 { "is" } else { "are" };
        note.push_str(&format!(
            "check its network settings: {} {verb} passed to it",
            passed.join(", ")
        ));
    }
    let unset: Vec<&str> = config
        .env_passthrough
        .iter()
        .map(String::as_str)
        .filter(|name| !base_env.contains_key(*name))
        .collect();
    if !unset.is_empty() {
        note.push_str(&format!(
            "; `envPassthrough` names {}, not set here",
            unset.join(", ")
        ));
    }
    note.push_str("; name any other variable it needs in `envPassthrough`");
    note
}

impl StdioTransport {
    /// Spawns the server. Fails with [`TransportErrorKind::Spawn`] when the
    /// program cannot be started. Blocks the calling thread while the
    /// server is started (well under a millisecond); `connect` awaits it
    /// instead.
    pub fn spawn(
        server: impl Into<String>,
        config: &mcp_config::StdioConfig,
        options: &StdioOptions,
    ) -> Result<StdioTransport, TransportError> {
        let job = launch_job(config, &options.base_env);
        let started = job.and_then(on_spawner_thread).and_then(register);
        Self::from_started(server.into(), config, options, &options.base_env, started)
    }

    /// [`StdioTransport::spawn`] drawing the allow-listed variables from
    /// `base_env` instead of `options.base_env` (`connect` lends the host's
    /// environment without copying all of it for every server), and
    /// awaiting the spawner thread instead of blocking on it, so a runtime
    /// thread goes on with the other servers' sessions meanwhile.
    pub(crate) async fn spawn_with_base_env(
        server: String,
        config: &mcp_config::StdioConfig,
        options: &StdioOptions,
        base_env: &BTreeMap<String, String>,
    ) -> Result<StdioTransport, TransportError> {
        let started = match launch_job(config, base_env) {
            Ok(job) => on_spawner_thread_async(job).await.and_then(register),
            Err(e) => Err(e),
        };
        Self::from_started(server, config, options, base_env, started)
    }

    fn from_started(
        server: String,
        config: &mcp_config::StdioConfig,
        options: &StdioOptions,
        base_env: &BTreeMap<String, String>,
        started: std::io::Result<Started>,
    ) -> Result<StdioTransport, TransportError> {
        let spawn_error = |message: String| {
            TransportError::new(
                &*server,
                TransportErrorKind::Spawn {
                    command: config.command.clone(),
                    message,
                },
            )
        };
        let started = started.map_err(|e| spawn_error(e.to_string()).with_source(e))?;
        let pgid = started.pid.map(Pid::from_raw);
        let stderr = StderrTail::with_silence_note(silence_note(base_env, config));
        let stderr_task = tokio::spawn(read_stderr(started.stderr, stderr.clone(), server.clone()));
        let outbox = Outbox::new(started.stdin);
        let writer = tokio::spawn(Arc::clone(&outbox).run_writer());
        let stdout = LineReader::new(started.stdout, options.codec, server.clone());
        Ok(StdioTransport {
            server,
            codec: options.codec,
            child: Some(started.process),
            pgid,
            outbox,
            accepting: true,
            stdout,
            writer: Some(writer),
            stderr_task: Some(stderr_task),
            stderr,
            ended: None,
            stdin_close_grace: options.stdin_close_grace,
            sigterm_grace: options.sigterm_grace,
        })
    }

    /// The next message from stdout (`receive`).
    async fn next_incoming(&mut self) -> Result<Option<Incoming>, TransportError> {
        if let Some(ended) = &self.ended {
            return Err(ended.clone());
        }
        let event = self.stdout.next_event().await;
        let error = match event {
            ReaderEvent::Message(message) => return Ok(Some(message)),
            ReaderEvent::TooLarge => TransportError::new(
                &*self.server,
                TransportErrorKind::MessageTooLarge {
                    max: self.codec.max_message_bytes(),
                },
            ),
            ReaderEvent::ReadError(message) => {
                TransportError::io(&*self.server, format!("reading stdout failed: {message}"))
            }
            ReaderEvent::Eof => {
                // Record the end first so a cancelled wait below still leaves
                // the transport ended; the error is refined once it completes.
                self.ended = Some(TransportError::new(
                    &*self.server,
                    TransportErrorKind::ServerExited {
                        status: "stdout closed".to_string(),
                        stderr_tail: self.stderr.report(),
                    },
                ));
                self.exited_error().await
            }
        };
        self.ended = Some(error.clone());
        Err(error)
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
        TransportError::new(
            &*self.server,
            TransportErrorKind::ServerExited {
                status,
                stderr_tail: self.stderr.report(),
            },
        )
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
        let deadline = crate::time::later_tokio(tokio::time::Instant::now(), grace);
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
        let closed = || TransportError::closed(&*self.server);
        if !self.accepting {
            return Err(closed());
        }
        self.outbox.send(message, true).map_err(|_| closed())
    }

    async fn receive(&mut self, out: &mut Vec<Incoming>) -> Result<bool, TransportError> {
        let Some(first) = self.next_incoming().await? else {
            return Ok(false);
        };
        out.push(first);
        // Every further line already read: no await, so still cancel-safe.
        self.stdout.drain_buffered(out);
        Ok(true)
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        // 1. Close stdin: let the writer flush what is queued, then drop the pipe.
        self.accepting = false;
        self.outbox.close();
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
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
        self.child = None;
        self.pgid = None;
        if self.ended.is_none() {
            self.ended = Some(TransportError::closed(&*self.server));
        }
        Ok(())
    }

    fn info(&self) -> TransportInfo {
        let sender = self
            .accepting
            .then(|| MessageSender::encoding(Arc::clone(&self.outbox) as _));
        TransportInfo::new("stdio")
            .with_stderr_tail(self.stderr.clone())
            .with_sender(sender)
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Not closed gracefully: make sure nothing outlives us. The child
        // itself is also killed and reaped when its wrapper drops.
        if self.child.is_some() {
            self.signal_group(Signal::SIGKILL);
        }
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
        if let Some(task) = self.writer.take() {
            task.abort();
        }
        self.outbox.stop();
    }
}
