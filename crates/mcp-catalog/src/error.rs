//! The one error type of this crate, shaped like ripgrep's: a
//! [`CatalogError`] names the server once and says what went wrong in a
//! [`CatalogErrorKind`]. A transport failure is kept whole as the error's
//! source (with its `is_fatal()` and stderr tail), never copied into text
//! or classified by it.
//!
//! Clone, so one failed in-flight build or connect can answer every caller
//! that shared it (sources sit behind `Arc`s for that).

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_transport::TransportError;

/// Why a catalog could not be built or a call could not be made.
#[derive(Debug, Clone)]
pub struct CatalogError {
    /// The server the error concerns; `None` for errors about a tool name,
    /// arguments or the whole runtime.
    server: Option<String>,
    kind: CatalogErrorKind,
}

/// What went wrong.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CatalogErrorKind {
    /// A server marked `required` failed, which fails the whole catalog.
    RequiredServerFailed {
        /// The failure of the required server.
        cause: Box<CatalogError>,
    },
    /// Connecting to the server failed or timed out.
    Connect {
        /// What failed: the transport, a timeout, a changed entry.
        cause: Cause,
    },
    /// A request to the connected server failed or timed out.
    Request {
        /// The method that failed (`tools/list`, `tools/call`, …).
        operation: String,
        /// What failed: the transport, a timeout, a malformed result.
        cause: Cause,
    },
    /// The server is paused after consecutive failures.
    Paused {
        /// Consecutive failures that paused it.
        failures: u32,
        /// Wall-clock time of the next try, RFC 3339 UTC.
        retry_at: String,
        /// How long until the next try.
        retry_in: Duration,
    },
    /// A schema cannot be expressed for a provider without changing what
    /// the arguments mean.
    Schema {
        /// JSON pointer into the normalised schema (`/` for its root).
        path: String,
        /// Why the schema cannot be expressed there.
        reason: String,
    },
    /// No tool of that name is in the catalog.
    UnknownTool {
        /// The name the model used.
        name: String,
    },
    /// The arguments do not match the tool's input schema.
    InvalidArguments {
        /// The catalog name of the tool.
        tool: String,
        /// JSON pointer of the failing value (`/` for the whole object).
        path: String,
        /// What the schema expected there.
        message: String,
    },
    /// The server is not configured (or was removed) in this session.
    UnknownServer,
    /// The runtime was shut down.
    ShutDown {
        /// The session id of the runtime.
        session: String,
    },
    /// A skill (SEP-2640) of the server cannot be used: a file failed
    /// verification against the skill's entry, or the entry does not
    /// allow the read.
    Skill {
        /// The skill's `SKILL.md` uri.
        skill: String,
        /// What is wrong with the file or the read.
        problem: String,
    },
}

/// Why a connect or a request failed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Cause {
    /// The transport failed.
    Transport(Arc<TransportError>),
    /// The step did not finish within this timeout.
    TimedOut(Duration),
    /// The server entry changed (or was removed) while connecting.
    EntryChanged,
    /// The server answered with a result of the wrong shape.
    InvalidResult(Arc<serde_json::Error>),
    /// Another failure, from a host's own [`crate::Connector`] or
    /// [`crate::Connection`], or from the runtime's build task.
    Other(Arc<dyn StdError + Send + Sync>),
}

impl Cause {
    /// A failure of a host's own connector or connection.
    pub fn other(error: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Cause::Other(Arc::from(error.into()))
    }
}

impl From<TransportError> for Cause {
    fn from(error: TransportError) -> Self {
        Cause::Transport(Arc::new(error))
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The transport's message starts with the server's name too; it
            // is shown whole rather than cut apart as text.
            Cause::Transport(error) => error.kind().fmt(f),
            Cause::TimedOut(after) => write!(f, "timed out after {} ms", after.as_millis()),
            Cause::EntryChanged => f.write_str("the server entry changed while connecting"),
            Cause::InvalidResult(error) => write!(f, "invalid result: {error}"),
            Cause::Other(error) => error.fmt(f),
        }
    }
}

impl Cause {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Cause::Transport(error) => Some(error.as_ref()),
            Cause::InvalidResult(error) => Some(error.as_ref()),
            Cause::Other(error) => Some(error.as_ref()),
            Cause::TimedOut(_) | Cause::EntryChanged => None,
        }
    }
}

