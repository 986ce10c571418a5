//! Choosing the revision a session speaks, the newest both sides support.
//!
//! At 2026-07-28 there is no handshake: the session asks `server/discover`
//! (with the modern `_meta`) and reads the server's `supportedVersions`.
//! The answer decides the era (REFERENCE and the spec's versioning page):
//!
//! - a `DiscoverResult` or a recognised modern error (such as
//!   `UnsupportedProtocolVersion`, -32022, with `data.supported`): the
//!   server is modern; the session picks the newest revision both know and
//!   never falls back to `initialize` unless the server itself lists an
//!   older revision;
//! - any other error, an HTTP refusal without a modern error body, or no
//!   answer within [`SessionOptions::discover_timeout`]: the server is
//!   legacy, and the `initialize` handshake runs at the newest older
//!   revision the session allows.
//!
//! With [`SessionOptions::assume_legacy`] (the server answered
//! `initialize` before) the session starts with `initialize`, and only a
//! refusal of it leads to the probe above.
//!
//! A server that lists a revision and then refuses it, or answers
//! `initialize` with a revision it was not offered, ends the negotiation
//! with a named error instead of a loop.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::error::{TransportError, TransportErrorKind};
use crate::error_codes;
use crate::message::JsonRpcMessage;
use crate::protocol::{DiscoverResult, InitializeResult, KNOWN_PROTOCOL_VERSIONS, is_modern};
use crate::request_meta::RequestMeta;
use crate::stderr_tail::StderrTail;

use super::{CallOptions, Shared, rounds};

/// What negotiation settled on.
pub(super) struct Negotiated {
    pub(super) identity: InitializeResult,
    pub(super) modern: Option<RequestMeta>,
}

/// How a `server/discover` probe ended.
enum Probe {
    Modern(Box<DiscoverResult>),
    /// A modern server that refused the revision, listing what it speaks.
    Refused(Vec<String>),
    Legacy,
}

impl Shared {
    pub(super) async fn negotiate(self: &Arc<Self>) -> Result<Negotiated, TransportError> {
        let wanted = self.wanted_versions()?;
        let started = Instant::now();
        let newest_modern = wanted.iter().find(|v| is_modern(v));
        if newest_modern.is_some()
            && self.options.assume_legacy
            && wanted.iter().any(|v| !is_modern(v))
        {
            match self.initialize_legacy(&wanted, started).await {
                Err(refusal) if refused_handshake(&refusal) => {
                    tracing::debug!(server = %self.server, error = %refusal, "initialize refused although the server answered it before; probing with server/discover");
                }
                done => return done,
            }
        }
        if let Some(first) = newest_modern {
            let offered = match self.discover(first, started).await? {
                Probe::Modern(result) if result.supported_versions.iter().any(|v| v == first) => {
                    return Ok(self.modern_session(first, *result));
                }
                Probe::Modern(result) => result.supported_versions,
                // A refusal that lists the revision it refused is read as a
                // transient one (the spec's retry): the second discover
                // below settles it, and a second refusal is an error.
                Probe::Refused(supported) => supported,
                Probe::Legacy => {
                    return match self.initialize_legacy(&wanted, started).await {
                        Err(refusal) => {
                            self.after_refused_initialize(refusal, &wanted, started)
                                .await
                        }
                        ok => ok,
                    };
                }
            };
            let Some(chosen) = wanted.iter().find(|v| offered.contains(v)) else {
                return Err(self.no_common_version(offered, &wanted));
            };
            if !is_modern(chosen) {
                // A dual-era server that lists only older revisions we allow.
                return self
                    .initialize_legacy(std::slice::from_ref(chosen), started)
                    .await;
            }
            return match self.discover(chosen, started).await? {
                Probe::Modern(result) => Ok(self.modern_session(chosen, *result)),
                Probe::Refused(_) | Probe::Legacy => Err(TransportError::new(
                    &*self.server,
                    TransportErrorKind::VersionNegotiation {
                        detail: format!(
                            "the server listed {chosen} ({}) and then refused it",
                            offered.join(", ")
                        ),
                    },
                )),
            };
        }
        self.initialize_legacy(&wanted, started).await
    }

    /// The revisions this session may use, newest first: every known one
    /// up to the configured revision, or exactly that one when pinned.
    fn wanted_versions(&self) -> Result<Vec<String>, TransportError> {
        let newest = self.options.protocol_version.as_str();
        if !KNOWN_PROTOCOL_VERSIONS.contains(&newest) {
            return Err(TransportError::new(
                &*self.server,
                TransportErrorKind::UnsupportedVersion {
                    version: newest.to_owned(),
                },
            ));
        }
        Ok(if self.options.pin_protocol {
            vec![newest.to_owned()]
        } else {
            KNOWN_PROTOCOL_VERSIONS
                .iter()
                .filter(|v| **v <= newest)
                .map(|v| (*v).to_owned())
                .collect()
        })
    }

