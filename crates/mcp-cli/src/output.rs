//! Printing: JSON documents, error chains and exit statuses.

use std::io::Write;

use mcp_config::edit::EditError;
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
            || matches!(
                cause.downcast_ref::<EditError>(),
                Some(
                    EditError::InvalidName { .. }
                        | EditError::InvalidEntry { .. }
                        | EditError::InvalidPair { .. }
                )
            )
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