impl CatalogError {
    /// An error of `kind`, about `server` when it concerns one.
    pub fn new(server: Option<String>, kind: CatalogErrorKind) -> Self {
        CatalogError { server, kind }
    }

    fn of(server: impl Into<String>, kind: CatalogErrorKind) -> Self {
        CatalogError::new(Some(server.into()), kind)
    }

    /// Connecting to `server` failed.
    pub fn connect(server: impl Into<String>, cause: impl Into<Cause>) -> Self {
        CatalogError::of(
            server,
            CatalogErrorKind::Connect {
                cause: cause.into(),
            },
        )
    }

    /// `operation` (a method name) on `server` failed.
    pub fn request(
        server: impl Into<String>,
        operation: impl Into<String>,
        cause: impl Into<Cause>,
    ) -> Self {
        CatalogError::of(
            server,
            CatalogErrorKind::Request {
                operation: operation.into(),
                cause: cause.into(),
            },
        )
    }

    /// The required server this error is about failed the catalog.
    pub fn required_server_failed(cause: CatalogError) -> Self {
        CatalogError {
            server: cause.server.clone(),
            kind: CatalogErrorKind::RequiredServerFailed {
                cause: Box::new(cause),
            },
        }
    }

    /// `server` is paused after `failures` failures in a row.
    pub fn paused(
        server: impl Into<String>,
        failures: u32,
        retry_at: String,
        retry_in: Duration,
    ) -> Self {
        CatalogError::of(
            server,
            CatalogErrorKind::Paused {
                failures,
                retry_at,
                retry_in,
            },
        )
    }

    /// A schema that cannot be expressed at `path`, for `reason`.
    pub fn schema(path: impl Into<String>, reason: impl Into<String>) -> Self {
        CatalogError::new(
            None,
            CatalogErrorKind::Schema {
                path: path.into(),
                reason: reason.into(),
            },
        )
    }

    /// No tool is called `name`.
    pub fn unknown_tool(name: impl Into<String>) -> Self {
        CatalogError::new(None, CatalogErrorKind::UnknownTool { name: name.into() })
    }

    /// The arguments for `tool` fail its schema at `path`.
    pub fn invalid_arguments(
        tool: impl Into<String>,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        CatalogError::new(
            None,
            CatalogErrorKind::InvalidArguments {
                tool: tool.into(),
                path: path.into(),
                message: message.into(),
            },
        )
    }

    /// `server` is not configured in this session.
    pub fn unknown_server(server: impl Into<String>) -> Self {
        CatalogError::of(server, CatalogErrorKind::UnknownServer)
    }

    /// `skill` of `server` cannot be used, for `problem`.
    pub fn skill(
        server: impl Into<String>,
        skill: impl Into<String>,
        problem: impl Into<String>,
    ) -> Self {
        CatalogError::of(
            server,
            CatalogErrorKind::Skill {
                skill: skill.into(),
                problem: problem.into(),
            },
        )
    }

    /// The runtime of `session` is shut down.
    pub fn shut_down(session: impl Into<String>) -> Self {
        CatalogError::new(
            None,
            CatalogErrorKind::ShutDown {
                session: session.into(),
            },
        )
    }

    /// The server this error concerns, if it concerns one.
    pub fn server(&self) -> Option<&str> {
        self.server.as_deref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &CatalogErrorKind {
        &self.kind
    }

    /// The transport's error behind this one, if the transport failed.
    pub fn transport_error(&self) -> Option<&TransportError> {
        match &self.kind {
            CatalogErrorKind::Connect {
                cause: Cause::Transport(error),
            }
            | CatalogErrorKind::Request {
                cause: Cause::Transport(error),
                ..
            } => Some(error),
            CatalogErrorKind::RequiredServerFailed { cause } => cause.transport_error(),
            _ => None,
        }
    }

    /// Whether the server's connection is unusable after this error: a
    /// failed connect, or a transport failure that ends the connection
    /// (as opposed to one failed request on a healthy connection).
    pub fn is_fatal(&self) -> bool {
        match &self.kind {
            CatalogErrorKind::Connect { .. } => true,
            CatalogErrorKind::Request {
                cause: Cause::Transport(error),
                ..
            } => error.is_fatal(),
            CatalogErrorKind::RequiredServerFailed { cause } => cause.is_fatal(),
            _ => false,
        }
    }
}

/// `server "name"` for the server an error concerns (empty when none).
struct Server<'a>(Option<&'a str>);

