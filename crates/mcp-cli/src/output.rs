//! Printing: the one writer every byte the CLI prints passes through,
//! JSON documents, notes, error chains and exit statuses.
//!
//! What may reach a terminal is decided once, in [`escape`]: every byte
//! on stdout and stderr goes through [`Terminal`], which escapes every
//! character of that rule except the newlines that end the CLI's own
//! lines, whether the stream is a terminal or a pipe. Human output also
//! passes each outside value through [`shown`] (one line, newlines
//! escaped, cut at [`escape::LINE_CHARS`]) or [`shown_lines`]; JSON output
//! (`--json`, `--raw`) is written by [`escape::json_pretty`], which spells
//! those characters as `\uXXXX` inside its strings, so the document means
//! what the server sent and a pipe reader decodes the same value. Log
//! lines are written by [`LogWriter`], one escaped, cut line per event.
//! The only control sequences the CLI writes itself, the live lines'
//! clear-line and cursor-up, are built by [`Frame`].
//!
//! Bounds: a stderr line keeps its first [`STDERR_LINE_CHARS`]
//! characters; a kind of [`note`] (and a warning from one place in the
//! code) is shown [`NOTE_REPEATS`] times, the rest counted in one line at
//! the end ([`finish`]).

mod escape;

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Mutex;

pub(crate) use escape::{shown, shown_lines};

/// Standard output as `serve`'s protocol channel: JSON-RPC, one message
/// per line, each line passed through [`escape::json_line`], so a server's
/// text in it reaches a terminal (someone running `serve` by hand) only as
/// JSON escapes, and a client reads the same values.
pub(crate) fn protocol_output() -> ProtocolOutput {
    ProtocolOutput {
        stdout: tokio::io::stdout(),
        carry: Vec::new(),
        pending: Vec::new(),
    }
}

/// See [`protocol_output`]: complete lines are escaped and queued; bytes
/// after the last newline wait for the rest of their line.
pub(crate) struct ProtocolOutput {
    stdout: tokio::io::Stdout,
    carry: Vec<u8>,
    pending: Vec<u8>,
}

impl ProtocolOutput {
    /// Writes what is queued; ready once all of it is written.
    fn poll_pending(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        use tokio::io::AsyncWrite as _;
        while !self.pending.is_empty() {
            match std::pin::Pin::new(&mut self.stdout).poll_write(cx, &self.pending) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(written)) => {
                    self.pending.drain(..written);
                }
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for ProtocolOutput {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        use std::task::Poll;
        let this = self.get_mut();
        // Earlier lines go first; only then is more taken.
        match this.poll_pending(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
            Poll::Pending => return Poll::Pending,
        }
        this.carry.extend_from_slice(buf);
        if let Some(end) = this.carry.iter().rposition(|byte| *byte == b'\n') {
            let lines: Vec<u8> = this.carry.drain(..=end).collect();
            let text = String::from_utf8_lossy(&lines);
            for line in text.split_inclusive('\n') {
                this.pending
                    .extend_from_slice(escape::json_line(line).as_bytes());
            }
        }
        // Accepted: written by this call when it can be, else by the next
        // write or flush.
        let _ = this.poll_pending(cx);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        let this = self.get_mut();
        match this.poll_pending(cx) {
            Poll::Ready(Ok(())) => {
                tokio::io::AsyncWrite::poll_flush(std::pin::Pin::new(&mut this.stdout), cx)
            }
            other => other,
        }
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        let this = self.get_mut();
        match this.poll_pending(cx) {
            Poll::Ready(Ok(())) => {
                tokio::io::AsyncWrite::poll_shutdown(std::pin::Pin::new(&mut this.stdout), cx)
            }
            other => other,
        }
    }
}

use mcp_config::EditError;
use serde::Serialize;

/// How a verb ended when it did not fail outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Exit 0.
    Ok,
    /// Exit 1: the verb ran and found a failure it already reported.
    Failed,
}

pub(crate) use crate::cli::{UsageError, usage};

/// 128 + the signal's number when a signal ended the verb, 2 for errors
/// in what the user typed, 1 for everything else.
pub(crate) fn exit_status(err: &anyhow::Error) -> u8 {
    if let Some(interrupted) = err
        .chain()
        .find_map(|cause| cause.downcast_ref::<crate::connecting::Interrupted>())
    {
        return interrupted.exit_status();
    }
    let usage = err.chain().any(|cause| {
        cause.is::<UsageError>()
            || cause
                .downcast_ref::<EditError>()
                .is_some_and(EditError::is_invalid_input)
    });
    if usage { 2 } else { 1 }
}

/// `outer: inner: innermost`, without repeating a cause its parent already
/// quotes.
pub(crate) fn error_chain(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// Prints `value` as pretty JSON on stdout.
pub(crate) fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    let text = json_text(value)?;
    write_stdout(format_args!("{text}"));
    Ok(())
}

