//! What a stdio server wrote on stderr, kept bounded for its errors.
//!
//! [`StderrTail`] keeps the last [`STDERR_TAIL_BYTES`] (REFERENCE §2), and
//! besides them the first line that looks like an error
//! ([`looks_like_error`]) with a few lines of context. Servers often print
//! their error and then a page of usage text (kubernetes-mcp-server: one
//! `Error: …` line, then forty lines of flags); a flood of output can push
//! the error out of the tail, so the kept context survives it. The scan
//! runs only until that context is complete, and every kept line is cut at
//! [`CONTEXT_LINE_BYTES`], so memory stays bounded whatever the child
//! writes. [`StderrTail::report`] is the text errors carry.
//!
//! [`stderr_excerpt`] is how a tail is shown: whole when it is short, else the
//! first error-looking line with a little context, a `…` line, and the
//! last lines, bounded in lines and bytes.
//!
//! A stdio transport may also attach a note for a server that wrote
//! nothing at all ([`StderrTail::silence_note`]): a connect timeout with an
//! empty stderr then says what in the environment may be missing.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How many bytes of a child's stderr are kept.
pub const STDERR_TAIL_BYTES: usize = 64 * 1024;

/// Lines kept before the first error-looking line.
const CONTEXT_BEFORE: usize = 2;
/// Lines kept after it.
const CONTEXT_AFTER: usize = 3;
/// The longest kept context line, in bytes (the rest of the line is cut).
pub(crate) const CONTEXT_LINE_BYTES: usize = 512;

/// What a line is marked with when it starts an excerpt's gap.
pub(crate) const GAP: &str = "…";

/// Words (compared in lowercase) that make a line look like an error.
const ERROR_WORDS: &[&str] = &[
    "error",
    "fatal",
    "panic",
    "exception",
    "traceback",
    "denied",
    "not found",
    "failed",
    "cannot",
    "can't",
    "unable to",
    "refused",
    "no such",
    "unknown flag",
    "unknown command",
    "unauthorized",
    "forbidden",
    "enoent",
    "eacces",
    "econnrefused",
    "etimedout",
];

/// Whether `line` looks like an error message (case-insensitive).
pub(crate) fn looks_like_error(line: &str) -> bool {
    let line = line.to_lowercase();
    ERROR_WORDS.iter().any(|word| line.contains(word))
}

/// A bounded record of a child's stderr, shared between the reader task
/// and whoever builds an error.
#[derive(Debug, Clone, Default)]
pub struct StderrTail {
    inner: Arc<Mutex<Inner>>,
    silence_note: Option<Arc<str>>,
}

#[derive(Debug, Default)]
struct Inner {
    /// The last bytes.
    tail: VecDeque<u8>,
    /// Every byte ever pushed.
    written: u64,
    /// The line being read (cut at [`CONTEXT_LINE_BYTES`]).
    line: Vec<u8>,
    /// Where the line being read starts.
    line_start: u64,
    /// The last complete lines before it, with where each starts.
    recent: VecDeque<(u64, Vec<u8>)>,
    /// The first error-looking line and its context, once seen.
    context: Option<Context>,
}

#[derive(Debug)]
struct Context {
    /// Where its first line starts.
    start: u64,
    lines: Vec<Vec<u8>>,
    /// Lines still to be kept after the error line.
    after: usize,
}

impl Inner {
    fn scanning(&self) -> bool {
        self.context.as_ref().is_none_or(|c| c.after > 0)
    }

    fn scan(&mut self, bytes: &[u8]) {
        let mut offset = self.written;
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            if !self.scanning() {
                return;
            }
            let (text, ends) = match chunk.strip_suffix(b"\n") {
                Some(text) => (text, true),
                None => (chunk, false),
            };
            let room = CONTEXT_LINE_BYTES.saturating_sub(self.line.len());
            self.line.extend_from_slice(&text[..text.len().min(room)]);
            offset += chunk.len() as u64;
            if ends {
                let line = std::mem::take(&mut self.line);
                self.end_line(line);
                self.line_start = offset;
            }
        }
    }

    fn end_line(&mut self, mut line: Vec<u8>) {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        match &mut self.context {
            Some(context) => {
                context.lines.push(line);
                context.after -= 1;
            }
            None if looks_like_error(&String::from_utf8_lossy(&line)) => {
                let start = self.recent.front().map_or(self.line_start, |(at, _)| *at);
                let mut lines: Vec<Vec<u8>> = self.recent.drain(..).map(|(_, line)| line).collect();
                lines.push(line);
                self.context = Some(Context {
                    start,
                    lines,
                    after: CONTEXT_AFTER,
                });
            }
            None => {
                self.recent.push_back((self.line_start, line));
                if self.recent.len() > CONTEXT_BEFORE {
                    self.recent.pop_front();
                }
            }
        }
    }
}

impl StderrTail {
    /// An empty tail whose [`StderrTail::silence_note`] is `note`.
    pub fn with_silence_note(note: impl Into<String>) -> StderrTail {
        StderrTail {
            inner: Arc::default(),
            silence_note: Some(Arc::from(note.into())),
        }
    }

