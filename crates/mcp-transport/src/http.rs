//! What the HTTP-based transports (streamable HTTP, legacy SSE, the claude.ai
//! proxy) share: the options a host passes, per-request headers (static
//! headers, `headersHelper` output, bearer tokens from an
//! [`AuthProvider`]) with the 401/403 challenge retry, and decoding of
//! server-sent events into JSON-RPC messages.
//!
//! Header values are secrets: they are never logged and never appear in an
//! error message.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use mcp_oauth::{AuthProvider, Challenge, ChallengeOutcome};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::sync::Mutex;

use crate::codec::{Codec, DEFAULT_MAX_MESSAGE_BYTES, Undecodable};
use crate::event_stream::{Event, SseDecoder, SseItem};
use crate::headers_helper::run_headers_helper;
use crate::message::{ErrorObject, JsonRpcMessage, RequestId, Response};
use crate::transport::{HttpFailure, TransportError, TransportErrorKind};

/// JSON-RPC error code of answers the transport makes up itself when a request
/// could not be delivered or its answer was lost (HTTP error, broken stream).
pub const TRANSPORT_ERROR_CODE: i64 = -32000;

/// Everything an HTTP-based transport needs to reach one server.
#[derive(Clone)]
pub struct HttpOptions {
    /// The server's configured name, used in every error.
    pub server: String,
    /// The MCP endpoint (streamable HTTP) or the SSE url (legacy SSE).
    pub url: String,
    /// Static headers sent with every request; values are secrets.
    pub headers: BTreeMap<String, String>,
    /// A command whose stdout is a JSON object of extra headers.
    pub headers_helper: Option<String>,
    /// Supplies `Authorization` and handles 401/403 challenges.
    pub auth: Option<Arc<dyn AuthProvider>>,
    /// Limit for establishing a connection (TCP + TLS) and, for legacy SSE,
    /// for the `endpoint` event.
    pub connect_timeout: Duration,
}

