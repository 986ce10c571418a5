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

/// 2 for errors in what the user typed, 1 for everything else.
pub(crate) fn exit_status(err: &anyhow::Error) -> u8 {
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
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut stdout, value)?;
    writeln!(stdout)?;
    Ok(())
}
