//! [`TransportError`] (with its [`TransportErrorKind`]), the crate's one
//! error type: the server it concerns, what went wrong and, where one
//! exists, the underlying error. Every layer of the crate returns it.

use std::sync::Arc;
use std::time::Duration;

/// Errors raised by transports and the session: the server they concern,
/// what went wrong ([`TransportError::kind`]) and, where one exists, the
/// underlying error ([`std::error::Error::source`]). It displays as
/// `{server}: {kind}`; messages are lowercase.
#[derive(Debug, Clone)]
pub struct TransportError {
    server: String,
    kind: TransportErrorKind,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Which of a request's two limits ended it.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutLimit {
    /// The total limit, which nothing extends (`CallOptions::timeout`, the
    /// entry's tool-call or request timeout).
    Total(Duration),
    /// The inactivity limit: this long without real progress
    /// (`CallOptions::idle_timeout`).
    Inactivity(Duration),
}

/// What went wrong, without the server's name (which
/// [`TransportError`] carries once).
///
/// The codec reports undecodable frames with the `Frame*`, `NotJson`,
/// `InvalidMessage` and `TooDeep` kinds before any server is attached
/// (see [`crate::codec::Undecodable`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// The connection is gone (closed by us, or the peer went away cleanly).
    Closed,
    /// An I/O failure on the wire.
    Io {
        /// What failed, naming the operation (`read`, `write`, the url's
        /// host), never a header value.
        message: String,
    },
    /// An HTTP exchange failed before any status arrived.
    Http {
        /// Which way the exchange failed; what a caller branches on.
        failure: HttpFailure,
        /// The innermost cause's text (never the url, whose query may
        /// hold a token).
        detail: String,
    },
    /// The server stopped answering: the HTTP connection was refused or cut
    /// (`cause` is what the failing exchange reported).
    ConnectionLost {
        /// The failure of the exchange that found the server gone.
        cause: Box<TransportErrorKind>,
    },
    /// A request got no answer in time: its total limit passed, or its
    /// inactivity limit without real progress (see [`TimeoutLimit`]).
    Timeout {
        /// The request's method.
        method: String,
        /// How long the request ran.
        after: Duration,
        /// Which limit passed.
        limit: TimeoutLimit,
    },
    /// Connecting (spawn + initialize) did not finish in time.
    ConnectTimeout {
        /// The connect limit that passed.
        after: Duration,
        /// The last bytes of the child's stderr (stdio only, else empty;
        /// see [`StderrTail::report`](crate::stderr_tail::StderrTail::report)).
        stderr_tail: String,
        /// What may be wrong, when the server gave no clue of its own (a
        /// stdio server that wrote nothing on stderr: which proxy and CA
        /// variables it was given, by name).
        hint: Option<String>,
    },
    /// The server answered with a JSON-RPC error.
    Rpc {
        /// The method of the request that was refused.
        method: String,
        /// The JSON-RPC error code (see [`crate::error_codes`]).
        code: i64,
        /// The server's message, as it sent it.
        message: String,
        /// The error's `data` member, when the server sent one (boxed so
        /// the error stays small).
        data: Option<Box<serde_json::Value>>,
    },
    /// The server broke the protocol (invalid message, bad result shape,
    /// a repeated pagination cursor, a list past its limits...).
    Protocol {
        /// What the server did wrong.
        message: String,
    },
    /// The server's process could not be started.
    Spawn {
        /// The program that could not be started.
        command: String,
        /// Why, as the operating system said.
        message: String,
    },
    /// The server's process exited (or closed its stdout).
    ServerExited {
        /// The exit status as text (`exit status: 1`, `signal: 9`), or
        /// `stdout closed` when the process was still running.
        status: String,
        /// The last bytes of the child's stderr.
        stderr_tail: String,
    },
    /// A message exceeded the configured maximum size.
    MessageTooLarge {
        /// The cap in bytes.
        max: usize,
    },
    /// The server answered `initialize` with a protocol version we do not know.
    UnsupportedVersion {
        /// The revision the server answered with.
        version: String,
    },
    /// The server speaks none of the revisions this session may use
    /// (`offered` is what it listed; `wanted` what the session allowed).
    NoCommonVersion {
        /// The revisions the server listed.
        offered: Vec<String>,
        /// The revisions the session allowed.
        wanted: Vec<String>,
    },
    /// The server contradicted itself while the revision was chosen (it
    /// listed a revision and then refused it, or answered `initialize` with
    /// one it was not asked for).
    VersionNegotiation {
        /// How the server contradicted itself.
        detail: String,
    },
    /// The host could not answer an input request a server sent inside an
    /// `input_required` result (no handler, or the handler refused).
    InputRequestFailed {
        /// The method of the request whose result asked for input.
        method: String,
        /// The input request's method (`sampling/createMessage`,
        /// `elicitation/create`, `roots/list`).
        input: String,
        /// Why it could not be answered.
        message: String,
    },
    /// A request still wanted input after the most rounds a session allows.
    InputRoundsExceeded {
        /// The method of the request.
        method: String,
        /// How many rounds were answered.
        rounds: usize,
    },
    /// The entry names a secret (`${secret:NAME}` in `env` or `headers`)
    /// and the host gave no secret store to read it from.
    NoSecretStore {
        /// The first secret the entry names.
        secret: String,
    },
    /// A secret the entry names could not be put in (the store does not
    /// hold it, the store failed, or the value cannot go there). The
    /// message names the secret and the server, never a value.
    Secret {
        /// What `mcp_config::secret::resolve` said.
        message: String,
    },
    /// An `sdk` entry names an in-process server the host did not register.
    SdkServerNotRegistered {
        /// The name the entry gives.
        name: String,
    },
    /// A frame exceeds the codec's size cap (`size` bytes, known before
    /// parsing).
    FrameTooLarge {
        /// The frame's size in bytes.
        size: usize,
        /// The cap in bytes.
        max: usize,
    },
    /// A frame is not JSON (a banner line, a log line, truncated output).
    NotJson {
        /// The parser's complaint.
        reason: String,
    },
    /// A frame is JSON but not a JSON-RPC 2.0 message.
    InvalidMessage {
        /// What is missing or wrong in the message.
        reason: String,
    },
    /// A frame nests deeper than [`crate::depth::MAX_DEPTH`].
    TooDeep {
        /// How deep the frame nests.
        depth: usize,
        /// The deepest nesting accepted.
        max: usize,
    },
    /// A `headersHelper` command line cannot be split into argv.
    HelperCommandInvalid {
        /// Why the command line cannot be split.
        message: String,
    },
    /// A `headersHelper` could not be started (or waited for).
    HelperSpawn {
        /// The helper's program.
        program: String,
        /// Why it could not be started, as the operating system said.
        message: String,
    },
    /// A `headersHelper` ran past its time limit and was killed.
    HelperTimeout {
        /// The helper's program.
        program: String,
        /// The limit that passed.
        after: Duration,
    },
    /// A `headersHelper` exited unsuccessfully; `stderr` is its own
    /// diagnostic (never header output), trimmed.
    HelperFailed {
        /// The helper's program.
        program: String,
        /// Its exit status as text.
        status: String,
        /// What it wrote on stderr, trimmed.
        stderr: String,
    },
    /// A `headersHelper`'s stdout is not a JSON object of header strings;
    /// `message` names keys and types, never values.
    HelperBadOutput {
        /// The helper's program.
        program: String,
        /// What is wrong with the output, by key and type.
        message: String,
    },
    /// A tool call run as a task ended with a JSON-RPC error (`code` when
    /// the server gave one), or the host could not answer what the task
    /// asked for. (Boxed text keeps every error small.)
    TaskFailed {
        /// The tool that was called.
        tool: String,
        /// The server's id of the task.
        task_id: Box<str>,
        /// The JSON-RPC error code, when the server gave one.
        code: Option<i64>,
        /// The error's message.
        message: Box<str>,
    },
    /// A tool call run as a task was cancelled by the server.
    TaskCancelled {
        /// The tool that was called.
        tool: String,
        /// The server's id of the task.
        task_id: String,
        /// The server's status message, when it gave one.
        message: Option<String>,
    },
    /// A tool must run as a task (`taskSupport: "required"`) and the server
    /// offers no tasks for `tools/call` at the negotiated revision.
    TasksUnsupported {
        /// The tool that must run as a task.
        tool: String,
        /// The negotiated revision.
        protocol_version: String,
    },
    /// A request's response stream broke before its answer, at a revision
    /// without stream resumption (2026-07-28 and later), and the request
    /// was not safe to send again (or its one re-issue broke too). Only
    /// that request failed; the connection is fine.
    StreamBroken {
        /// The method of the request that failed.
        method: String,
    },
    /// The entry's transport kind (`kind`, as the config names it) was
    /// compiled out: this build lacks the cargo feature `feature` of
    /// `mcp-transport` (or of `mcp-catalog`, which forwards it).
    KindNotCompiled {
        /// The kind as the config names it (`stdio`, `http`, `sse`, ...).
        kind: &'static str,
        /// The cargo feature that would compile it in.
        feature: &'static str,
    },
}