    fn remaining(&self, started: Instant) -> Duration {
        self.options
            .connect_timeout
            .saturating_sub(started.elapsed())
    }

    fn connect_timeout_error(&self) -> TransportError {
        TransportError::new(
            &*self.server,
            TransportErrorKind::ConnectTimeout {
                after: self.options.connect_timeout,
                stderr_tail: self
                    .stderr
                    .as_ref()
                    .map(StderrTail::report)
                    .unwrap_or_default(),
                hint: self.stderr.as_ref().and_then(StderrTail::silence_note),
            },
        )
    }

    async fn discover(
        self: &Arc<Self>,
        version: &str,
        started: Instant,
    ) -> Result<Probe, TransportError> {
        self.discover_within(version, started, self.options.discover_timeout)
            .await
    }

    /// [`Shared::discover`], waiting at most `patience` (and never past the
    /// connect timeout) for the answer.
    async fn discover_within(
        self: &Arc<Self>,
        version: &str,
        started: Instant,
        patience: Duration,
    ) -> Result<Probe, TransportError> {
        let remaining = self.remaining(started);
        if remaining.is_zero() {
            return Err(self.connect_timeout_error());
        }
        let meta = rounds::modern_meta(version, &self.options);
        let call = CallOptions {
            timeout: Some(patience.min(remaining)),
            ..CallOptions::default()
        };
        match self
            .exchange("server/discover", Some(meta.apply(None)), &call)
            .await
        {
            Ok(result) => {
                let discovered: DiscoverResult = crate::depth::from_value(result).map_err(|e| {
                    TransportError::protocol(
                        &*self.server,
                        format!("invalid server/discover result: {e}"),
                    )
                    .with_source(e)
                })?;
                // A result without `supportedVersions` is not a
                // `DiscoverResult`: some older servers answer every method
                // they do not know with an empty success.
                if discovered.supported_versions.is_empty() {
                    tracing::debug!(server = %self.server, "server/discover answered without supportedVersions; trying initialize");
                    return Ok(Probe::Legacy);
                }
                Ok(Probe::Modern(Box::new(discovered)))
            }
            Err(error) => self.classify_probe_failure(error, started),
        }
    }

    /// Reads a failed probe: a modern error keeps the session modern, a
    /// dead connection is the error itself, anything else means legacy.
    fn classify_probe_failure(
        &self,
        error: TransportError,
        started: Instant,
    ) -> Result<Probe, TransportError> {
        match error.kind() {
            TransportErrorKind::Rpc { code, data, .. }
                if *code == error_codes::UNSUPPORTED_PROTOCOL_VERSION =>
            {
                Ok(Probe::Refused(supported_versions(data.as_deref())))
            }
            TransportErrorKind::Rpc { code, .. } if error_codes::is_modern_error(*code) => {
                Err(error)
            }
            // A refused redirect is a security refusal, not an old server.
            TransportErrorKind::Http {
                failure: crate::error::HttpFailure::Redirect,
                ..
            } => Err(error),
            TransportErrorKind::Timeout { .. } if self.remaining(started).is_zero() => {
                Err(self.connect_timeout_error())
            }
            TransportErrorKind::Rpc { .. }
            | TransportErrorKind::Timeout { .. }
            | TransportErrorKind::Io { .. }
            | TransportErrorKind::Http { .. }
            | TransportErrorKind::Protocol { .. } => {
                tracing::debug!(server = %self.server, error = %error, "server/discover failed; trying initialize");
                Ok(Probe::Legacy)
            }
            _ => Err(error),
        }
    }

    /// `initialize` was refused after the probe went unanswered. A modern
    /// server that was too slow to answer the probe in time (a cold start
    /// on a loaded machine: an interpreter importing its packages) has
    /// since taken it and now refuses the handshake as a modern server
    /// does: with -32022, or with the revisions it speaks in
    /// `data.supported`. Then the session asks again, waiting as long as
    /// the connect timeout allows; any other refusal stands.
    async fn after_refused_initialize(
        self: &Arc<Self>,
        refusal: TransportError,
        wanted: &[String],
        started: Instant,
    ) -> Result<Negotiated, TransportError> {
        let TransportErrorKind::Rpc { code, data, .. } = refusal.kind() else {
            return Err(refusal);
        };
        let supported = supported_versions(data.as_deref());
        let modern_refusal = *code == error_codes::UNSUPPORTED_PROTOCOL_VERSION
            || supported.iter().any(|v| is_modern(v));
        let chosen = wanted
            .iter()
            .filter(|v| is_modern(v))
            .find(|v| supported.is_empty() || supported.contains(v));
        let Some(chosen) = chosen.filter(|_| modern_refusal) else {
            return Err(refusal);
        };
        tracing::debug!(server = %self.server, "initialize refused as a modern server refuses it; asking server/discover again");
        match self
            .discover_within(chosen, started, self.remaining(started))
            .await?
        {
            Probe::Modern(result) if result.supported_versions.contains(chosen) => {
                Ok(self.modern_session(chosen, *result))
            }
            _ => Err(refusal),
        }
    }

