//! The stdio writer's queue: encoded messages on their way to a child's
//! stdin.
//!
//! Callers encode their message into one shared byte buffer under a short
//! lock, so the wire order is the order of the calls. When the pipe is idle
//! and the caller says it is the only one with a request in flight, it
//! writes its bytes itself with one non-blocking `write` (no task hand-off
//! on the latency path). Otherwise, or when the pipe is full, the bytes stay
//! queued and the writer task sends everything queued with one `write`, so
//! many requests in flight cost one syscall, not one each. A caller never
//! awaits the pipe: a partly written buffer is always finished by the writer
//! task, so a cancelled caller cannot tear a line.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::net::unix::pipe;
use tokio::sync::Notify;

use crate::codec::Codec;
use crate::message::JsonRpcMessage;
use crate::transport::EncodingQueue;

/// A queue buffer grown past this (by a huge message) is released once
/// written instead of being kept for reuse.
const KEPT_CAPACITY: usize = 64 * 1024;

/// The shared outgoing queue of one stdio child.
pub(crate) struct Outbox {
    state: Mutex<State>,
    /// Wakes the writer task when bytes are queued or closing begins.
    wake: Notify,
}

struct State {
    /// Encoded messages, newline-terminated, not yet handed to the pipe.
    queued: Vec<u8>,
    /// The child's stdin; dropped (closing it) when the writer stops.
    pipe: Option<Arc<pipe::Sender>>,
    /// The writer task holds a batch it has not finished writing; callers
    /// must not write past it.
    writing: bool,
    /// Closing began: what is queued is still written, later messages are
    /// dropped.
    closing: bool,
    /// The writer stopped: later messages are refused.
    stopped: bool,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("Outbox")
            .field("queued_bytes", &state.queued.len())
            .field("writing", &state.writing)
            .field("closing", &state.closing)
            .field("stopped", &state.stopped)
            .finish()
    }
}