/// Why an HTTP exchange failed: before any status arrived, or (for one
/// request at 2026-07-28 and later) the status that refused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpFailure {
    /// The server refused the request with this status and no JSON-RPC
    /// error body (a server that does not speak the revision, typically).
    Status(u16),
    /// The server refused or never answered the TCP (or TLS) connection.
    CannotConnect,
    /// The server closed the connection without answering (it died, or
    /// dropped the request).
    ClosedUnanswered,
    /// A redirect to another origin was refused.
    Redirect,
    /// The exchange timed out.
    Timeout,
    /// The response body broke off or could not be read.
    Body,
    /// Any other failure of the request.
    Request,
}

impl HttpFailure {
    /// Whether the server could not be reached at all, or hung up without
    /// answering.
    pub fn is_unreachable(self) -> bool {
        matches!(
            self,
            HttpFailure::CannotConnect | HttpFailure::ClosedUnanswered
        )
    }
}

impl std::fmt::Display for HttpFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HttpFailure::CannotConnect => "cannot connect",
            HttpFailure::ClosedUnanswered => "the server closed the connection without answering",
            HttpFailure::Redirect => "redirect refused",
            HttpFailure::Timeout => "timed out",
            HttpFailure::Body => "broken response body",
            HttpFailure::Request => "request failed",
            HttpFailure::Status(status) => {
                // Only the remote kinds see statuses, and only they bring
                // the table of reason phrases.
                #[cfg(feature = "remote")]
                let reason = reqwest::StatusCode::from_u16(*status)
                    .ok()
                    .and_then(|s| s.canonical_reason());
                #[cfg(not(feature = "remote"))]
                let reason: Option<&str> = None;
                return match reason {
                    Some(reason) => write!(f, "HTTP {status} {reason}"),
                    None => write!(f, "HTTP {status}"),
                };
            }
        })
    }
}