impl fmt::Display for Server<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(server) => write!(f, "server {server:?}"),
            None => f.write_str("the runtime"),
        }
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let server = Server(self.server.as_deref());
        match &self.kind {
            CatalogErrorKind::RequiredServerFailed { cause } => match &self.server {
                Some(name) => write!(f, "required server {name:?} failed: {cause}"),
                None => write!(f, "a required server failed: {cause}"),
            },
            CatalogErrorKind::Connect { cause } => write!(f, "{server}: connect failed: {cause}"),
            CatalogErrorKind::Request { operation, cause } => {
                write!(f, "{server}: {operation} failed: {cause}")
            }
            CatalogErrorKind::Paused {
                failures,
                retry_at,
                retry_in,
            } => write!(
                f,
                "{server} is paused after {failures} consecutive failures; next try at {retry_at} (in {} s)",
                retry_in.as_secs().max(1)
            ),
            CatalogErrorKind::Schema { path, reason } => write!(f, "{path}: {reason}"),
            CatalogErrorKind::UnknownTool { name } => write!(f, "unknown tool {name:?}"),
            CatalogErrorKind::InvalidArguments {
                tool,
                path,
                message,
            } => write!(
                f,
                "invalid arguments for tool {tool:?} at {path}: {message}"
            ),
            CatalogErrorKind::UnknownServer => {
                write!(f, "{server} is not configured in this session")
            }
            CatalogErrorKind::ShutDown { session } => {
                write!(f, "session runtime {session:?} is shut down")
            }
            CatalogErrorKind::Skill { skill, problem } => {
                write!(f, "{server}, skill {skill:?}: {problem}")
            }
        }
    }
}

impl StdError for CatalogError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &self.kind {
            CatalogErrorKind::RequiredServerFailed { cause } => Some(cause.as_ref()),
            CatalogErrorKind::Connect { cause } | CatalogErrorKind::Request { cause, .. } => {
                cause.source()
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_named_once_and_sources_are_kept() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let error = CatalogError::connect("a", Cause::other(refused));
        assert_eq!(error.to_string(), "server \"a\": connect failed: refused");
        assert_eq!(error.server(), Some("a"));
        assert!(
            error
                .source()
                .is_some_and(|source| source.to_string() == "refused")
        );
        assert!(error.is_fatal());

        let required = CatalogError::required_server_failed(error);
        assert_eq!(
            required.to_string(),
            "required server \"a\" failed: server \"a\": connect failed: refused"
        );
        assert!(required.source().is_some());

        let slow =
            CatalogError::request("a", "tools/list", Cause::TimedOut(Duration::from_millis(5)));
        assert_eq!(
            slow.to_string(),
            "server \"a\": tools/list failed: timed out after 5 ms"
        );
        assert!(!slow.is_fatal());
        assert!(slow.source().is_none());
    }

    #[test]
    fn a_transport_failure_is_the_source_with_its_kind() {
        use mcp_transport::TransportErrorKind;

        let broken = TransportError::io("a", "broken pipe");
        let message = broken.kind().to_string();
        let error = CatalogError::request("a", "tools/call", broken);
        // The message is unchanged: the transport's kind, after the step.
        assert_eq!(
            error.to_string(),
            format!("server \"a\": tools/call failed: {message}")
        );
        // A caller reaches the transport's error through `source()` ...
        let source = error
            .source()
            .and_then(|source| source.downcast_ref::<TransportError>())
            .expect("the transport error is the source");
        assert!(matches!(source.kind(), TransportErrorKind::Io { .. }));
        // ... or directly, also through a required server's failure.
        let required = CatalogError::required_server_failed(error);
        assert!(matches!(
            required.transport_error().map(TransportError::kind),
            Some(TransportErrorKind::Io { message }) if message == "broken pipe"
        ));
        assert_eq!(
            required.transport_error().map(TransportError::server),
            Some("a")
        );
    }
}