impl Outbox {
    pub(crate) fn new(pipe: pipe::Sender) -> Arc<Outbox> {
        Arc::new(Outbox {
            state: Mutex::new(State {
                queued: Vec::new(),
                pipe: Some(Arc::new(pipe)),
                writing: false,
                closing: false,
                stopped: false,
            }),
            wake: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        crate::lock(&self.state)
    }

    /// Queues one message. With `write_now`, an idle pipe gets the bytes at
    /// once from the caller's thread; otherwise the writer task sends them
    /// together with whatever else is queued by then. Fails (handing the
    /// message back) once the writer stopped; after closing began the
    /// message is dropped.
    #[allow(clippy::result_large_err)]
    pub(crate) fn send(
        &self,
        message: JsonRpcMessage,
        write_now: bool,
    ) -> Result<(), JsonRpcMessage> {
        self.push_encoded(
            &mut |out| Codec::encode_serialized_into(&message, out),
            write_now,
        )
        .map_err(|()| message)
    }

    /// [`Outbox::send`] of the message `encode` writes (at once, so the
    /// caller keeps what it wrote from): appended to the queue with a
    /// newline, then written or left for the writer as [`Outbox::send`]
    /// says; `Err` once the writer stopped.
    fn push_encoded(
        &self,
        encode: &mut dyn FnMut(&mut Vec<u8>),
        write_now: bool,
    ) -> Result<(), ()> {
        let mut state = self.lock();
        if state.stopped {
            return Err(());
        }
        if state.closing {
            return Ok(());
        }
        let was_idle = state.queued.is_empty() && !state.writing;
        encode(&mut state.queued);
        state.queued.push(b'\n');
        if !was_idle {
            // The writer is busy or already woken; it will see these bytes.
            return Ok(());
        }
        if write_now && let Some(pipe) = &state.pipe {
            // A failed write leaves the bytes queued; the writer task meets
            // the same error and stops.
            if let Ok(written) = pipe.try_write(&state.queued) {
                if written == state.queued.len() {
                    state.queued.clear();
                    if state.queued.capacity() > KEPT_CAPACITY {
                        state.queued = Vec::new();
                    }
                    return Ok(());
                }
                state.queued.drain(..written);
            }
        }
        drop(state);
        self.wake.notify_one();
        Ok(())
    }

    /// Begins closing: the writer sends what is queued, then closes stdin.
    pub(crate) fn close(&self) {
        self.lock().closing = true;
        self.wake.notify_one();
    }

    /// Stops at once: nothing more is written and stdin is released.
    pub(crate) fn stop(&self) {
        let mut state = self.lock();
        state.stopped = true;
        state.pipe = None;
        state.queued = Vec::new();
    }

    /// The writer task: sends queued bytes in batches until closing (after
    /// the last queued byte) or a write error, then closes stdin.
    pub(crate) async fn run_writer(self: Arc<Self>) {
        let mut batch = Vec::new();
        loop {
            let pipe = {
                let mut state = self.lock();
                if state.stopped {
                    break;
                }
                if state.queued.is_empty() {
                    if state.closing {
                        break;
                    }
                    None
                } else {
                    std::mem::swap(&mut batch, &mut state.queued);
                    state.writing = true;
                    state.pipe.clone()
                }
            };
            let Some(pipe) = pipe else {
                self.wake.notified().await;
                continue;
            };
            let written = write_all(&pipe, &batch).await;
            drop(pipe);
            batch.clear();
            if batch.capacity() > KEPT_CAPACITY {
                batch = Vec::new();
            }
            self.lock().writing = false;
            if let Err(e) = written {
                tracing::debug!(error = %e, "writing to server stdin failed");
                break;
            }
        }
        self.stop();
    }
}

async fn write_all(pipe: &pipe::Sender, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        pipe.writable().await?;
        match pipe.try_write(bytes) {
            Ok(written) => bytes = &bytes[written..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl EncodingQueue for Outbox {
    fn push(&self, encode: &mut dyn FnMut(&mut Vec<u8>), alone: bool) -> Result<(), ()> {
        self.push_encoded(encode, alone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::RequestId;
    use serde_json::json;
    use tokio::io::AsyncReadExt;

    fn request(id: i64, text: String) -> JsonRpcMessage {
        JsonRpcMessage::request(
            RequestId::Number(id),
            "tools/call",
            Some(json!({"name": "echo", "arguments": {"text": text}})),
        )
    }

    /// The ids of the newline-framed requests in `bytes`, in wire order.
    fn ids(bytes: &[u8]) -> Vec<i64> {
        bytes
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| {
                let value: serde_json::Value = serde_json::from_slice(line).unwrap();
                value["id"].as_i64().unwrap()
            })
            .collect()
    }

    #[tokio::test]
    async fn a_message_larger_than_the_pipe_keeps_its_place_and_close_flushes() {
        let (sender, mut receiver) = pipe::pipe().unwrap();
        let outbox = Outbox::new(sender);
        let writer = tokio::spawn(Arc::clone(&outbox).run_writer());
        let reader = tokio::spawn(async move {
            let mut bytes = Vec::new();
            receiver.read_to_end(&mut bytes).await.unwrap();
            bytes
        });
        // 1 MiB does not fit a pipe: the caller's write is partial and the
        // writer finishes it; later messages, sent alone or not, follow it.
        outbox.send(request(0, "x".repeat(1 << 20)), true).unwrap();
        for id in 1..200 {
            outbox
                .send(request(id, format!("{id}")), id % 2 == 0)
                .unwrap();
        }
        outbox.close();
        // After closing began, messages are dropped, not refused.
        assert!(outbox.send(request(999, String::new()), true).is_ok());
        writer.await.unwrap();
        let bytes = reader.await.unwrap();
        assert_eq!(ids(&bytes), (0..200).collect::<Vec<_>>());
        // Once the writer stopped, messages are refused.
        assert!(outbox.send(request(1000, String::new()), true).is_err());
    }

    #[tokio::test]
    async fn a_lone_message_on_an_idle_pipe_is_written_without_the_writer() {
        let (sender, mut receiver) = pipe::pipe().unwrap();
        // As for a running session: the reactor has seen the pipe writable
        // (until then a caller's write finds it "busy" and leaves the bytes
        // to the writer).
        sender.writable().await.unwrap();
        let outbox = Outbox::new(sender);
        // No writer task runs: only the caller's own write can deliver it.
        outbox.send(request(7, "hi".to_string()), true).unwrap();
        let mut bytes = vec![0u8; 4096];
        let read = receiver.read(&mut bytes).await.unwrap();
        assert_eq!(ids(&bytes[..read]), vec![7]);
        // Not alone: it waits for the writer, which is not running.
        outbox.send(request(8, "hi".to_string()), false).unwrap();
        assert!(receiver.try_read(&mut bytes).is_err());
        tokio::spawn(Arc::clone(&outbox).run_writer());
        let read = receiver.read(&mut bytes).await.unwrap();
        assert_eq!(ids(&bytes[..read]), vec![8]);
    }
}