    fn modern_session(&self, version: &str, discovered: DiscoverResult) -> Negotiated {
        let identity = InitializeResult {
            protocol_version: version.to_owned(),
            server_info: discovered.server_info(),
            capabilities: discovered.capabilities,
            instructions: discovered.instructions,
        };
        Negotiated {
            identity,
            modern: Some(rounds::modern_meta(version, &self.options)),
        }
    }

    fn no_common_version(&self, offered: Vec<String>, wanted: &[String]) -> TransportError {
        TransportError::new(
            &*self.server,
            TransportErrorKind::NoCommonVersion {
                offered,
                wanted: wanted.to_vec(),
            },
        )
    }

    /// The `initialize` handshake at the newest older revision in `wanted`.
    async fn initialize_legacy(
        self: &Arc<Self>,
        wanted: &[String],
        started: Instant,
    ) -> Result<Negotiated, TransportError> {
        let legacy: Vec<String> = wanted.iter().filter(|v| !is_modern(v)).cloned().collect();
        let Some(proposed) = legacy.first() else {
            return Err(self.no_common_version(Vec::new(), wanted));
        };
        let remaining = self.remaining(started);
        if remaining.is_zero() {
            return Err(self.connect_timeout_error());
        }
        let params = json!({
            "protocolVersion": proposed,
            "capabilities": rounds::client_capabilities(&self.options, false),
            "clientInfo": self.options.client_info,
        });
        let call = CallOptions {
            timeout: Some(remaining),
            ..CallOptions::default()
        };
        let result = match self.exchange("initialize", Some(params), &call).await {
            Ok(result) => result,
            Err(e) if matches!(e.kind(), TransportErrorKind::Timeout { .. }) => {
                return Err(self.connect_timeout_error());
            }
            Err(e) => return Err(e),
        };
        let identity: InitializeResult = crate::depth::from_value(result).map_err(|e| {
            TransportError::protocol(&*self.server, format!("invalid initialize result: {e}"))
                .with_source(e)
        })?;
        let answered = identity.protocol_version.as_str();
        if is_modern(answered) {
            return Err(TransportError::new(
                &*self.server,
                TransportErrorKind::VersionNegotiation {
                    detail: format!(
                        "the server answered initialize with {answered}, a revision without initialize"
                    ),
                },
            ));
        }
        if !KNOWN_PROTOCOL_VERSIONS.contains(&answered) {
            return Err(TransportError::new(
                &*self.server,
                TransportErrorKind::UnsupportedVersion {
                    version: answered.to_owned(),
                },
            ));
        }
        if !legacy.iter().any(|v| v == answered) {
            return Err(self.no_common_version(vec![answered.to_owned()], wanted));
        }
        self.send(JsonRpcMessage::notification(
            "notifications/initialized",
            None,
        ))?;
        if let Some(level) = &self.options.log_level
            && identity.capabilities.get("logging").is_some()
        {
            let call = CallOptions::default();
            let set = self
                .exchange("logging/setLevel", Some(json!({ "level": level })), &call)
                .await;
            if let Err(error) = set {
                tracing::debug!(server = %self.server, error = %error, "logging/setLevel refused");
            }
        }
        Ok(Negotiated {
            identity,
            modern: None,
        })
    }
}

/// Whether an `initialize` that was expected to work failed in a way a
/// server that moved to the modern era explains (a refusal, or an answer
/// naming a revision without `initialize`): the probe then decides. A
/// dead connection or the connect timeout stands as it is.
fn refused_handshake(error: &TransportError) -> bool {
    matches!(
        error.kind(),
        TransportErrorKind::Rpc { .. }
            | TransportErrorKind::VersionNegotiation { .. }
            | TransportErrorKind::UnsupportedVersion { .. }
            | TransportErrorKind::NoCommonVersion { .. }
    )
}

/// The revisions an error's `data.supported` lists (none when absent).
fn supported_versions(data: Option<&Value>) -> Vec<String> {
    data.and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}