/// `value` as the pretty JSON the CLI prints: see [`escape::json_pretty`].
pub(crate) fn json_text(value: &impl Serialize) -> serde_json::Result<String> {
    escape::json_pretty(value)
}

/// Writes one line on stdout. A closed pipe (`mcp-cli list | head -1`)
/// ends the process quietly with status 0, as a reader that has seen
/// enough is not a failure.
pub(crate) fn write_stdout(text: std::fmt::Arguments<'_>) {
    let mut line = text.to_string();
    line.push('\n');
    let mut stdout = Terminal::stdout();
    let written = stdout
        .write_all(line.as_bytes())
        .and_then(|()| stdout.flush());
    if let Err(err) = written {
        exit_on_write_error(&err);
    }
}

fn exit_on_write_error(err: &std::io::Error) -> ! {
    if err.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    write_stderr(format_args!("error: cannot write to stdout: {err}"));
    std::process::exit(1);
}

/// `println!` that survives a closed pipe; see [`write_stdout`].
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*))
    };
}
pub(crate) use outln;

/// Writes one line on stderr; a closed stderr is ignored rather than fatal.
pub(crate) fn write_stderr(text: std::fmt::Arguments<'_>) {
    let mut line = text.to_string();
    line.push('\n');
    let _ = Terminal::stderr().write_all(line.as_bytes());
}

/// `eprintln!` that never panics; see [`write_stderr`].
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::write_stderr(format_args!($($arg)*))
    };
}
pub(crate) use errln;

/// The CLI's two output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    /// Whether the stream is a terminal (live lines and questions are
    /// only for one; escaping does not depend on it).
    pub(crate) fn is_terminal(self) -> bool {
        use std::io::IsTerminal as _;
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }

    /// The only raw write: [`Terminal`] and [`Frame`] hand it bytes they
    /// made safe. One lock per call, so a line is never split by
    /// another thread's.
    fn write_safe(self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Stream::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
            Stream::Stderr => {
                let mut out = std::io::stderr().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
        }
    }
}

/// What secret values are shown as.
pub(crate) const REDACTED: &str = "***";

/// Replaces every value of a server entry's `env` and `headers` with
/// [`REDACTED`].
pub(crate) fn redact(entry: &mut serde_json::Value) {
    for field in ["env", "headers"] {
        if let Some(serde_json::Value::Object(values)) = entry.get_mut(field) {
            for value in values.values_mut() {
                *value = serde_json::Value::from(REDACTED);
            }
        }
    }
}

/// Characters of one line on stderr (notes, warnings, errors, questions);
/// the rest of the line is left out and named. Each outside value in it
/// is already cut at [`escape::LINE_CHARS`]; this bounds a line that
/// quotes several.
pub(crate) const STDERR_LINE_CHARS: usize = 16_384;

/// The one writer to stdout and stderr: every character of the rule in
/// [`escape`] except a newline is written escaped, bytes that are not
/// UTF-8 as `\xNN`, and a stderr line is cut at [`STDERR_LINE_CHARS`].
/// A character split across two writes is held until it is whole.
#[derive(Debug)]
pub(crate) struct Terminal {
    stream: Stream,
    /// The start of a character whose other bytes are still to come.
    partial: Vec<u8>,
    escaper: escape::Escaper,
    /// Characters written on the current line.
    line_chars: usize,
    /// Bytes left out of the current line.
    left_out: usize,
}

impl Terminal {
    pub(crate) fn stdout() -> Terminal {
        Terminal::new(Stream::Stdout)
    }

    pub(crate) fn stderr() -> Terminal {
        Terminal::new(Stream::Stderr)
    }

    fn new(stream: Stream) -> Terminal {
        Terminal {
            stream,
            partial: Vec::new(),
            escaper: escape::Escaper::default(),
            line_chars: 0,
            left_out: 0,
        }
    }

    fn render(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            if c == '\n' {
                self.end_line(out);
                out.push('\n');
                continue;
            }
            if self.stream == Stream::Stderr && self.line_chars >= STDERR_LINE_CHARS {
                self.left_out += c.len_utf8();
                continue;
            }
            self.line_chars += 1;
            if self.escaper.escapes(c) {
                escape::push_escaped(out, c);
            } else {
                out.push(c);
            }
        }
    }

    fn render_invalid(&mut self, bytes: &[u8], out: &mut String) {
        for byte in bytes {
            self.line_chars += 1;
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }

    fn end_line(&mut self, out: &mut String) {
        if self.left_out > 0 {
            escape::push_cut(out, self.left_out);
        }
        self.left_out = 0;
        self.line_chars = 0;
        self.escaper = escape::Escaper::default();
    }
}

