//! Printing: JSON documents, error chains, exit statuses, and the one
//! place outside text is made safe for a terminal ([`shown`],
//! [`shown_lines`]).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;

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

/// A usage error: exit status 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct UsageError(pub(crate) String);

/// Builds a usage error (exit status 2).
pub(crate) fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// 128 + the signal's number when a signal ended the verb, 2 for errors
/// in what the user typed, 1 for everything else.
pub(crate) fn exit_status(err: &anyhow::Error) -> u8 {
    if let Some(interrupted) = err
        .chain()
        .find_map(|cause| cause.downcast_ref::<crate::session::Interrupted>())
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
    let text = serde_json::to_string_pretty(value)?;
    write_stdout(format_args!("{text}"));
    Ok(())
}

/// Writes one line on stdout. A closed pipe (`mcp-cli list | head -1`)
/// ends the process quietly with status 0, as a reader that has seen
/// enough is not a failure.
pub(crate) fn write_stdout(text: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_fmt(text)
        .and_then(|()| stdout.write_all(b"\n"))
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
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_fmt(text)
        .and_then(|()| stderr.write_all(b"\n"));
}

/// `eprintln!` that never panics; see [`write_stderr`].
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::write_stderr(format_args!($($arg)*))
    };
}
pub(crate) use errln;

/// Text from outside the CLI (config files, servers, an OAuth server) as
/// one line a terminal can show: every character that could move the
/// cursor, colour, retitle or clear the terminal, start a new line, or
/// reorder what is shown becomes a visible escape. Human output passes
/// every outside string through here (or [`shown_lines`]); `--json` output
/// does not, as serde already escapes it exactly.
///
/// - C0 controls and DEL: `\n`, `\r`, `\t`, else `\x1b`-style;
/// - C1 controls (U+0080–U+009F, such as the one-byte CSI U+009B):
///   `\u{9b}`;
/// - bidi overrides, embeddings, isolates and marks, line and paragraph
///   separators, zero-width characters and the BOM: `\u{202e}`.
///
/// Backslashes stay as they are: paths and patterns stay readable, and
/// `--json` is the exact form.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// [`shown`] for text that may span lines (descriptions, a tool's text
/// result, a stderr tail): newlines are kept, everything else is escaped
/// the same way.
pub(crate) fn shown_lines(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| needs_escape(c) && !(keep_newlines && c == '\n');
    let Some(first) = text.find(unsafe_char) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if !unsafe_char(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0'..='\u{1f}' | '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            _ => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            // Arabic letter mark; left-to-right and right-to-left marks
            '\u{061c}' | '\u{200e}' | '\u{200f}'
            // zero-width space, non-joiner, joiner
            | '\u{200b}'..='\u{200d}'
            // line and paragraph separators; bidi embeddings and overrides
            | '\u{2028}'..='\u{202e}'
            // word joiner, invisible operators, bidi isolates
            | '\u{2060}'..='\u{2069}'
            // byte order mark / zero-width no-break space
            | '\u{feff}'
        )
}

#[cfg(test)]
mod tests {
    use super::{shown, shown_lines};

    #[test]
    fn outside_text_is_shown_escaped() {
        let check = |text: &str, line: &str, lines: &str| {
            assert_eq!(shown(text), line, "shown({text:?})");
            assert_eq!(shown_lines(text), lines, "shown_lines({text:?})");
        };
        check("plain name", "plain name", "plain name");
        check(
            "ünï 😀 \\d+ C:\\x",
            "ünï 😀 \\d+ C:\\x",
            "ünï 😀 \\d+ C:\\x",
        );
        check("\u{1b}[31mred", r"\x1b[31mred", r"\x1b[31mred");
        check("\u{1b}]0;t\u{7}", r"\x1b]0;t\x07", r"\x1b]0;t\x07");
        check("a\nb", r"a\nb", "a\nb");
        check("a\r\nb", r"a\r\nb", "a\\r\nb");
        check("a\tb\0", r"a\tb\x00", r"a\tb\x00");
        check(
            "\u{7f}\u{9b}\u{85}",
            r"\x7f\u{9b}\u{85}",
            r"\x7f\u{9b}\u{85}",
        );
        check("\u{202e}exe.txt", r"\u{202e}exe.txt", r"\u{202e}exe.txt");
        check(
            "\u{2066}\u{2069}\u{200f}\u{061c}\u{200b}\u{2028}\u{feff}",
            r"\u{2066}\u{2069}\u{200f}\u{61c}\u{200b}\u{2028}\u{feff}",
            r"\u{2066}\u{2069}\u{200f}\u{61c}\u{200b}\u{2028}\u{feff}",
        );
    }
}