impl std::fmt::Display for TransportErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use TransportErrorKind as K;
        match self {
            K::Closed => f.write_str("connection closed"),
            K::Io { message } => f.write_str(message),
            K::Protocol { message } => write!(f, "protocol error: {message}"),
            K::Http { failure, detail } if detail.is_empty() => write!(f, "{failure}"),
            K::Http { failure, detail } => write!(f, "{failure}: {detail}"),
            K::ConnectionLost { cause } => write!(f, "connection lost: {cause}"),
            K::Timeout {
                method,
                after,
                limit: TimeoutLimit::Total(limit),
            } => write!(
                f,
                "{method} timed out after {} (its total limit of {})",
                fmt_duration(*after),
                fmt_duration(*limit)
            ),
            K::Timeout {
                method,
                after,
                limit: TimeoutLimit::Inactivity(limit),
            } => write!(
                f,
                "{method} timed out after {}: no progress for {}",
                fmt_duration(*after),
                fmt_duration(*limit)
            ),
            K::ConnectTimeout {
                after,
                stderr_tail,
                hint,
            } => {
                write!(
                    f,
                    "connect timed out after {}{}",
                    fmt_duration(*after),
                    fmt_tail(stderr_tail)
                )?;
                if let Some(hint) = hint {
                    write!(f, "; {hint}")?;
                }
                Ok(())
            }
            K::Rpc {
                method,
                code,
                message,
                ..
            } => write!(f, "{method} failed: {message} (code {code})"),
            K::Spawn { command, message } => write!(f, "failed to start `{command}`: {message}"),
            K::ServerExited {
                status,
                stderr_tail,
            } => write!(f, "server exited ({status}){}", fmt_tail(stderr_tail)),
            K::MessageTooLarge { max } => write!(f, "message too large: more than {max} bytes"),
            K::UnsupportedVersion { version } => write!(
                f,
                "unsupported protocol version {version:?} (this client knows {})",
                crate::protocol::KNOWN_PROTOCOL_VERSIONS.join(", ")
            ),
            K::NoCommonVersion { offered, wanted } => write!(
                f,
                "no protocol revision in common: the server speaks {}, this session allows {}",
                list_or_none(offered),
                list_or_none(wanted)
            ),
            K::VersionNegotiation { detail } => {
                write!(f, "protocol version negotiation failed: {detail}")
            }
            K::InputRequestFailed {
                method,
                input,
                message,
            } => write!(
                f,
                "{method} needs input ({input}) the host could not give: {message}"
            ),
            K::InputRoundsExceeded { method, rounds } => write!(
                f,
                "{method} still asked for input after {rounds} rounds; giving up"
            ),
            K::KindNotCompiled { kind, feature } => write!(
                f,
                "this build has no {kind} transport: enable the `{feature}` feature of mcp-transport (or mcp-catalog)"
            ),
            K::NoSecretStore { secret } => write!(
                f,
                "the entry names secret `{secret}`, but no secret store was given to read it from"
            ),
            K::Secret { message } => f.write_str(message),
            K::SdkServerNotRegistered { name } => {
                write!(f, "no in-process server is registered as {name:?}")
            }
            K::FrameTooLarge { size, max } => {
                write!(f, "message too large: {size} bytes (limit {max})")
            }
            K::NotJson { reason } => write!(f, "not JSON: {reason}"),
            K::InvalidMessage { reason } => write!(f, "invalid JSON-RPC message: {reason}"),
            K::TooDeep { depth, max } => {
                write!(f, "message nests {depth} levels deep (limit {max})")
            }
            K::HelperCommandInvalid { message } => {
                write!(f, "headersHelper command line is invalid: {message}")
            }
            K::HelperSpawn { program, message } => {
                write!(f, "headersHelper `{program}` could not start: {message}")
            }
            K::HelperTimeout { program, after } => write!(
                f,
                "headersHelper `{program}` did not finish within {} ms",
                after.as_millis()
            ),
            K::HelperFailed {
                program,
                status,
                stderr,
            } => {
                write!(f, "headersHelper `{program}` exited with {status}")?;
                if !stderr.is_empty() {
                    write!(f, ": {stderr}")?;
                }
                Ok(())
            }
            K::HelperBadOutput { program, message } => write!(
                f,
                "headersHelper `{program}` output is not a JSON object of strings: {message}"
            ),
            K::TaskFailed {
                tool,
                task_id,
                code,
                message,
            } => {
                write!(f, "tool {tool:?} failed as task {task_id:?}: {message}")?;
                if let Some(code) = code {
                    write!(f, " (code {code})")?;
                }
                Ok(())
            }
            K::TaskCancelled {
                tool,
                task_id,
                message,
            } => {
                write!(f, "tool {tool:?} was cancelled as task {task_id:?}")?;
                if let Some(message) = message {
                    write!(f, ": {message}")?;
                }
                Ok(())
            }
            K::TasksUnsupported {
                tool,
                protocol_version,
            } => write!(
                f,
                "tool {tool:?} must run as a task, and the server offers no tasks for tools/call at {protocol_version}"
            ),
            K::StreamBroken { method } => {
                write!(f, "the response stream of {method} broke before its answer")
            }
        }
    }
}