impl HttpOptions {
    /// Options with no headers, no helper, no auth and the default connect
    /// timeout.
    pub fn new(server: impl Into<String>, url: impl Into<String>) -> Self {
        HttpOptions {
            server: server.into(),
            url: url.into(),
            headers: BTreeMap::new(),
            headers_helper: None,
            auth: None,
            connect_timeout: mcp_config::types::DEFAULT_CONNECT_TIMEOUT,
        }
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values never reach a log: only the names.
        f.debug_struct("HttpOptions")
            .field("server", &self.server)
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("headers_helper", &self.headers_helper.is_some())
            .field("auth", &self.auth.is_some())
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

/// Chooses the credentials for each remote server the host connects to
/// (typically an OAuth client keyed by server name and url).
pub trait AuthProviders: Send + Sync + std::fmt::Debug {
    /// The provider for `server`, or `None` to send no `Authorization`.
    fn provider_for(&self, server: &mcp_config::ServerConfig) -> Option<Arc<dyn AuthProvider>>;
}

pub(crate) fn io_error(server: &str, message: impl Into<String>) -> TransportError {
    TransportError::io(server, message)
}

/// Builds the HTTP client: rustls, connect timeout, no overall timeout (SSE
/// streams live as long as the session), and redirects followed only within
/// the server's origin, so headers never travel to another one.
pub(crate) fn build_client(options: &HttpOptions) -> Result<reqwest::Client, TransportError> {
    reqwest::Client::builder()
        .connect_timeout(options.connect_timeout)
        .redirect(mcp_oauth::redirect::same_origin_only())
        .build()
        .map_err(|e| {
            io_error(
                &options.server,
                format!("cannot build the HTTP client: {e}"),
            )
        })
}

/// Headers added to every request of one connection.
#[derive(Debug)]
pub(crate) struct RequestHeaders {
    server: String,
    url: String,
    fixed: HeaderMap,
    helper: Option<String>,
    helper_headers: Mutex<HeaderMap>,
    auth: Option<Arc<dyn AuthProvider>>,
}

impl RequestHeaders {
    /// Validates static headers and runs the helper once.
    pub(crate) async fn new(options: &HttpOptions) -> Result<Self, TransportError> {
        let fixed = to_header_map(&options.server, "headers", &options.headers)?;
        let headers = RequestHeaders {
            server: options.server.clone(),
            url: options.url.clone(),
            fixed,
            helper: options.headers_helper.clone(),
            helper_headers: Mutex::new(HeaderMap::new()),
            auth: options.auth.clone(),
        };
        headers.refresh_helper().await?;
        Ok(headers)
    }

    /// Re-runs the helper (after a 401 its headers may be stale).
    async fn refresh_helper(&self) -> Result<bool, TransportError> {
        let Some(command) = &self.helper else {
            return Ok(false);
        };
        let map = run_headers_helper(&self.server, &self.url, command).await?;
        *self.helper_headers.lock().await =
            to_header_map(&self.server, "headersHelper output", &map)?;
        Ok(true)
    }

    /// Adds static, helper and auth headers to a request; also returns the
    /// fingerprint of the `Authorization` value sent, for a challenge.
    async fn apply(
        &self,
        mut builder: reqwest::RequestBuilder,
    ) -> Result<(reqwest::RequestBuilder, Option<String>), TransportError> {
        let mut sent = None;
        builder = builder.headers(self.fixed.clone());
        builder = builder.headers(self.helper_headers.lock().await.clone());
        if let Some(auth) = &self.auth {
            let value = auth
                .authorization()
                .await
                .map_err(|e| io_error(&self.server, e.to_string()))?;
            if let Some(value) = value {
                let mut v = HeaderValue::from_str(&value).map_err(|_| {
                    io_error(
                        &self.server,
                        "the auth provider returned an invalid Authorization value",
                    )
                })?;
                v.set_sensitive(true);
                builder = builder.header(reqwest::header::AUTHORIZATION, v);
                sent = Some(mcp_oauth::authorization_fingerprint(&value));
            }
        }
        Ok((builder, sent))
    }

    /// Sends the request `build` makes, with every header applied. On a 401
    /// (or a 403 `insufficient_scope`) asks the auth provider and, if it has
    /// new credentials (or the helper could be re-run), sends once more.
    /// Each kind of challenge is answered at most once per request, so a
    /// 401 followed by a 403 step-up (new token, then more scope) still
    /// succeeds, and a request is sent at most three times.
    pub(crate) async fn send(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, TransportError> {
        let mut answered_401 = false;
        let mut answered_403 = false;
        loop {
            let (request, sent_authorization) = self.apply(build()).await?;
            let response = request
                .send()
                .await
                .map_err(|e| reqwest_error(&self.server, e))?;
            let status = response.status().as_u16();
            let www_authenticate = response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let answered = match status {
                401 => &mut answered_401,
                403 if www_authenticate
                    .as_deref()
                    .is_some_and(|w| w.contains("insufficient_scope")) =>
                {
                    &mut answered_403
                }
                _ => return Ok(response),
            };
            if *answered {
                return Ok(response);
            }
            *answered = true;
            let mut retry = false;
            if let Some(auth) = &self.auth {
                let challenge = Challenge {
                    status,
                    www_authenticate,
                    url: self.url.clone(),
                    refused_authorization: sent_authorization,
                };
                let outcome = auth
                    .on_challenge(&challenge)
                    .await
                    .map_err(|e| io_error(&self.server, e.to_string()))?;
                retry = outcome == ChallengeOutcome::Retry;
            } else if self.helper.is_some() {
                retry = self.refresh_helper().await?;
            }
            if !retry {
                return Ok(response);
            }
        }
    }
}

/// Whether hyper, underneath reqwest, saw the connection end before a
/// complete answer.
fn closed_unanswered(e: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let hung_up = s
            .downcast_ref::<hyper::Error>()
            .is_some_and(|h| h.is_incomplete_message() || h.is_closed() || h.is_canceled());
        if hung_up {
            return true;
        }
        source = s.source();
    }
    false
}

/// Checks and converts headers (`what` names where they come from in
/// errors); every value is marked sensitive, so it never reaches a log.
pub(crate) fn to_header_map(
    server: &str,
    what: &str,
    map: &BTreeMap<String, String>,
) -> Result<HeaderMap, TransportError> {
    let mut headers = HeaderMap::new();
    for (name, value) in map {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            io_error(
                server,
                format!("{what}: `{name}` is not a valid header name"),
            )
        })?;
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            io_error(
                server,
                format!("{what}: the value of `{name}` is not a valid header value"),
            )
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(headers)
}

/// A reqwest error as a transport error, without the url (whose query may
/// hold a token): its [`HttpFailure`] and the innermost cause's text.
pub(crate) fn reqwest_error(server: &str, e: reqwest::Error) -> TransportError {
    let failure = if e.is_connect() {
        HttpFailure::CannotConnect
    } else if closed_unanswered(&e) {
        HttpFailure::ClosedUnanswered
    } else if e.is_redirect() {
        HttpFailure::Redirect
    } else if e.is_timeout() {
        HttpFailure::Timeout
    } else if e.is_body() || e.is_decode() {
        HttpFailure::Body
    } else {
        HttpFailure::Request
    };
    let mut source = std::error::Error::source(&e);
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    TransportError::new(server, TransportErrorKind::Http { failure, detail })
}

/// How much of an unexpected answer's body is read for its excerpt, and
/// for how long: a refusal must not hold the caller on an endless or
/// trickling body.
const EXCERPT_BYTES: usize = 1024;
const EXCERPT_WAIT: Duration = Duration::from_secs(1);

/// An HTTP status the transport did not expect, with a short body excerpt.
pub(crate) async fn unexpected_status(
    server: &str,
    what: &str,
    mut response: reqwest::Response,
) -> TransportError {
    let status = response.status();
    let mut body = Vec::new();
    let read = async {
        while body.len() < EXCERPT_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) | Err(_) => break,
            }
        }
    };
    let _ = tokio::time::timeout(EXCERPT_WAIT, read).await;
    let body = String::from_utf8_lossy(&body);
    let excerpt: String = body.chars().take(200).collect();
    let excerpt = excerpt.trim();
    if excerpt.is_empty() {
        io_error(server, format!("{what}: HTTP {status}"))
    } else {
        io_error(server, format!("{what}: HTTP {status}: {excerpt}"))
    }
}

