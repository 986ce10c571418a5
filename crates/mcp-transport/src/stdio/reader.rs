//! Reading a stdio server: stdout as newline-delimited messages within the
//! size cap, stderr into the bounded tail.

use std::collections::VecDeque;

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;

use crate::codec::Codec;
use crate::error::TransportErrorKind;
use crate::message::Incoming;
use crate::stderr_tail::StderrTail;

/// What the stdout reader reports.
pub(super) enum ReaderEvent {
    Message(Incoming),
    TooLarge,
    ReadError(String),
    Eof,
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

/// Reads stdout lines up to the cap. A longer line is drained without
/// buffering and reported once as too large (ending the connection).
///
/// Cancel-safe: the only await is `fill_buf` (which consumes nothing), and
/// the partial line and decoded-but-undelivered batch members live here.
#[derive(Debug)]
pub(super) struct LineReader {
    stdout: pipe::Receiver,
    buffer: ReadBuffer,
    line: Vec<u8>,
    too_large: bool,
    queued: VecDeque<Incoming>,
    finished: bool,
    codec: Codec,
    server: String,
}

impl LineReader {
    pub(super) fn new(stdout: pipe::Receiver, codec: Codec, server: String) -> Self {
        LineReader {
            stdout,
            buffer: ReadBuffer::default(),
            line: Vec::new(),
            too_large: false,
            queued: VecDeque::new(),
            finished: false,
            codec,
            server,
        }
    }

    pub(super) async fn next_event(&mut self) -> ReaderEvent {
        let max = self.codec.max_message_bytes();
        loop {
            if let Some(message) = self.queued.pop_front() {
                return ReaderEvent::Message(message);
            }
            if self.finished {
                return ReaderEvent::Eof;
            }
            let available = match self.buffer.fill_buf(&mut self.stdout).await {
                Ok(available) => available,
                Err(e) => return ReaderEvent::ReadError(e.to_string()),
            };
            if available.is_empty() {
                // End of stdout: a last line without a newline still counts.
                self.finished = true;
                if self.too_large {
                    return self.too_large_event();
                }
                let line = std::mem::take(&mut self.line);
                decode_line(&self.codec, &self.server, &line, &mut self.queued);
                continue;
            }
            let Some(index) = memchr_newline(available) else {
                let len = available.len();
                if !self.too_large {
                    if self.line.len() + len > max {
                        self.too_large = true;
                        self.line = Vec::new();
                    } else {
                        self.line.extend_from_slice(available);
                    }
                }
                self.buffer.consume(len);
                continue;
            };
            if self.too_large {
                self.buffer.consume(index + 1);
                return self.too_large_event();
            }
            if self.line.is_empty() {
                // The whole line is in the buffer: decode it in place.
                if index > max {
                    self.buffer.consume(index + 1);
                    return self.too_large_event();
                }
                decode_line(
                    &self.codec,
                    &self.server,
                    &available[..index],
                    &mut self.queued,
                );
            } else {
                if self.line.len() + index > max {
                    self.buffer.consume(index + 1);
                    return self.too_large_event();
                }
                self.line.extend_from_slice(&available[..index]);
                decode_line(&self.codec, &self.server, &self.line, &mut self.queued);
                self.line.clear();
            }
            self.buffer.consume(index + 1);
        }
    }

    /// Appends what is queued and every complete line already in the
    /// buffer, without reading: one wake-up of the driver takes a burst.
    /// Anything unusual (a partial line, a line past the cap) is left to
    /// [`LineReader::next_event`].
    pub(super) fn drain_buffered(&mut self, out: &mut Vec<Incoming>) {
        out.extend(self.queued.drain(..));
        let max = self.codec.max_message_bytes();
        while !self.finished && !self.too_large && self.line.is_empty() {
            let available = &self.buffer.bytes[self.buffer.start..self.buffer.end];
            let Some(index) = memchr_newline(available) else {
                break;
            };
            if index > max {
                break;
            }
            decode_line(&self.codec, &self.server, &available[..index], out);
            self.buffer.consume(index + 1);
        }
    }

    pub(super) fn too_large_event(&mut self) -> ReaderEvent {
        let max = self.codec.max_message_bytes();
        tracing::warn!(server = %self.server, max, "server sent a message past the size cap");
        self.too_large = false;
        self.line = Vec::new();
        self.finished = true;
        ReaderEvent::TooLarge
    }
}

/// Smallest and largest read from stdout.
const MIN_READ: usize = 4 * 1024;
const MAX_READ: usize = 64 * 1024;

/// Stdout bytes read but not yet consumed. It starts at [`MIN_READ`] bytes
/// and doubles, up to [`MAX_READ`], each time a read fills it: an idle
/// session holds a few KiB, a busy one reads in large chunks.
#[derive(Debug, Default)]
struct ReadBuffer {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl ReadBuffer {
    /// The unconsumed bytes, reading more when there are none; empty at the
    /// end of the stream. Cancel-safe: nothing is consumed.
    async fn fill_buf(&mut self, stdout: &mut pipe::Receiver) -> std::io::Result<&[u8]> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.bytes.is_empty() {
                self.bytes.resize(MIN_READ, 0);
            }
            let read = stdout.read(&mut self.bytes).await?;
            self.end = read;
            if read == self.bytes.len() && self.bytes.len() < MAX_READ {
                self.bytes.resize(self.bytes.len() * 2, 0);
            }
        }
        Ok(&self.bytes[self.start..self.end])
    }

    fn consume(&mut self, count: usize) {
        self.start = (self.start + count).min(self.end);
    }
}

/// Decodes one line into `out`; blank lines, non-JSON lines and invalid
/// messages are skipped (and logged), except that an answer among them
/// whose id can be found becomes an error answer to that request.
fn decode_line(codec: &Codec, server: &str, line: &[u8], out: &mut impl LineSink) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let before = out.count();
    match codec.decode_incoming(line, out) {
        Ok(()) => {}
        Err(TransportErrorKind::NotJson { reason }) if out.count() == before => {
            tracing::info!(server = %server, %reason, "skipping a stdout line that is not JSON");
        }
        Err(error) => {
            // The requests the line answered fail now, saying why (the
            // salvaged error answers are already in `out`).
            tracing::warn!(server = %server, %error, "skipping an invalid message");
        }
    }
}

/// Where decoded lines go: the reader's queue or the driver's batch.
trait LineSink: Extend<Incoming> {
    fn count(&self) -> usize;
}

impl LineSink for VecDeque<Incoming> {
    fn count(&self) -> usize {
        self.len()
    }
}

impl LineSink for Vec<Incoming> {
    fn count(&self) -> usize {
        self.len()
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

/// Keeps the last bytes of stderr; logs each chunk at trace level.
pub(super) async fn read_stderr(mut stderr: pipe::Receiver, tail: StderrTail, server: String) {
    // Most servers are quiet: an idle session holds a small buffer, and one
    // that fills it grows it (up to the size a chatty server needs).
    const FIRST: usize = 512;
    const MOST: usize = 8 * 1024;
    let mut buffer = Vec::with_capacity(FIRST);
    loop {
        buffer.clear();
        match stderr.read_buf(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                tracing::trace!(server = %server, bytes = n, "server stderr");
                tail.push(&buffer[..n]);
                if n == buffer.capacity() && n < MOST {
                    buffer.reserve_exact((2 * n).min(MOST) - n);
                }
            }
        }
    }
}
