//! The one error type of this crate: a [`GatewayError`] says what failed
//! in a [`GatewayErrorKind`] and keeps the I/O error as its source.
//! Requests a downstream client sends never fail the gateway: each gets a
//! JSON-RPC answer. What fails it is its own channel to that client.

use std::fmt;
use std::io;

/// Why serving a downstream client stopped.
#[derive(Debug)]
pub struct GatewayError {
    kind: GatewayErrorKind,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// What failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GatewayErrorKind {
    /// Reading the downstream client's messages failed.
    Read,
    /// Writing to the downstream client failed.
    Write,
    /// Reading or storing the bearer token at this path failed.
    Token(String),
    /// Watching the configuration files failed.
    Watch,
}

impl GatewayError {
    pub(crate) fn io(kind: GatewayErrorKind, source: io::Error) -> Self {
        GatewayError {
            kind,
            source: Some(Box::new(source)),
        }
    }

    #[cfg(feature = "reload")]
    pub(crate) fn watch(source: notify::Error) -> Self {
        GatewayError {
            kind: GatewayErrorKind::Watch,
            source: Some(Box::new(source)),
        }
    }

    /// What failed.
    pub fn kind(&self) -> &GatewayErrorKind {
        &self.kind
    }
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            GatewayErrorKind::Read => write!(f, "reading from the downstream client failed"),
            GatewayErrorKind::Write => write!(f, "writing to the downstream client failed"),
            GatewayErrorKind::Token(path) => {
                write!(
                    f,
                    "reading or storing the gateway's bearer token at {path} failed"
                )
            }
            GatewayErrorKind::Watch => write!(f, "watching the configuration files failed"),
        }
    }
}

impl std::error::Error for GatewayError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}
