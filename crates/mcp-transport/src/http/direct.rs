//! Requests to a plain `http://` server that no proxy stands in front of,
//! sent over hyper's pooled client without reqwest's per-request layers.
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
//! The connection settings copy reqwest's defaults (no Nagle, TCP
//! keep-alive, a 90 s idle pool), and the answer is handed back as a
//! `reqwest::Response` whose url is the request's, so reading it is the
//! same whichever way it came.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use reqwest::header::{ACCEPT, HeaderValue, LOCATION};
use reqwest::{ResponseBuilderExt, StatusCode};

use super::{HttpOptions, closed_unanswered, reqwest_error};
use crate::transport::{HttpFailure, TransportError, TransportErrorKind};

/// How long an idle connection stays in the pool (reqwest's default).
const POOL_IDLE: Duration = Duration::from_secs(90);
/// TCP keep-alive probes, as reqwest sets them.
const KEEPALIVE: Duration = Duration::from_secs(15);
const KEEPALIVE_RETRIES: u32 = 3;
/// Unacknowledged data fails the connection after this long (reqwest's
/// default on Linux).
#[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

/// The direct way to one server's origin.
pub(crate) struct DirectLane {
    client: Client<HttpConnector, reqwest::Body>,
    host: String,
    port: u16,
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
        let uri: hyper::Uri = url.as_str().parse().ok()?;
        if proxies.intercept(&uri).is_some() {
            return None;
        }
        let host = url.host_str()?.to_owned();
        let port = url.port_or_known_default()?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(options.connect_timeout));
        connector.set_keepalive(Some(KEEPALIVE));
        connector.set_keepalive_interval(Some(KEEPALIVE));
        connector.set_keepalive_retries(Some(KEEPALIVE_RETRIES));
        #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
        connector.set_tcp_user_timeout(Some(TCP_USER_TIMEOUT));
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(POOL_IDLE)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Some(DirectLane {
            client,
            host,
            port,
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
        request: reqwest::Request,
    ) -> Result<Sent, TransportError> {
        let url = request.url().clone();
        let mut request =
            hyper::Request::try_from(request).map_err(|e| reqwest_error(server, e))?;
        // reqwest sends `Accept: */*` on a request that names none.
        request
            .headers_mut()
            .entry(ACCEPT)
            .or_insert(HeaderValue::from_static("*/*"));
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| hyper_error(server, &e))?;
        let status = response.status();
        if is_followed(status) && response.headers().contains_key(LOCATION) {
            self.state.store(SHUT, Ordering::Relaxed);
            if status != StatusCode::SEE_OTHER {
                return Ok(Sent::Redirected);
            }
        }
        Ok(Sent::Answered(answer(response, url)))
    }
}

/// The statuses reqwest's redirect policy follows.
fn is_followed(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// hyper's answer as reqwest's, whose `url()` is the request's: without
/// it reqwest would parse a placeholder url for every answer.
fn answer(
    response: hyper::Response<hyper::body::Incoming>,
    url: reqwest::Url,
) -> reqwest::Response {
    let mut response = response.map(reqwest::Body::wrap);
    if let Ok(marker) = hyper::Response::builder().url(url).body(()) {
        response
            .extensions_mut()
            .extend(marker.into_parts().0.extensions);
    }
    reqwest::Response::from(response)
}

/// A failure of the direct lane as a transport error, classified as
/// [`super::reqwest_error`] classifies reqwest's: the innermost cause's
/// text, never the url.
fn hyper_error(server: &str, e: &hyper_util::client::legacy::Error) -> TransportError {
    let failure = if e.is_connect() {
        HttpFailure::CannotConnect
    } else if closed_unanswered(e) {
        HttpFailure::ClosedUnanswered
    } else {
        HttpFailure::Request
    };
    TransportError::new(
        server,
        TransportErrorKind::Http {
            failure,
            detail: super::innermost_cause(e),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
