//! The user's side of the authorization-code flow: the loopback redirect
//! listener, the [`AuthorizationPrompt`] a host implements (open a browser,
//! or print the URL and read a pasted redirect), and a headless prompt that
//! follows the authorization URL itself.

use std::fmt::Debug;

use async_trait::async_trait;
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use url::Url;

use crate::{AuthError, Secret};

/// Shows the authorization URL to the user. The library never prints: the
/// host decides how (browser, terminal, a UI).
#[async_trait]
pub trait AuthorizationPrompt: Send + Sync + Debug {
    /// Presents `authorization_url`. Returns the redirect URL when the prompt
    /// obtained it itself (a pasted URL, or a headless fetch); returns
    /// `Ok(None)` to wait for the browser to reach the loopback listener.
    /// The flow races this against the listener, so a prompt may also wait
    /// for input that never comes.
    async fn present(&self, authorization_url: &Url) -> Result<Option<Url>, AuthError>;

    /// Asked before a sign-in the user did not start: a server refused a
    /// request (401, or 403 for more scope) and the grant needs a person.
    /// An `Err` ends it there, before anything is sent to the server's
    /// metadata or to an authorization server, so a host whose sign-in is
    /// a separate command says so here (the error reaches the caller as
    /// it is). The default lets the sign-in go on.
    fn allow_unrequested(&self) -> Result<(), AuthError> {
        Ok(())
    }
}

/// Follows the authorization URL with redirects off and returns the
/// `Location` it answers with: for servers that approve at once (test
/// servers, pre-approved clients). Never involves a person.
#[derive(Debug, Clone)]
pub struct HeadlessPrompt {
    http: reqwest::Client,
}

impl HeadlessPrompt {
    /// A headless prompt with its own no-redirect client.
    pub fn new() -> Result<Self, AuthError> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|e| {
                AuthError::failed("headless prompt", format!("cannot build http client: {e}"))
                    .with_source(e)
            })?;
        Ok(Self { http })
    }
}

#[async_trait]
impl AuthorizationPrompt for HeadlessPrompt {
    async fn present(&self, authorization_url: &Url) -> Result<Option<Url>, AuthError> {
        let endpoint = endpoint_only(authorization_url);
        let fail =
            |message: String| AuthError::http("authorization endpoint", endpoint.clone(), message);
        let response = self
            .http
            .get(authorization_url.clone())
            .send()
            .await
            .map_err(|e| {
                let e = e.without_url();
                fail(e.to_string()).with_source(e)
            })?;
        if !response.status().is_redirection() {
            return Err(fail(format!(
                "expected a redirect, got status {}",
                response.status().as_u16()
            )));
        }
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| fail("redirect without a Location header".into()))?;
        let url = authorization_url
            .join(location)
            .map_err(|e| fail(format!("Location is not a url: {e}")).with_source(e))?;
        Ok(Some(url))
    }
}

/// The host's way of showing the URL; an `Err` message fails the login.
pub(crate) type ShowUrl = dyn Fn(&Url) -> Result<(), String> + Send + Sync;

/// Shows the authorization URL through a host callback (open a browser,
/// print it) and, for `--no-browser`, reads the redirect URL the user pastes
/// from an input. Without an input it waits for the loopback listener.
pub struct InteractivePrompt {
    show: Box<ShowUrl>,
    pasted: Option<tokio::sync::Mutex<Box<dyn AsyncBufRead + Send + Unpin>>>,
}

impl std::fmt::Debug for InteractivePrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteractivePrompt")
            .field("reads_pasted_redirect", &self.pasted.is_some())
            .finish_non_exhaustive()
    }
}

impl InteractivePrompt {
    /// A prompt that hands the URL to `show` (which opens a browser or
    /// prints; an `Err` message fails the login).
    pub fn new(show: impl Fn(&Url) -> Result<(), String> + Send + Sync + 'static) -> Self {
        Self {
            show: Box::new(show),
            pasted: None,
        }
    }

    /// Also reads a pasted redirect URL (one line) from `input`. The
    /// loopback listener keeps listening meanwhile; whichever answers first
    /// wins.
    pub fn with_pasted_input(mut self, input: impl AsyncBufRead + Send + Unpin + 'static) -> Self {
        self.pasted = Some(tokio::sync::Mutex::new(Box::new(input)));
        self
    }
}