/// The `Content-Type` media type, lowercase, without parameters.
pub(crate) fn media_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// A whole response body, refused past `max` bytes without buffering more.
pub(crate) async fn read_body_capped(
    server: &str,
    mut response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, TransportError> {
    let too_large = || TransportError::new(server, TransportErrorKind::MessageTooLarge { max });
    if response
        .content_length()
        .is_some_and(|length| length > max as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| reqwest_error(server, e))?
    {
        if body.len() + chunk.len() > max {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The items of an SSE response body: events, and a report for each event
/// past the message cap (whose rest is skipped in bounded memory); a
/// broken connection ends the stream with its error.
pub(crate) fn sse_events(
    response: reqwest::Response,
) -> impl Stream<Item = Result<SseItem, reqwest::Error>> + Send {
    let decoder = SseDecoder::new(DEFAULT_MAX_MESSAGE_BYTES);
    futures::stream::unfold(
        (response.bytes_stream(), decoder, false),
        |(mut body, mut decoder, mut ended)| async move {
            loop {
                if let Some(item) = decoder.next_item() {
                    return Some((Ok(item), (body, decoder, ended)));
                }
                if ended {
                    return None;
                }
                match body.next().await {
                    Some(Ok(chunk)) => decoder.feed(&chunk),
                    Some(Err(e)) => return Some((Err(e), (body, decoder, true))),
                    None => {
                        decoder.end();
                        ended = true;
                    }
                }
            }
        },
    )
}

/// Decodes one JSON text (a message or a batch) into messages; an
/// undecodable one still yields what can be saved (see
/// [`Codec::decode_salvaging`]).
pub(crate) fn decode_payload(text: &[u8]) -> Result<Vec<JsonRpcMessage>, Undecodable> {
    Codec::default()
        .decode_salvaging(text)
        .map(|decoded| decoded.into_iter().collect())
}

/// The error answers that stand for answers past the message cap.
pub(crate) fn too_large_answers(
    server: &str,
    max: usize,
    answers: Vec<RequestId>,
) -> impl Iterator<Item = JsonRpcMessage> {
    let server = server.to_owned();
    answers.into_iter().map(move |id| {
        let error = TransportError::new(&*server, TransportErrorKind::MessageTooLarge { max });
        // Named like the transport's other made-up answers.
        synthetic_error(id, error.to_string())
    })
}

/// Encodes a message as its JSON text.
pub(crate) fn encode(message: &JsonRpcMessage) -> String {
    // serde_json writes UTF-8, so this takes the buffer without a copy.
    String::from_utf8(Codec::default().encode(message))
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Runs `exchange`, failing with an error naming `what` when it takes
/// longer than `limit`: a server that takes nothing must not hold the
/// session's driver forever.
pub(crate) async fn within<T>(
    server: &str,
    what: &str,
    limit: Duration,
    exchange: impl std::future::Future<Output = Result<T, TransportError>>,
) -> Result<T, TransportError> {
    tokio::time::timeout(limit, exchange)
        .await
        .unwrap_or_else(|_| {
            Err(io_error(
                server,
                format!("{what}: no answer within {} ms", limit.as_millis()),
            ))
        })
}

/// An answer the transport makes up for a request whose real answer is lost.
pub(crate) fn synthetic_error(id: RequestId, message: String) -> JsonRpcMessage {
    JsonRpcMessage::Response(Response {
        id: Some(id),
        outcome: Err(ErrorObject {
            code: TRANSPORT_ERROR_CODE,
            message,
            data: None,
        }),
    })
}

/// Decodes SSE bytes (as one body) into the JSON-RPC messages its events
/// carry, the way the HTTP transports read a stream: events named `message`
/// (or unnamed) with non-empty data are decoded; other events are skipped;
/// an event past the message cap is an error. Public for the fuzz target
/// and for tests; never panics.
pub fn decode_sse_body(chunks: &[&[u8]]) -> Vec<Result<JsonRpcMessage, String>> {
    let mut decoder = SseDecoder::new(DEFAULT_MAX_MESSAGE_BYTES);
    let mut items = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk);
        items.extend(std::iter::from_fn(|| decoder.next_item()));
    }
    decoder.end();
    items.extend(std::iter::from_fn(|| decoder.next_item()));
    let mut out = Vec::new();
    for item in items {
        match item {
            SseItem::Event(event) => {
                if is_message_event(&event) {
                    match decode_payload(event.data.as_bytes()) {
                        Ok(messages) => out.extend(messages.into_iter().map(Ok)),
                        Err(e) => out.push(Err(e.error.to_string())),
                    }
                }
            }
            SseItem::TooLarge { max, .. } => {
                out.push(Err(format!("message too large: more than {max} bytes")));
            }
        }
    }
    out
}

/// Whether an SSE event carries a JSON-RPC message (priming events have an
/// id, maybe a retry, and empty data).
pub(crate) fn is_message_event(event: &Event) -> bool {
    (event.event.is_empty() || event.event == "message") && !event.data.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Arbitrary bytes never panic the decoder, and where a chunk
        /// boundary falls never changes what it decodes.
        #[test]
        fn chunk_boundaries_never_change_the_result(body in proptest::collection::vec(any::<u8>(), 0..400), at in any::<prop::sample::Index>()) {
            let at = at.index(body.len() + 1);
            let (a, b) = body.split_at(at);
            prop_assert_eq!(format!("{:?}", decode_sse_body(&[a, b])), format!("{:?}", decode_sse_body(&[&body])));
        }

        /// Messages framed as SSE events come back as they were.
        #[test]
        fn framed_messages_round_trip(methods in proptest::collection::vec("[a-z/]{1,12}", 1..5), crlf in any::<bool>()) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut body = String::new();
            for method in &methods {
                body.push_str(&format!("event: message{eol}data: {{\"jsonrpc\":\"2.0\",\"method\":\"{method}\"}}{eol}{eol}"));
            }
            let got: Vec<String> = decode_sse_body(&[body.as_bytes()])
                .into_iter()
                .map(|m| match m {
                    Ok(JsonRpcMessage::Notification(n)) => n.method,
                    other => format!("{other:?}"),
                })
                .collect();
            prop_assert_eq!(got, methods);
        }
    }

    #[test]
    fn sse_bodies_decode_to_messages_split_anywhere() {
        let body = b"id: 1\nretry: 500\ndata: \n\n: comment\nevent: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\nevent: ping\ndata: x\n\ndata: [{\"jsonrpc\":\"2.0\",\"method\":\"a\"},\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"b\"}]\n\n";
        for split in 0..body.len() {
            let (a, b) = body.split_at(split);
            let got = decode_sse_body(&[a, b]);
            assert_eq!(got.len(), 3, "split at {split}: {got:?}");
            assert!(got.iter().all(Result::is_ok), "split at {split}: {got:?}");
        }
        let crlf = b"data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n\r\n";
        assert_eq!(decode_sse_body(&[crlf]).len(), 1);
        assert!(decode_sse_body(&[b"data: nope\n\n"])[0].is_err());
    }
}