impl TransportError {
    /// An error of `kind` concerning `server`.
    pub fn new(server: impl Into<String>, kind: TransportErrorKind) -> Self {
        TransportError {
            server: server.into(),
            kind,
            source: None,
        }
    }

    /// The same error, keeping `source` as its underlying cause.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// [`TransportErrorKind::Closed`] for `server`.
    pub fn closed(server: impl Into<String>) -> Self {
        TransportError::new(server, TransportErrorKind::Closed)
    }

    /// [`TransportErrorKind::Io`] for `server`.
    pub fn io(server: impl Into<String>, message: impl Into<String>) -> Self {
        TransportError::new(
            server,
            TransportErrorKind::Io {
                message: message.into(),
            },
        )
    }

    /// [`TransportErrorKind::Protocol`] for `server`.
    pub fn protocol(server: impl Into<String>, message: impl Into<String>) -> Self {
        TransportError::new(
            server,
            TransportErrorKind::Protocol {
                message: message.into(),
            },
        )
    }

    /// The server this error concerns.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// What went wrong.
    pub fn kind(&self) -> &TransportErrorKind {
        &self.kind
    }

    /// What went wrong, by value (to rebuild the error around it).
    pub fn into_kind(self) -> TransportErrorKind {
        self.kind
    }

    /// The child's stderr tail, when the error carries one.
    pub fn stderr_tail(&self) -> Option<&str> {
        match &self.kind {
            TransportErrorKind::ServerExited { stderr_tail, .. }
            | TransportErrorKind::ConnectTimeout { stderr_tail, .. } => Some(stderr_tail),
            _ => None,
        }
    }