#[async_trait]
impl AuthorizationPrompt for InteractivePrompt {
    async fn present(&self, authorization_url: &Url) -> Result<Option<Url>, AuthError> {
        (self.show)(authorization_url)
            .map_err(|message| AuthError::failed("authorization prompt", message))?;
        let Some(input) = &self.pasted else {
            return Ok(None);
        };
        let mut input = input.lock().await;
        loop {
            let mut line = String::new();
            let read = input.read_line(&mut line).await.map_err(|e| {
                AuthError::failed(
                    "authorization prompt",
                    format!("cannot read the pasted redirect url: {e}"),
                )
                .with_source(e)
            })?;
            if read == 0 {
                // End of input: only the listener can complete the login.
                return Ok(None);
            }
            if !line.trim().is_empty() {
                return parse_pasted_redirect(&line).map(Some);
            }
        }
    }
}

/// Reads a pasted redirect: the full URL the browser showed, or just its
/// query (`code=…&state=…`, with or without the `?`).
pub(crate) fn parse_pasted_redirect(text: &str) -> Result<Url, AuthError> {
    let text = text.trim();
    let fail = || {
        AuthError::failed(
            "authorization prompt",
            "the pasted text is not a redirect url with a code and state",
        )
    };
    let url = if text.contains("://") {
        Url::parse(text).map_err(|_| fail())?
    } else {
        let query = text.trim_start_matches('?');
        let mut url = Url::parse("http://127.0.0.1/callback").map_err(|_| fail())?;
        url.set_query(Some(query));
        url
    };
    if !url.query_pairs().any(|(k, _)| k == "code" || k == "error") {
        return Err(fail());
    }
    Ok(url)
}