    /// Appends bytes, dropping the oldest past the cap.
    pub fn push(&self, bytes: &[u8]) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if inner.scanning() {
            inner.scan(bytes);
        }
        inner.written += bytes.len() as u64;
        let bytes = if bytes.len() > STDERR_TAIL_BYTES {
            &bytes[bytes.len() - STDERR_TAIL_BYTES..]
        } else {
            bytes
        };
        let overflow = (inner.tail.len() + bytes.len()).saturating_sub(STDERR_TAIL_BYTES);
        inner.tail.drain(..overflow);
        inner.tail.extend(bytes);
    }

    /// The last bytes as text (invalid UTF-8 replaced).
    pub fn snapshot(&self) -> String {
        let Ok(inner) = self.inner.lock() else {
            return String::new();
        };
        tail_text(&inner.tail)
    }

    /// The text an error carries: the last bytes, preceded by the first
    /// error-looking line and its context and a `…` line when that
    /// line is no longer among them.
    pub fn report(&self) -> String {
        let Ok(inner) = self.inner.lock() else {
            return String::new();
        };
        let tail = tail_text(&inner.tail);
        let tail_start = inner.written - inner.tail.len() as u64;
        match &inner.context {
            Some(context) if context.start < tail_start => {
                let mut text = String::new();
                for line in &context.lines {
                    text.push_str(&String::from_utf8_lossy(line));
                    text.push('\n');
                }
                text.push_str(GAP);
                text.push('\n');
                // The tail was cut mid-line: start it at its next line.
                let tail = tail.split_once('\n').map_or("", |(_, rest)| rest);
                text.push_str(tail);
                text
            }
            _ => tail,
        }
    }

    /// The note set with [`StderrTail::with_silence_note`], while the child
    /// has written nothing but white space.
    pub fn silence_note(&self) -> Option<String> {
        let note = self.silence_note.as_deref()?;
        let inner = self.inner.lock().ok()?;
        inner
            .tail
            .iter()
            .all(u8::is_ascii_whitespace)
            .then(|| note.to_owned())
    }
}

