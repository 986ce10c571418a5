//! Requests to a plain `http://` server that no proxy stands in front of,
//! sent over hyper's HTTP/1.1 connections without reqwest's per-request
//! layers or hyper-util's pool.
//!
//! reqwest turns every request's URI back into a `Url` twice (its redirect
//! layer's check and the response's url), each with an IDNA pass over the
//! host: more of a local call's client instructions than the whole MCP
//! request path. A local server (a sidecar, a server a test starts, a
//! host's own) is where that shows; behind TLS the encryption and the
//! network dwarf it. So requests to the configured server's own origin go
//! straight to hyper when the url is plain `http` and the environment
//! names no proxy for it (hyper-util's matcher, the one reqwest itself
//! consults: `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY` and their lower-case
//! forms). Everything else (`https`, another origin, a proxied url) is
//! reqwest's, so TLS, proxies and the same-origin redirect policy stay in
//! one place.
//!
//! Redirects are reqwest's too. The lane opens only after a first request
//! went through reqwest and was answered where it was sent, so a server
//! that redirects never meets the lane. Should it start redirecting later,
//! the lane shuts for good and the request goes again through reqwest: a
//! 301, 302, 307 or 308 says the server did not act on it. A 303 says it
//! did, so it is not sent again; it is the answer (a refusal by status).
//!
//! The lane keeps its own pool: one origin needs no pool key, so a request
//! takes the last connection that came back (hyper-util's pool hashes the
//! scheme and authority three times a request). A pooled connection the
//! server closed before the request went out gives it back, and it goes on
//! the next one, as hyper-util retries it. The connection settings copy
//! reqwest's defaults (no Nagle, TCP keep-alive, a connection idle 90 s is
//! not used again), and the answer is handed back as a `reqwest::Response`
//! whose url is the request's, so reading it is the same whichever way it
//! came.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use hyper::Uri;
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::HOST;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;
use reqwest::header::{ACCEPT, HeaderValue, LOCATION};
use reqwest::{ResponseBuilderExt, StatusCode};
use tower_service::Service;

use super::{HttpOptions, closed_unanswered, innermost_cause};
use crate::lock;
use crate::transport::{HttpFailure, TransportError, TransportErrorKind};

/// How long an idle connection may wait in the pool (reqwest's default).
const POOL_IDLE: Duration = Duration::from_secs(90);
/// TCP keep-alive probes, as reqwest sets them.
const KEEPALIVE: Duration = Duration::from_secs(15);
const KEEPALIVE_RETRIES: u32 = 3;
/// Unacknowledged data fails the connection after this long (reqwest's
/// default on Linux).
#[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections to the origin that wait for a request, the most recently
/// used last, each with the time it came back.
type Idle = Mutex<Vec<(SendRequest<reqwest::Body>, Instant)>>;

/// The direct way to one server's origin: its own pool of HTTP/1.1
/// connections, one origin and so no pool key to hash.
pub(crate) struct DirectLane {
    connector: HttpConnector,
    /// `http://host:port`, what the connector connects to.
    origin: Uri,
    /// The `Host` header of every request (the port only when it is not 80).
    host_header: HeaderValue,
    host: String,
    port: u16,
    /// The configured url and its origin-form request target, which
    /// nearly every request is sent to (parsed once).
    configured: (reqwest::Url, Uri),
    idle: Arc<Idle>,
    /// [`UNTRIED`], [`OPEN`] or [`SHUT`].
    state: AtomicU8,
}

/// No request went through reqwest and came back unredirected yet.
const UNTRIED: u8 = 0;
const OPEN: u8 = 1;
/// The server redirected a request of the lane.
const SHUT: u8 = 2;

impl std::fmt::Debug for DirectLane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectLane")
            .field("host", &self.host)
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// What [`DirectLane::execute`] gives back.
pub(crate) enum Sent {
    /// The server's answer.
    Answered(reqwest::Response),
    /// A redirect the server did not act on: the request goes again
    /// through reqwest, which follows it within the origin.
    Redirected,
}

impl DirectLane {
    /// The lane to `options.url`'s origin, or `None` when its requests must
    /// go through reqwest: a url other than `http`, or a proxy configured
    /// for it.
    pub(crate) fn new(options: &HttpOptions) -> Option<DirectLane> {
        DirectLane::unless_proxied(options, &Matcher::from_system())
    }