/// The authorization endpoint without its query, for error messages.
pub(crate) fn endpoint_only(url: &Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// A loopback listener for the authorization redirect, on
/// `127.0.0.1:<port>` (a random port when none is configured).
#[derive(Debug)]
pub struct CallbackListener {
    listener: TcpListener,
    redirect_uri: Url,
}

const CALLBACK_PATH: &str = "/callback";

impl CallbackListener {
    /// Binds `127.0.0.1:port` (`None` or 0: any free port).
    pub async fn bind(server: &str, port: Option<u16>) -> Result<Self, AuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .map_err(|e| {
                AuthError::config(
                    server.to_owned(),
                    "oauth.callbackPort",
                    format!("cannot listen on 127.0.0.1:{}: {e}", port.unwrap_or(0)),
                )
                .with_source(e)
            })?;
        let bound = listener.local_addr().map_err(|e| {
            AuthError::failed(
                server.to_owned(),
                format!("callback listener has no address: {e}"),
            )
            .with_source(e)
        })?;
        let redirect_uri = Url::parse(&format!("http://127.0.0.1:{}{CALLBACK_PATH}", bound.port()))
            .map_err(|e| {
                AuthError::failed(server.to_owned(), format!("callback url: {e}")).with_source(e)
            })?;
        Ok(Self {
            listener,
            redirect_uri,
        })
    }

    /// The `redirect_uri` to register and send.
    pub fn redirect_uri(&self) -> &Url {
        &self.redirect_uri
    }

    /// Waits for the browser's redirect to the callback path, checks it with
    /// `validate` and answers the browser with a page saying whether the
    /// sign-in to `server` succeeded. Other paths (a favicon) get a 404 and
    /// the wait goes on; a redirect that fails validation ends the wait with
    /// that error, so a forged or refused response never hangs the login.
    pub async fn wait_for<T>(
        &self,
        server: &str,
        validate: impl Fn(&Url) -> Result<T, AuthError>,
    ) -> Result<T, AuthError> {
        loop {
            let Ok((mut stream, _)) = self.listener.accept().await else {
                continue;
            };
            let mut buf = Vec::with_capacity(2048);
            let mut chunk = [0u8; 1024];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let head = String::from_utf8_lossy(&buf);
            let target = head
                .lines()
                .next()
                .and_then(|line| {
                    let mut parts = line.split(' ');
                    (parts.next() == Some("GET"))
                        .then(|| parts.next())
                        .flatten()
                })
                .unwrap_or("");
            let Ok(url) = self.redirect_uri.join(target) else {
                continue;
            };
            if url.path() != CALLBACK_PATH {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let outcome = validate(&url);
            let (status, page) = match &outcome {
                Ok(_) => ("200 OK", callback_page(server, None)),
                Err(e) => ("400 Bad Request", callback_page(server, Some(&reason(e)))),
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.shutdown().await;
            return outcome;
        }
    }

    /// Waits for the redirect and returns it unchecked (the page says the
    /// sign-in succeeded); prefer [`CallbackListener::wait_for`].
    pub async fn wait(&self) -> Result<Url, AuthError> {
        self.wait_for("the server", |url| Ok(url.clone())).await
    }
}

/// The error's message without the "authorization for X failed" frame,
/// which the page already says.
fn reason(error: &AuthError) -> String {
    match error.kind() {
        crate::AuthErrorKind::Failed { message } => message.clone(),
        _ => error.to_string(),
    }
}

/// The page the browser shows after the redirect.
fn callback_page(server: &str, failure: Option<&str>) -> String {
    let server = html_escape(server);
    match failure {
        None => format!(
            "<!doctype html><meta charset=utf-8><title>Sign-in succeeded</title>\
             <p>Sign-in to {server} succeeded. You can close this window.</p>"
        ),
        Some(reason) => format!(
            "<!doctype html><meta charset=utf-8><title>Sign-in failed</title>\
             <p>Sign-in to {server} failed: {}</p>",
            html_escape(reason)
        ),
    }
}

fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// What an authorization response must match: the request's `state`
/// and, for RFC 9207, the issuer recorded from the authorization server's
/// validated metadata before the user was sent there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ExpectedResponse<'a> {
    /// The `state` sent with the request.
    pub state: &'a str,
    /// The recorded issuer; `None` when no metadata document vouched for
    /// one (a 2025-03-26 server without metadata), so there is nothing
    /// authentic to compare with.
    pub issuer: Option<&'a str>,
    /// The metadata's `authorization_response_iss_parameter_supported`:
    /// a response without `iss` is then refused.
    pub iss_required: bool,
}

impl<'a> ExpectedResponse<'a> {
    /// A response checked on `state` alone.
    #[cfg(test)]
    pub(crate) fn state_only(state: &'a str) -> Self {
        Self {
            state,
            issuer: None,
            iss_required: false,
        }
    }
}

/// Longest `iss` or `error` text quoted back in a message.
const QUOTED_MAX: usize = 200;

/// Reads the code from the redirect. The issuer is checked first (RFC 9207
/// section 2.4, by simple string comparison after form decoding, with no
/// URL normalisation), so a mixed-up response's `error` is never acted on
/// or shown; then `state`, then any `error`. Messages never include the
/// code.
pub(crate) fn code_from_redirect(
    server: &str,
    redirect: &Url,
    expected: &ExpectedResponse<'_>,
) -> Result<Secret, AuthError> {
    let fail = |message: String| AuthError::failed(server.to_owned(), message);
    let mut code = None;
    let mut state = None;
    let mut error = None;
    let mut description = None;
    let mut iss = None;
    for (k, v) in redirect.query_pairs() {
        match k.as_ref() {
            "code" => code = Some(v.into_owned()),
            "state" => state = Some(v.into_owned()),
            "error" => error = Some(v.into_owned()),
            "error_description" => description = Some(v.into_owned()),
            "iss" => iss = Some(v.into_owned()),
            _ => {}
        }
    }
    match (&iss, expected.issuer) {
        (Some(got), Some(want)) if got != want => {
            return Err(fail(format!(
                "the authorization response names issuer `{}`, not `{want}` (a mix-up attack or a misconfigured server); the code was not used",
                quoted(got)
            )));
        }
        (None, _) if expected.iss_required => {
            return Err(fail(
                "the authorization server says it sends `iss` but the response has none; the code was not used".into(),
            ));
        }
        _ => {}
    }
    if state.as_deref() != Some(expected.state) {
        return Err(fail(
            "the redirect's state does not match the request (possible forgery)".into(),
        ));
    }
    if let Some(error) = error {
        let detail = description
            .map(|d| format!(": {}", quoted(&d)))
            .unwrap_or_default();
        return Err(fail(format!(
            "authorization server refused: {}{detail}",
            quoted(&error)
        )));
    }
    code.map(Secret::new)
        .ok_or_else(|| fail("the redirect carries no authorization code".into()))
}

/// Outside text cut to a readable length; the CLI escapes it for the
/// terminal, the callback page for HTML.
fn quoted(text: &str) -> String {
    if text.chars().count() <= QUOTED_MAX {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(QUOTED_MAX).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `query` as a redirect checked against state `st8` and `issuer`
    /// (required when `iss_required`).
    fn check(issuer: Option<&str>, iss_required: bool, query: &str, expect: Result<&str, &str>) {
        let url = Url::parse(&format!("http://127.0.0.1:1/callback?{query}")).unwrap();
        let expected = ExpectedResponse {
            state: "st8",
            issuer,
            iss_required,
        };
        let got = code_from_redirect("srv", &url, &expected);
        match (got, expect) {
            (Ok(code), Ok(want)) => assert_eq!(code.expose(), want),
            (Err(e), Err(want)) => {
                let text = e.to_string();
                assert_eq!(text, want);
                assert!(!text.contains("c0de"), "{text}");
            }
            (got, want) => panic!("{query}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn the_issuer_is_compared_as_a_plain_string_before_anything_is_acted_on() {
        let issuer = Some("https://as.example");
        let mixed_up = "authorization for srv failed: the authorization response names issuer `https://evil.example`, not `https://as.example` (a mix-up attack or a misconfigured server); the code was not used";
        let missing = "authorization for srv failed: the authorization server says it sends `iss` but the response has none; the code was not used";
        let normalised = |got: &str| {
            format!(
                "authorization for srv failed: the authorization response names issuer `{got}`, not `https://as.example` (a mix-up attack or a misconfigured server); the code was not used"
            )
        };
        // advertised + present: compared.
        check(
            issuer,
            true,
            "code=c0de&state=st8&iss=https%3A%2F%2Fas.example",
            Ok("c0de"),
        );
        check(
            issuer,
            true,
            "code=c0de&state=st8&iss=https://evil.example",
            Err(mixed_up),
        );
        // advertised + absent: refused.
        check(issuer, true, "code=c0de&state=st8", Err(missing));
        // not advertised + present: still compared.
        check(
            issuer,
            false,
            "code=c0de&state=st8&iss=https://evil.example",
            Err(mixed_up),
        );
        check(
            issuer,
            false,
            "code=c0de&state=st8&iss=https://as.example",
            Ok("c0de"),
        );
        // not advertised + absent: proceed.
        check(issuer, false, "code=c0de&state=st8", Ok("c0de"));
        // No normalisation: trailing slash, case, default port, percent-encoding.
        for (query, got) in [
            ("iss=https://as.example/", "https://as.example/"),
            ("iss=HTTPS://AS.EXAMPLE", "HTTPS://AS.EXAMPLE"),
            ("iss=https://as.example:443", "https://as.example:443"),
            ("iss=https://as.ex%2561mple", "https://as.ex%61mple"),
        ] {
            check(
                issuer,
                true,
                &format!("code=c0de&state=st8&{query}"),
                Err(&normalised(got)),
            );
        }
        // A mixed-up error response's error is neither acted on nor shown.
        check(
            issuer,
            false,
            "error=access_denied&error_description=click+here&state=st8&iss=https://evil.example",
            Err(mixed_up),
        );
        // Without an authentic recorded issuer there is nothing to compare.
        check(
            None,
            false,
            "code=c0de&state=st8&iss=https://anything",
            Ok("c0de"),
        );
    }

    #[test]
    fn the_callback_page_escapes_what_it_quotes_and_long_values_are_cut() {
        let page = callback_page("<b>srv</b>", Some("issuer `\"><script>x</script>`"));
        assert!(page.contains("<title>Sign-in failed</title>"), "{page}");
        assert!(
            page.contains(
                "Sign-in to &lt;b&gt;srv&lt;/b&gt; failed: issuer `&quot;&gt;&lt;script&gt;"
            ),
            "{page}"
        );
        assert!(!page.contains("<script>"), "{page}");
        let ok = callback_page("srv", None);
        assert!(
            ok.contains("Sign-in to srv succeeded. You can close this window."),
            "{ok}"
        );
        let long = "x".repeat(10_000);
        let url = Url::parse(&format!(
            "http://127.0.0.1:1/callback?code=c&state=st8&iss={long}"
        ))
        .unwrap();
        let expected = ExpectedResponse {
            state: "st8",
            issuer: Some("https://as.example"),
            iss_required: true,
        };
        let err = code_from_redirect("srv", &url, &expected)
            .unwrap_err()
            .to_string();
        assert!(err.len() < 600, "{} bytes", err.len());
        assert!(err.contains('…'), "{err}");
    }

    #[test]
    fn redirect_parsing() {
        check(None, false, "code=c0de&state=st8", Ok("c0de"));
        check(
            None,
            false,
            "code=c0de&state=other",
            Err(
                "authorization for srv failed: the redirect's state does not match the request (possible forgery)",
            ),
        );
        check(
            None,
            false,
            "code=c0de",
            Err(
                "authorization for srv failed: the redirect's state does not match the request (possible forgery)",
            ),
        );
        check(
            None,
            false,
            "error=access_denied&error_description=user+said+no&state=st8",
            Err(
                "authorization for srv failed: authorization server refused: access_denied: user said no",
            ),
        );
        check(
            None,
            false,
            "state=st8",
            Err("authorization for srv failed: the redirect carries no authorization code"),
        );
    }

    #[tokio::test]
    async fn pasted_redirects_are_read_line_by_line() {
        let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = shown.clone();
        let prompt = InteractivePrompt::new(move |url| {
            seen.lock().unwrap().push(url.to_string());
            Ok(())
        })
        .with_pasted_input(std::io::Cursor::new(
            b"\n  http://127.0.0.1:5/callback?code=abc&state=s1  \n".to_vec(),
        ));
        let auth = Url::parse("http://as/authorize?x=1").unwrap();
        let got = prompt.present(&auth).await.unwrap().unwrap();
        assert_eq!(
            code_from_redirect("srv", &got, &ExpectedResponse::state_only("s1"))
                .unwrap()
                .expose(),
            "abc"
        );
        assert_eq!(*shown.lock().unwrap(), ["http://as/authorize?x=1"]);
        // Input exhausted: wait for the listener instead.
        assert_eq!(prompt.present(&auth).await.unwrap(), None);
        let browser_only = InteractivePrompt::new(|_| Ok(()));
        assert_eq!(browser_only.present(&auth).await.unwrap(), None);
        let failing = InteractivePrompt::new(|_| Err("no browser found".into()));
        assert_eq!(
            failing.present(&auth).await.unwrap_err().to_string(),
            "authorization for authorization prompt failed: no browser found"
        );
    }

    #[test]
    fn pasted_forms() {
        for ok in [
            "code=a&state=b",
            "?code=a&state=b",
            "http://127.0.0.1:9/callback?code=a&state=b",
        ] {
            let url = parse_pasted_redirect(ok).unwrap();
            assert_eq!(
                code_from_redirect("s", &url, &ExpectedResponse::state_only("b"))
                    .unwrap()
                    .expose(),
                "a",
                "{ok}"
            );
        }
        for bad in ["hello", "http://127.0.0.1:9/callback", "::::"] {
            assert!(parse_pasted_redirect(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn configured_callback_port_is_used_or_named_in_the_error() {
        let listener = CallbackListener::bind("srv", None).await.unwrap();
        let port = listener.redirect_uri().port().unwrap();
        assert_eq!(
            listener.redirect_uri().as_str(),
            format!("http://127.0.0.1:{port}/callback")
        );
        let err = CallbackListener::bind("srv", Some(port))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "oauth settings for srv: oauth.callbackPort: cannot listen on 127.0.0.1:{port}: "
            )),
            "{err}"
        );
        drop(listener);
        let again = CallbackListener::bind("srv", Some(port)).await.unwrap();
        assert_eq!(again.redirect_uri().port(), Some(port));
    }

    #[tokio::test]
    async fn loopback_listener_returns_the_callback_url() {
        let listener = CallbackListener::bind("srv", None).await.unwrap();
        let redirect = listener.redirect_uri().clone();
        assert_eq!(redirect.host_str(), Some("127.0.0.1"));
        let client = reqwest::Client::new();
        let base = redirect.clone();
        let browser = tokio::spawn(async move {
            let miss = client
                .get(base.join("/favicon.ico").unwrap())
                .send()
                .await
                .unwrap();
            assert_eq!(miss.status(), 404);
            let hit = client
                .get(format!("{base}?code=abc&state=xyz"))
                .send()
                .await
                .unwrap();
            assert_eq!(hit.status(), 200);
        });
        let got = listener.wait().await.unwrap();
        browser.await.unwrap();
        assert_eq!(
            code_from_redirect("srv", &got, &ExpectedResponse::state_only("xyz"))
                .unwrap()
                .expose(),
            "abc"
        );
    }
}
