//! The receiving side the network transports (streamable HTTP, legacy SSE,
//! WebSocket) share: background tasks read the wire and hand what they
//! decode to an [`Inbox`] through a [`Delivery`]; the transport's
//! `receive` reads the inbox.
//!
//! Reading on tasks and handing over through a channel is what keeps
//! `receive` cancel-safe. The inbox owns the tasks: they are aborted when
//! it is closed, when a task reports the connection lost, and when the
//! transport is dropped, so no reader outlives its connection.

// Each remote kind uses its own part of this module; with some of them
// compiled out, the rest goes unused.
#![cfg_attr(
    not(all(feature = "streamable-http", feature = "sse", feature = "ws")),
    allow(dead_code)
)]

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::codec::Codec;
use crate::error::TransportError;
use crate::http::decode_payload;
use crate::lock;
use crate::message::{Incoming, JsonRpcMessage};

type Inbound = Result<Incoming, TransportError>;

/// Messages from the server, and the tasks that read them.
#[derive(Debug)]
pub(crate) struct Inbox {
    incoming: mpsc::UnboundedReceiver<Inbound>,
    tasks: Tasks,
    closed: bool,
    /// A lost connection found behind a batch, reported by the next call.
    deferred: Option<TransportError>,
}

/// The handle tasks deliver into an [`Inbox`] with.
#[derive(Debug, Clone)]
pub(crate) struct Delivery {
    server: Arc<str>,
    incoming: mpsc::UnboundedSender<Inbound>,
}

/// The tasks of one connection, aborted together (see [`Inbox`]). Tasks
/// may spawn more tasks through a clone.
#[derive(Debug, Clone)]
pub(crate) struct Tasks {
    running: Arc<Mutex<Running>>,
    /// The runtime the connection was made on: its tasks run there even
    /// when a caller's task starts them (a modern HTTP request).
    runtime: Option<tokio::runtime::Handle>,
}

impl Default for Tasks {
    fn default() -> Self {
        Tasks {
            running: Arc::default(),
            runtime: tokio::runtime::Handle::try_current().ok(),
        }
    }
}

#[derive(Debug, Default)]
struct Running {
    handles: Vec<AbortHandle>,
    /// How many handles trigger the next sweep of finished ones: twice
    /// what the last sweep kept, so a spawn costs O(1) amortised however
    /// many requests are in flight.
    sweep_at: usize,
    /// Set by [`Tasks::abort_all`]: nothing is spawned after it.
    closed: bool,
}

impl Inbox {
    /// An empty inbox for `server`, and the handle to deliver into it.
    pub(crate) fn new(server: &str) -> (Inbox, Delivery) {
        let (tx, rx) = mpsc::unbounded_channel();
        let inbox = Inbox {
            incoming: rx,
            tasks: Tasks::default(),
            closed: false,
            deferred: None,
        };
        let delivery = Delivery {
            server: Arc::from(server),
            incoming: tx,
        };
        (inbox, delivery)
    }

    /// The task set the inbox aborts, for spawning readers.
    pub(crate) fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// The next delivery as it came (a result left raw), or the error
    /// deferred from the last batch; an error closes the inbox.
    async fn next(&mut self) -> Result<Option<Incoming>, TransportError> {
        if let Some(error) = self.deferred.take() {
            self.close();
            return Err(error);
        }
        if self.closed {
            return Ok(None);
        }
        match self.incoming.recv().await {
            Some(Ok(message)) => Ok(Some(message)),
            Some(Err(error)) => {
                self.close();
                Err(error)
            }
            None => Ok(None),
        }
    }

    /// [`crate::Transport::receive`] for the inbox: the next message
    /// and every other one already delivered (results left raw); `false`
    /// once closed. A lost connection is reported after the messages
    /// delivered before it, on the next call.
    pub(crate) async fn receive(
        &mut self,
        out: &mut Vec<Incoming>,
    ) -> Result<bool, TransportError> {
        let Some(first) = self.next().await? else {
            return Ok(false);
        };
        out.push(first);
        // No await from here on: still cancel-safe.
        while let Ok(next) = self.incoming.try_recv() {
            match next {
                Ok(message) => out.push(message),
                Err(error) => {
                    self.deferred = Some(error);
                    break;
                }
            }
        }
        Ok(true)
    }

    /// Stops every task; `receive` returns `Ok(None)` from now on.
    pub(crate) fn close(&mut self) {
        self.closed = true;
        self.tasks.abort_all();
    }

    /// Whether [`Inbox::close`] ran (or a task reported the connection lost).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        self.tasks.abort_all();
    }
}

impl Delivery {
    /// Hands one message to the inbox; false once the inbox is gone (the
    /// transport was dropped), when a reader should stop.
    pub(crate) fn message(&self, message: JsonRpcMessage) -> bool {
        self.incoming(Incoming::Message(message))
    }

    /// [`Delivery::message`] for a message whose result may still be raw.
    pub(crate) fn incoming(&self, message: Incoming) -> bool {
        self.incoming.send(Ok(message)).is_ok()
    }

    /// Ends the connection with `error`.
    pub(crate) fn lost(&self, error: TransportError) {
        let _ = self.incoming.send(Err(error));
    }

    /// Decodes one frame or event (`what`, for the log) and delivers its
    /// messages; false once the inbox is gone.
    pub(crate) fn payload(&self, payload: &[u8], what: &str) -> bool {
        let mut messages = Vec::new();
        if let Err(error) = Codec::default().decode_incoming(payload, &mut messages) {
            tracing::warn!(server = %self.server, %error, "skipping an undecodable {what}");
        }
        messages.into_iter().all(|message| self.incoming(message))
    }

    /// The messages of one frame or event; an undecodable one is logged
    /// and yields what could be saved (error answers for the requests it
    /// answered, the good elements of a batch).
    pub(crate) fn decode(&self, payload: &[u8], what: &str) -> Vec<JsonRpcMessage> {
        decode_payload(payload).unwrap_or_else(|undecodable| {
            tracing::warn!(server = %self.server, error = %undecodable.error, "skipping an undecodable {what}");
            undecodable.salvaged
        })
    }
}

impl Tasks {
    /// Runs `task` until it ends or the set is aborted; the handle stops
    /// it alone (closing a request's response stream cancels it). `None`,
    /// and nothing runs, once the set was aborted: the connection closed.
    pub(crate) fn spawn(
        &self,
        task: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Option<AbortHandle> {
        let mut running = lock(&self.running);
        if running.closed {
            return None;
        }
        // Boxed: a request's future is a few kilobytes, which tokio would
        // otherwise copy into its task and over again when the task ends.
        let task = Box::pin(task);
        // Spawned under the lock, so `abort_all` cannot miss it.
        let handle = match &self.runtime {
            Some(runtime) => runtime.spawn(task),
            None => tokio::spawn(task),
        }
        .abort_handle();
        if running.handles.len() >= running.sweep_at {
            running.handles.retain(|t| !t.is_finished());
            running.sweep_at = (running.handles.len() * 2).max(SWEEP_AT_LEAST);
        }
        running.handles.push(handle.clone());
        Some(handle)
    }

    fn abort_all(&self) {
        let mut running = lock(&self.running);
        running.closed = true;
        for task in running.handles.drain(..) {
            task.abort();
        }
    }
}

/// The fewest handles kept before finished ones are swept out.
const SWEEP_AT_LEAST: usize = 16;