    /// Whether the server said a resource does not exist: -32602 since
    /// 2026-07-28, -32002 before.
    pub fn is_resource_not_found(&self) -> bool {
        use crate::error_codes::{INVALID_PARAMS, LEGACY_RESOURCE_NOT_FOUND};
        matches!(&self.kind, TransportErrorKind::Rpc { method, code, .. }
            if method == "resources/read" && (*code == INVALID_PARAMS || *code == LEGACY_RESOURCE_NOT_FOUND))
    }

    /// Whether the connection is unusable after this error (as opposed to
    /// one failed request on a healthy connection).
    pub fn is_fatal(&self) -> bool {
        !matches!(
            self.kind,
            TransportErrorKind::Timeout { .. }
                | TransportErrorKind::Rpc { .. }
                | TransportErrorKind::Protocol { .. }
                | TransportErrorKind::InputRequestFailed { .. }
                | TransportErrorKind::InputRoundsExceeded { .. }
                | TransportErrorKind::TaskFailed { .. }
                | TransportErrorKind::TaskCancelled { .. }
                | TransportErrorKind::TasksUnsupported { .. }
                | TransportErrorKind::StreamBroken { .. }
                | TransportErrorKind::Http {
                    failure: HttpFailure::Status(_),
                    ..
                }
        )
    }

    /// Whether the server could not be reached over HTTP, or hung up
    /// without answering.
    #[cfg(feature = "streamable-http")]
    pub(crate) fn is_unreachable(&self) -> bool {
        matches!(&self.kind, TransportErrorKind::Http { failure, .. } if failure.is_unreachable())
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.server, self.kind)
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

/// How much of a stderr tail goes into an error's message; the full tail
/// (up to [`STDERR_TAIL_BYTES`]) stays in the error's field.
const DISPLAYED_TAIL_CHARS: usize = 2000;
/// How many lines of a long stderr tail with an error in it go into an
/// error's message.
const DISPLAYED_TAIL_LINES: usize = 24;

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".to_owned()
    } else {
        items.join(", ")
    }
}

fn fmt_tail(tail: &str) -> String {
    let tail = tail.trim_end();
    if tail.is_empty() {
        return String::new();
    }
    if tail.chars().count() > DISPLAYED_TAIL_CHARS
        && tail.lines().any(crate::stderr_tail::looks_like_error)
    {
        // Too long to show whole: the first error-looking line may sit
        // above the part the end would show (usage text after an error).
        let shown =
            crate::stderr_tail::stderr_excerpt(tail, DISPLAYED_TAIL_LINES, DISPLAYED_TAIL_CHARS);
        return format!("; stderr: {shown}");
    }
    let start = tail
        .char_indices()
        .rev()
        .nth(DISPLAYED_TAIL_CHARS)
        .map_or(0, |(index, _)| index);
    let cut = if start > 0 { "..." } else { "" };
    format!("; stderr: {cut}{}", &tail[start..])
}

fn fmt_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn the_source_stays_reachable_and_out_of_the_message() {
        let cause = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = TransportError::new(
            "files",
            TransportErrorKind::Spawn {
                command: "files-server".into(),
                message: "no such file".into(),
            },
        )
        .with_source(cause);
        // A clone (errors fan out to every request in flight) shares it.
        for error in [error.clone(), error] {
            let source = error.source().expect("the cause is kept");
            let io = source.downcast_ref::<std::io::Error>().expect("as itself");
            assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
            assert!(matches!(error.kind(), TransportErrorKind::Spawn { .. }));
            assert_eq!(error.server(), "files");
            // The message quotes the cause once; a chain printer that
            // skips quoted causes shows it once.
            assert_eq!(
                error.to_string().matches("no such file").count(),
                1,
                "{error}"
            );
        }
    }

    #[test]
    fn an_error_without_a_cause_has_no_source() {
        assert!(TransportError::closed("files").source().is_none());
    }
}
