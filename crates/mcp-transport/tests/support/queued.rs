//! One message at a time from a transport, whose `receive` hands over
//! every message it has at hand: the rest of a batch waits for the next
//! call.

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};

use mcp_transport::{Incoming, JsonRpcMessage, Transport, TransportError};

pub(crate) struct Queued<T> {
    transport: T,
    queued: VecDeque<JsonRpcMessage>,
}

impl<T: Transport> Queued<T> {
    pub(crate) fn new(transport: T) -> Self {
        Queued {
            transport,
            queued: VecDeque::new(),
        }
    }

    /// The transport itself (nothing may be queued).
    pub(crate) fn into_inner(self) -> T {
        self.transport
    }

    /// The next message, `None` once the server closed. Cancel-safe, as the
    /// transport's `receive` is.
    pub(crate) async fn receive(&mut self) -> Result<Option<JsonRpcMessage>, TransportError> {
        if let Some(message) = self.queued.pop_front() {
            return Ok(Some(message));
        }
        let mut batch = Vec::new();
        if !self.transport.receive(&mut batch).await? {
            return Ok(None);
        }
        self.queued
            .extend(batch.into_iter().map(Incoming::into_message));
        Ok(self.queued.pop_front())
    }
}

impl<T> Deref for Queued<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.transport
    }
}

impl<T> DerefMut for Queued<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.transport
    }
}