impl Write for Terminal {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut bytes = std::mem::take(&mut self.partial);
        bytes.extend_from_slice(buf);
        let mut out = String::with_capacity(bytes.len());
        let mut rest: &[u8] = &bytes;
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.render(text, &mut out);
                    rest = &[];
                    break;
                }
                Err(err) => {
                    let (valid, after) = rest.split_at(err.valid_up_to());
                    self.render(std::str::from_utf8(valid).unwrap_or_default(), &mut out);
                    let Some(invalid) = err.error_len() else {
                        // An incomplete character: the next write may end it.
                        rest = after;
                        break;
                    };
                    let (invalid, after) = after.split_at(invalid.min(after.len()));
                    self.render_invalid(invalid, &mut out);
                    rest = after;
                }
            }
        }
        self.partial = rest.to_vec();
        self.stream.write_safe(out.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.write_safe(&[])
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let mut out = String::new();
        let partial = std::mem::take(&mut self.partial);
        self.render_invalid(&partial, &mut out);
        if self.left_out > 0 {
            escape::push_cut(&mut out, self.left_out);
        }
        if !out.is_empty() {
            let _ = self.stream.write_safe(out.as_bytes());
        }
    }
}

/// A live status line or block, drawn over itself on a terminal: the
/// only place the CLI writes control sequences of its own. Text added
/// to it is escaped like everything else.
#[derive(Debug, Default)]
pub(crate) struct Frame {
    bytes: String,
}

impl Frame {
    /// Back to the start of the line, and the line cleared.
    pub(crate) fn clear_line(mut self) -> Frame {
        self.bytes.push_str("\r\x1b[2K");
        self
    }

    /// Up `lines` lines, to the start of a block drawn before.
    pub(crate) fn up(mut self, lines: usize) -> Frame {
        if lines > 0 {
            self.bytes.push_str(&format!("\x1b[{lines}F"));
        }
        self
    }

    /// Text: the CLI's newlines kept, every other character of the rule
    /// escaped, each line cut at [`escape::LINE_CHARS`].
    pub(crate) fn text(mut self, text: &str) -> Frame {
        let mut first = true;
        for line in text.split('\n') {
            if !first {
                self.bytes.push('\n');
            }
            first = false;
            self.bytes.push_str(&shown(line));
        }
        self
    }

    /// Writes the frame; a terminal that went away is not an error here.
    pub(crate) fn draw(self, stream: Stream) {
        let _ = stream.write_safe(self.bytes.as_bytes());
    }
}

/// How many notes of one kind (and warnings from one place in the code)
/// are shown; the rest are counted and named once by [`finish`].
pub(crate) const NOTE_REPEATS: usize = 3;

/// How many notes of each kind were asked for, by kind.
static NOTES: Mutex<BTreeMap<&'static str, usize>> = Mutex::new(BTreeMap::new());

/// Counts one note of `kind`; true while it is among the first
/// [`NOTE_REPEATS`].
fn counted(kind: &'static str) -> bool {
    let mut notes = NOTES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let seen = notes.entry(kind).or_default();
    *seen += 1;
    *seen <= NOTE_REPEATS
}

/// Writes a note on stderr unless [`NOTE_REPEATS`] of its `kind` were
/// already shown. `kind` names the notes in the summary: "input requests
/// declined".
pub(crate) fn note(kind: &'static str, text: std::fmt::Arguments<'_>) {
    if counted(kind) {
        write_stderr(text);
    }
}

/// The summary of notes not shown: `note: … and 1997 more like this
/// (input requests declined)`. Called once, at the end of the run.
pub(crate) fn finish() {
    let notes = std::mem::take(
        &mut *NOTES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for (kind, seen) in notes {
        if seen > NOTE_REPEATS {
            write_stderr(format_args!(
                "note: … and {} more like this ({kind})",
                seen - NOTE_REPEATS
            ));
        }
    }
}

/// The log subscriber's writer: one event is one line, escaped whole
/// (a newline in a quoted value too) and cut like any outside value; a
/// warning or error from one place in the code is counted like a note.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LogWriter;

/// One log event being formatted.
#[derive(Debug)]
pub(crate) struct LogLine {
    text: Vec<u8>,
    shown: bool,
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogLine;

    fn make_writer(&'a self) -> LogLine {
        LogLine {
            text: Vec::new(),
            shown: true,
        }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> LogLine {
        let shown = *meta.level() > tracing::Level::WARN || counted(log_kind(meta));
        LogLine {
            text: Vec::new(),
            shown,
        }
    }
}

/// The kind a warning is counted under: the place in the code it comes
/// from, as the summary names it.
fn log_kind(meta: &tracing::Metadata<'_>) -> &'static str {
    // A callsite's name is `event path/file.rs:LINE`, static for every
    // `tracing` macro.
    let name: &'static str = meta.name();
    name.strip_prefix("event ").unwrap_or(name)
}

impl Write for LogLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.shown {
            self.text.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        if !self.shown || self.text.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.text);
        write_stderr(format_args!("{}", shown(text.trim_end_matches('\n'))));
    }
}
