//! Connecting: the async runtime the connecting verbs run on and the
//! catalog runtimes they have open.
//!
//! Every verb that connects (`probe`, `tools`, `call`, `login`) runs its
//! work through [`Connecting::run`], which handles SIGINT, SIGTERM and
//! SIGHUP (REFERENCE §1.6a): a stdio server leads its own process group,
//! so the terminal's Ctrl-C never reaches it, and without this an
//! interrupted CLI would leave it running. On a signal the work is
//! dropped, which cancels every request in flight (the session tells the
//! server with `notifications/cancelled`), then every runtime the verb
//! registered in [`Open`] is shut down, closing each of its sessions with
//! the stdio close sequence (stdin, SIGTERM to the group, SIGKILL), and the verb fails with
//! [`Interrupted`]: exit status 128 + the signal's number. A second signal
//! stops waiting for the graceful close; the sessions are then dropped,
//! which SIGKILLs their process groups at once.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_catalog::SessionRuntime;

/// How long the runtime's end waits for its threads; a blocking read of
/// stdin (a pasted sign-in url) would otherwise hold it forever.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(1);

/// The runtime of one connecting verb and the sessions it has open.
pub(crate) struct Connecting {
    runtime: Option<tokio::runtime::Runtime>,
    open: Open,
}

impl Connecting {
    /// A multi-threaded runtime for one verb.
    pub(crate) fn new() -> anyhow::Result<Connecting> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        Ok(Connecting {
            runtime: Some(runtime),
            open: Open::default(),
        })
    }

    /// Where the verb registers what a signal must close.
    pub(crate) fn open(&self) -> &Open {
        &self.open
    }

    /// Runs `work` to its end, unless SIGINT, SIGTERM or SIGHUP comes
    /// first: then the work is cancelled, every registered session closed,
    /// and the answer is an [`Interrupted`] error.
    pub(crate) fn run<F: Future>(&self, work: F) -> anyhow::Result<F::Output> {
        let runtime = self
            .runtime
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("the runtime has ended"))?;
        runtime.block_on(async {
            // Installed before the work starts any server.
            let mut signals = Signals::install()?;
            let mut work = Box::pin(work);
            let signal = tokio::select! {
                output = &mut work => return Ok(output),
                signal = signals.next() => signal,
            };
            tracing::debug!(signal = signal.name, "interrupted; closing every session");
            // Dropping the work drops every request future in flight, and
            // each tells its server the request is cancelled.
            drop(work);
            tokio::select! {
                () = self.open.close_all() => {}
                again = signals.next() => {
                    tracing::debug!(signal = again.name, "interrupted again; killing every server");
                }
            }
            self.open.forget();
            Err(Interrupted(signal).into())
        })
    }
}

impl Drop for Connecting {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Dropping the tasks drops any session still open, which kills
            // its process group; a blocked stdin read is left behind.
            runtime.shutdown_timeout(SHUTDOWN_WAIT);
        }
    }
}

/// What a signal must close: the catalog runtimes a verb has open (every
/// connection a verb makes is a runtime's). Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Open(Arc<Mutex<Vec<Arc<SessionRuntime>>>>);

impl Open {
    /// Registers a catalog runtime, whose shutdown closes its sessions.
    pub(crate) fn runtime(&self, runtime: SessionRuntime) -> Arc<SessionRuntime> {
        let runtime = Arc::new(runtime);
        self.lock().push(Arc::clone(&runtime));
        runtime
    }

    async fn close_all(&self) {
        let open: Vec<Arc<SessionRuntime>> = std::mem::take(&mut *self.lock());
        futures::future::join_all(open.iter().map(|runtime| runtime.shutdown())).await;
    }

    fn forget(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<SessionRuntime>>> {
        // A panic elsewhere cannot leave the list half written.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A signal that ended a verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Signal {
    pub(crate) name: &'static str,
    pub(crate) number: i32,
}

/// The verb was interrupted by a signal: exit status 128 + its number.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by {}; every server was closed", .0.name)]
pub(crate) struct Interrupted(pub(crate) Signal);

impl Interrupted {
    /// The shell's convention: 130 for SIGINT, 143 for SIGTERM, 129 for
    /// SIGHUP.
    pub(crate) fn exit_status(&self) -> u8 {
        u8::try_from(128 + self.0.number).unwrap_or(1)
    }
}

#[cfg(unix)]
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn install() -> anyhow::Result<Signals> {
        use anyhow::Context as _;
        use tokio::signal::unix::{SignalKind, signal};
        let install = |kind: SignalKind, name: &str| {
            signal(kind).with_context(|| format!("cannot handle {name}"))
        };
        Ok(Signals {
            interrupt: install(SignalKind::interrupt(), "SIGINT")?,
            terminate: install(SignalKind::terminate(), "SIGTERM")?,
            hangup: install(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    async fn next(&mut self) -> Signal {
        use tokio::signal::unix::SignalKind;
        let (name, kind) = tokio::select! {
            _ = self.interrupt.recv() => ("SIGINT", SignalKind::interrupt()),
            _ = self.terminate.recv() => ("SIGTERM", SignalKind::terminate()),
            _ = self.hangup.recv() => ("SIGHUP", SignalKind::hangup()),
        };
        Signal {
            name,
            number: kind.as_raw_value(),
        }
    }
}

#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn install() -> anyhow::Result<Signals> {
        Ok(Signals)
    }

    async fn next(&mut self) -> Signal {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        Signal {
            name: "Ctrl-C",
            number: 2,
        }
    }
}