fn tail_text(tail: &VecDeque<u8>) -> String {
    let (a, b) = tail.as_slices();
    let mut bytes = Vec::with_capacity(a.len() + b.len());
    bytes.extend_from_slice(a);
    bytes.extend_from_slice(b);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `text` (a stderr tail) as at most `max_lines` lines and about
/// `max_bytes` bytes: whole when it fits; else, when an error-looking line
/// lies before the last lines, that line with up to two lines before and
/// three after, a `…` line, and as many of the last lines as fit;
/// else the last lines. A line longer than 512 bytes is cut,
/// ending in `…`. Trailing white space is dropped.
pub fn stderr_excerpt(text: &str, max_lines: usize, max_bytes: usize) -> String {
    let lines: Vec<String> = text.trim_end().lines().map(cut_line).collect();
    if lines.is_empty() || max_lines == 0 {
        return String::new();
    }
    let mut chosen: Vec<&str> = Vec::new();
    let mut gap = None;
    if lines.len() <= max_lines {
        chosen.extend(lines.iter().map(String::as_str));
    } else {
        let tail_from = lines.len() - max_lines;
        let error = lines[..tail_from]
            .iter()
            .position(|line| line != GAP && looks_like_error(line));
        match error {
            // Room for the context, the gap and at least one last line.
            Some(at) if max_lines >= CONTEXT_AFTER + 3 => {
                let start = at.saturating_sub(CONTEXT_BEFORE);
                let end = (at + CONTEXT_AFTER + 1).min(lines.len());
                let head_len = (end - start).min(max_lines - 2);
                let end = start + head_len;
                let rest = max_lines - head_len - 1;
                let last_from = (lines.len() - rest).max(end);
                chosen.extend(lines[start..end].iter().map(String::as_str));
                if last_from > end {
                    gap = Some(chosen.len());
                    chosen.push(GAP);
                }
                chosen.extend(lines[last_from..].iter().map(String::as_str));
            }
            _ => chosen.extend(lines[tail_from..].iter().map(String::as_str)),
        }
    }
    // Over the byte budget: drop the oldest of the last lines first (just
    // after the gap, or the first line), keeping at least one line.
    let size = |lines: &[&str]| lines.iter().map(|l| l.len() + 1).sum::<usize>();
    while size(&chosen) > max_bytes && chosen.len() > 1 {
        let at = match gap {
            Some(g) if g + 1 < chosen.len() - 1 => g + 1,
            _ => 0,
        };
        chosen.remove(at);
        if let Some(g) = gap
            && at < g
        {
            gap = Some(g - 1);
        }
    }
    chosen.join("\n")
}

fn cut_line(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.len() <= CONTEXT_LINE_BYTES {
        return line.to_owned();
    }
    let mut end = CONTEXT_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{GAP}", &line[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(prefix: &str, n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("{prefix} {i}")).collect()
    }

    /// One excerpt case: the lines of `text` and the lines expected.
    #[track_caller]
    fn check(text: &[String], max_lines: usize, max_bytes: usize, expect: &[&str]) {
        let text = text.join("\n");
        let got = stderr_excerpt(&text, max_lines, max_bytes);
        assert_eq!(got.lines().collect::<Vec<_>>(), expect, "{text}");
        assert!(got.lines().count() <= max_lines, "{got}");
    }

    #[test]
    fn excerpts_show_the_first_error_then_the_last_lines() {
        let usage = numbered("  --flag", 40);
        let mut k8s = vec![
            "starting".to_owned(),
            "Error: unknown flag: --bogus".to_owned(),
        ];
        k8s.extend(usage.clone());
        // short: whole
        check(
            &k8s[..4],
            10,
            4096,
            &[
                "starting",
                "Error: unknown flag: --bogus",
                "  --flag 1",
                "  --flag 2",
            ],
        );
        // long: the error with its context, the gap, the last lines
        check(
            &k8s,
            10,
            4096,
            &[
                "starting",
                "Error: unknown flag: --bogus",
                "  --flag 1",
                "  --flag 2",
                "  --flag 3",
                GAP,
                "  --flag 37",
                "  --flag 38",
                "  --flag 39",
                "  --flag 40",
            ],
        );
        // no error-looking line: the last lines, as before
        check(
            &usage,
            3,
            4096,
            &["  --flag 38", "  --flag 39", "  --flag 40"],
        );
        // an error among the last lines needs no jump
        let mut late = usage.clone();
        late.push("panic: boom".to_owned());
        check(&late, 2, 4096, &["  --flag 40", "panic: boom"]);
        // case-insensitive, and the first error-looking line wins
        let mut two = vec!["FATAL one".to_owned(), "error two".to_owned()];
        two.extend(numbered("x", 20));
        check(
            &two,
            8,
            4096,
            &[
                "FATAL one",
                "error two",
                "x 1",
                "x 2",
                GAP,
                "x 18",
                "x 19",
                "x 20",
            ],
        );
        // too few lines for the context: the last lines
        check(
            &k8s,
            4,
            4096,
            &["  --flag 37", "  --flag 38", "  --flag 39", "  --flag 40"],
        );
        // the byte budget drops the oldest last lines first
        check(
            &k8s,
            10,
            90,
            &[
                "starting",
                "Error: unknown flag: --bogus",
                "  --flag 1",
                "  --flag 2",
                "  --flag 3",
                GAP,
                "  --flag 40",
            ],
        );
        // empty
        check(&[], 5, 100, &[]);
    }

    #[test]
    fn long_lines_are_cut() {
        let long = "e".repeat(CONTEXT_LINE_BYTES * 3);
        let got = stderr_excerpt(&long, 5, 100_000);
        assert_eq!(got.len(), CONTEXT_LINE_BYTES + GAP.len());
    }

    #[test]
    fn the_first_error_outlives_a_flood_and_memory_stays_bounded() {
        let tail = StderrTail::default();
        tail.push(b"booting\nloading config\n");
        tail.push(b"Error: cannot reach the cluster\nUsage:\n  server [flags]\n");
        tail.push(b"  --a\n  --b\n  --c\n");
        let flood = b"noise line\n".repeat(STDERR_TAIL_BYTES / 4);
        tail.push(&flood);
        tail.push(b"exiting\n");
        let report = tail.report();
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(
            lines[..7],
            [
                "booting",
                "loading config",
                "Error: cannot reach the cluster",
                "Usage:",
                "  server [flags]",
                "  --a",
                GAP,
            ]
        );
        assert_eq!(lines[7], "noise line");
        assert!(report.ends_with("noise line\nexiting\n"));
        assert!(report.len() <= STDERR_TAIL_BYTES + 7 * CONTEXT_LINE_BYTES);
        // the tail itself is only the last bytes, as before
        assert_eq!(tail.snapshot().len(), STDERR_TAIL_BYTES);
        // an error still inside the tail is not repeated
        let short = StderrTail::default();
        short.push(b"Error: x\nmore\n");
        assert_eq!(short.report(), "Error: x\nmore\n");
        // a huge error line is kept cut
        let huge = StderrTail::default();
        let mut line = b"fatal: ".to_vec();
        line.extend(vec![b'z'; STDERR_TAIL_BYTES * 2]);
        line.push(b'\n');
        huge.push(&line);
        huge.push(&flood);
        let report = huge.report();
        assert!(report.starts_with("fatal: zzz"), "{}", &report[..40]);
        assert_eq!(
            report.lines().next().map(str::len),
            Some(CONTEXT_LINE_BYTES)
        );
    }

    #[test]
    fn a_silence_note_shows_only_while_nothing_was_written() {
        let tail = StderrTail::with_silence_note("nothing on stderr");
        assert_eq!(tail.silence_note().as_deref(), Some("nothing on stderr"));
        tail.push(b"\n  \n");
        assert_eq!(tail.silence_note().as_deref(), Some("nothing on stderr"));
        tail.push(b"ready\n");
        assert_eq!(tail.silence_note(), None);
        assert_eq!(StderrTail::default().silence_note(), None);
    }
}