    /// [`new`](Self::new) with the proxies `proxies` names.
    fn unless_proxied(options: &HttpOptions, proxies: &Matcher) -> Option<DirectLane> {
        let url = reqwest::Url::parse(&options.url).ok()?;
        if url.scheme() != "http" {
            return None;
        }
        let host = url.host_str()?.to_owned();
        let port = url.port_or_known_default()?;
        let origin: Uri = format!("http://{host}:{port}").parse().ok()?;
        if proxies.intercept(&origin).is_some() {
            return None;
        }
        let configured = (url.clone(), origin_form(&url)?);
        let host_header = match url.port() {
            Some(port) => HeaderValue::from_str(&format!("{host}:{port}")),
            None => HeaderValue::from_str(&host),
        }
        .ok()?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(options.connect_timeout));
        connector.set_keepalive(Some(KEEPALIVE));
        connector.set_keepalive_interval(Some(KEEPALIVE));
        connector.set_keepalive_retries(Some(KEEPALIVE_RETRIES));
        #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
        connector.set_tcp_user_timeout(Some(TCP_USER_TIMEOUT));
        Some(DirectLane {
            connector,
            origin,
            host_header,
            host,
            port,
            configured,
            idle: Arc::new(Mutex::new(Vec::new())),
            state: AtomicU8::new(UNTRIED),
        })
    }

    /// Whether a request to `url` is for this lane's origin.
    fn takes(&self, url: &reqwest::Url) -> bool {
        url.scheme() == "http"
            && url.host_str() == Some(self.host.as_str())
            && url.port_or_known_default() == Some(self.port)
    }

    /// A request to `url` may take this lane now.
    pub(crate) fn open_for(&self, url: &reqwest::Url) -> bool {
        self.state.load(Ordering::Relaxed) == OPEN && self.takes(url)
    }

    /// Notes reqwest's `response` to a request to `url`: answered where it
    /// was sent, without a redirect, it opens the lane.
    pub(crate) fn note(&self, url: &reqwest::Url, response: &reqwest::Response) {
        if response.url() == url && !is_followed(response.status()) && self.takes(url) {
            let _ =
                self.state
                    .compare_exchange(UNTRIED, OPEN, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// Whether no answer opened or shut the lane yet: until one does,
    /// reqwest's answers are [noted](Self::note).
    pub(crate) fn untried(&self) -> bool {
        self.state.load(Ordering::Relaxed) == UNTRIED
    }

    /// Sends `request` and returns the server's answer, or that it was a
    /// redirect the server did not act on (which shuts the lane).
    pub(crate) async fn execute(
        &self,
        server: &str,
        mut request: reqwest::Request,
    ) -> Result<Sent, TransportError> {
        let url = request.url().clone();
        let target = if url == self.configured.0 {
            self.configured.1.clone()
        } else {
            origin_form(&url)
                .ok_or_else(|| super::io_error(server, "the url's path cannot be sent"))?
        };
        let body = request
            .body_mut()
            .take()
            .unwrap_or_else(|| reqwest::Body::from(bytes::Bytes::new()));
        let mut direct = hyper::Request::new(body);
        *direct.method_mut() = request.method().clone();
        *direct.uri_mut() = target;
        *direct.headers_mut() = std::mem::take(request.headers_mut());
        let headers = direct.headers_mut();
        headers.insert(HOST, self.host_header.clone());
        // reqwest sends `Accept: */*` on a request that names none.
        headers
            .entry(ACCEPT)
            .or_insert(HeaderValue::from_static("*/*"));
        let response = self.send(server, direct).await?;
        let status = response.status();
        if is_followed(status) && response.headers().contains_key(LOCATION) {
            self.state.store(SHUT, Ordering::Relaxed);
            if status != StatusCode::SEE_OTHER {
                return Ok(Sent::Redirected);
            }
        }
        Ok(Sent::Answered(answer(response, url)))
    }

    /// Sends `request` on an idle connection, or on a new one when none
    /// waits. A pooled connection the server closed before the request
    /// went out hands it back, and it is tried on the next one.
    async fn send(
        &self,
        server: &str,
        mut request: hyper::Request<reqwest::Body>,
    ) -> Result<hyper::Response<Incoming>, TransportError> {
        loop {
            let (mut sender, reused) = match self.checkout() {
                Some(sender) => (sender, true),
                None => (self.connect(server).await?, false),
            };
            match sender.try_send_request(request).await {
                Ok(response) => {
                    self.give_back(sender);
                    return Ok(response);
                }
                Err(mut failed) => match failed.take_message() {
                    Some(unsent) if reused => request = unsent,
                    _ => return Err(hyper_error(server, &failed.into_error())),
                },
            }
        }
    }

    /// An idle connection ready for a request; closed and expired ones
    /// are dropped on the way.
    fn checkout(&self) -> Option<SendRequest<reqwest::Body>> {
        let mut idle = lock(&self.idle);
        while let Some((sender, since)) = idle.pop() {
            if sender.is_ready() && since.elapsed() < POOL_IDLE {
                return Some(sender);
            }
        }
        None
    }

    /// Puts `sender` back once its connection can take the next request:
    /// at once when the answer was read whole, else when its body ends
    /// (a streamed answer).
    fn give_back(&self, mut sender: SendRequest<reqwest::Body>) {
        if sender.is_ready() {
            lock(&self.idle).push((sender, Instant::now()));
            return;
        }
        if sender.is_closed() {
            return;
        }
        let idle: Weak<Idle> = Arc::downgrade(&self.idle);
        tokio::spawn(async move {
            if sender.ready().await.is_ok()
                && let Some(idle) = idle.upgrade()
            {
                lock(&idle).push((sender, Instant::now()));
            }
        });
    }

    /// A new connection to the origin, its driver on its own task (it ends
    /// when the last sender is dropped or the server closes).
    async fn connect(&self, server: &str) -> Result<SendRequest<reqwest::Body>, TransportError> {
        let mut connector = self.connector.clone();
        let io = async {
            std::future::poll_fn(|cx| connector.poll_ready(cx)).await?;
            connector.call(self.origin.clone()).await
        }
        .await
        .map_err(|e| http_failure(server, HttpFailure::CannotConnect, &e))?;
        let (sender, connection) = http1::handshake(io)
            .await
            .map_err(|e| hyper_error(server, &e))?;
        tokio::spawn(async move {
            // Its failure reaches the request it was carrying.
            let _ = connection.await;
        });
        Ok(sender)
    }
}

/// The request target of a request to `url` in origin-form (its path and
/// query), as a client not talking to a proxy sends it.
fn origin_form(url: &reqwest::Url) -> Option<Uri> {
    url[url::Position::BeforePath..url::Position::AfterQuery]
        .parse()
        .ok()
}

/// The statuses reqwest's redirect policy follows.
fn is_followed(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// hyper's answer as reqwest's, whose `url()` is the request's: without
/// it reqwest would parse a placeholder url for every answer.
fn answer(response: hyper::Response<Incoming>, url: reqwest::Url) -> reqwest::Response {
    let mut response = response.map(reqwest::Body::wrap);
    if let Ok(marker) = hyper::Response::builder().url(url).body(()) {
        response
            .extensions_mut()
            .extend(marker.into_parts().0.extensions);
    }
    reqwest::Response::from(response)
}

/// A failure of a request on the lane as a transport error, classified as
/// [`super::reqwest_error`] classifies reqwest's.
fn hyper_error(server: &str, e: &hyper::Error) -> TransportError {
    let failure = if closed_unanswered(e) {
        HttpFailure::ClosedUnanswered
    } else {
        HttpFailure::Request
    };
    http_failure(server, failure, e)
}

/// `failure` with the innermost cause's text, or the error's own when it
/// has none (hyper's and the connector's never name the url).
fn http_failure(
    server: &str,
    failure: HttpFailure,
    e: &(dyn std::error::Error + 'static),
) -> TransportError {
    let mut detail = innermost_cause(e);
    if detail.is_empty() {
        detail = e.to_string();
    }
    TransportError::new(server, TransportErrorKind::Http { failure, detail })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// What the test server does after reading a request.
    #[derive(Clone, Copy, PartialEq)]
    enum Serve {
        /// Answers and keeps the connection for the next request.
        KeepAlive,
        /// Answers (without saying so) and closes the connection.
        AnswerThenClose,
        /// Closes the connection without answering.
        Hangup,
    }

    /// A loopback HTTP/1.1 server; its url and how many connections it
    /// accepted.
    async fn serve(mode: Serve) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::clone(&connections);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                accepted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 1024];
                    loop {
                        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                            match stream.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                            continue;
                        };
                        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        let length: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse().unwrap());
                        while buf.len() < end + 4 + length {
                            match stream.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        }
                        buf.drain(..end + 4 + length);
                        if mode == Serve::Hangup {
                            return;
                        }
                        let host = head
                            .lines()
                            .find_map(|l| l.strip_prefix("host:"))
                            .unwrap_or("")
                            .trim()
                            .to_owned();
                        let body = format!("{{\"host\":\"{host}\"}}");
                        let answer = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if stream.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                        if mode == Serve::AnswerThenClose {
                            return;
                        }
                    }
                });
            }
        });
        (url, connections)
    }

    fn post(url: &str) -> reqwest::Request {
        let mut request = reqwest::Request::new(reqwest::Method::POST, url.parse().unwrap());
        *request.body_mut() = Some(reqwest::Body::from("{}"));
        request
    }

    async fn answered(lane: &DirectLane, url: &str) -> Result<String, TransportError> {
        match lane.execute("s", post(url)).await? {
            Sent::Answered(response) => {
                assert_eq!(response.url().as_str(), url);
                Ok(response.text().await.unwrap())
            }
            Sent::Redirected => panic!("no redirect here"),
        }
    }

    #[tokio::test]
    async fn one_connection_carries_requests_one_after_another() {
        let (url, connections) = serve(Serve::KeepAlive).await;
        let lane = lane(&url, none()).unwrap();
        let port = url.split(':').nth(2).unwrap().trim_end_matches("/mcp");
        for _ in 0..5 {
            let body = answered(&lane, &url).await.unwrap();
            assert_eq!(body, format!("{{\"host\":\"127.0.0.1:{port}\"}}"));
        }
        assert_eq!(connections.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn requests_at_once_open_connections_that_are_used_again() {
        let (url, connections) = serve(Serve::KeepAlive).await;
        let lane = lane(&url, none()).unwrap();
        let burst = || futures::future::join_all((0..16).map(|_| answered(&lane, &url)));
        assert!(burst().await.iter().all(Result::is_ok));
        let opened = connections.load(Ordering::SeqCst);
        assert!((1..=16).contains(&opened), "{opened}");
        assert!(burst().await.iter().all(Result::is_ok));
        assert_eq!(connections.load(Ordering::SeqCst), opened);
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_is_not_used_again() {
        let (url, connections) = serve(Serve::AnswerThenClose).await;
        let lane = lane(&url, none()).unwrap();
        for _ in 0..3 {
            answered(&lane, &url).await.unwrap();
            // The close reaches the connection's driver before the next.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(connections.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn failures_are_named_as_reqwest_names_them() {
        let (url, _) = serve(Serve::Hangup).await;
        let lane = lane(&url, none()).unwrap();
        let error = answered(&lane, &url).await.unwrap_err();
        assert!(
            matches!(
                error.kind(),
                TransportErrorKind::Http {
                    failure: HttpFailure::ClosedUnanswered,
                    ..
                }
            ),
            "{error:?}"
        );
        let nobody = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", nobody.local_addr().unwrap());
        drop(nobody);
        let lane = super::tests::lane(&url, none()).unwrap();
        let error = answered(&lane, &url).await.unwrap_err();
        let TransportErrorKind::Http { failure, detail } = error.kind() else {
            panic!("{error:?}");
        };
        assert_eq!(*failure, HttpFailure::CannotConnect);
        assert!(detail.contains("refused"), "{detail}");
        assert!(error.to_string().starts_with("s"), "{error}");
    }

    fn lane(url: &str, proxies: Matcher) -> Option<DirectLane> {
        DirectLane::unless_proxied(&HttpOptions::new("s", url), &proxies)
    }

    fn none() -> Matcher {
        Matcher::builder().build()
    }

    #[test]
    fn only_unproxied_plain_http_has_a_lane() {
        assert!(lane("http://127.0.0.1:8080/mcp", none()).is_some());
        assert!(lane("http://example.test/mcp", none()).is_some());
        assert!(lane("https://example.test/mcp", none()).is_none());
        let http_proxy = || Matcher::builder().http("http://proxy.test:3128").build();
        assert!(lane("http://example.test/mcp", http_proxy()).is_none());
        let all_proxy = Matcher::builder().all("http://proxy.test:3128").build();
        assert!(lane("http://example.test/mcp", all_proxy).is_none());
        // A proxy for https only, or one the host is exempt from, leaves it.
        let https_proxy = Matcher::builder().https("http://proxy.test:3128").build();
        assert!(lane("http://example.test/mcp", https_proxy).is_some());
        let exempt = Matcher::builder()
            .http("http://proxy.test:3128")
            .no("example.test")
            .build();
        assert!(lane("http://example.test/mcp", exempt).is_some());
        assert!(
            lane(
                "http://other.test/mcp",
                Matcher::builder()
                    .http("http://proxy.test:3128")
                    .no("example.test")
                    .build()
            )
            .is_none()
        );
    }

    #[test]
    fn the_lane_is_for_its_own_origin() {
        let lane = lane("http://127.0.0.1:8080/mcp", none()).unwrap();
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        assert!(lane.takes(&url("http://127.0.0.1:8080/other?q=1")));
        assert!(!lane.takes(&url("http://127.0.0.1:8081/mcp")));
        assert!(!lane.takes(&url("http://localhost:8080/mcp")));
        assert!(!lane.takes(&url("https://127.0.0.1:8080/mcp")));
        let default_port = super::tests::lane("http://example.test/mcp", none()).unwrap();
        assert!(default_port.takes(&url("http://example.test:80/x")));
        // Shut until an answer through reqwest opens it.
        assert!(!lane.open_for(&url("http://127.0.0.1:8080/mcp")));
    }
}
