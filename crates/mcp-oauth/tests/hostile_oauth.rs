//! Hostile or failing authorization servers: an answer without end is cut
//! at the cap with an error naming the server, and a refresh that meets a
//! passing failure (a 5xx, a 429) keeps every stored credential, so the
//! next request refreshes instead of asking for a new sign-in.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mcp_config::McpOAuthConfig;
use mcp_oauth::CredentialStore;
use support::{call, fixture, lock};

#[tokio::test(flavor = "multi_thread")]
async fn a_token_answer_larger_than_the_cap_fails_naming_the_server() {
    let f = fixture(McpOAuthConfig::default()).await;
    lock(&f.server).huge_token_answer = true;
    let err = call(&f).await.unwrap_err().to_string();
    assert!(err.contains("for loopback failed"), "{err}");
    assert!(err.contains("larger than 1048576 bytes"), "{err}");
    assert!(f.provider.tokens().await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refresh_that_meets_a_passing_failure_keeps_the_stored_credentials() {
    for status in [503, 500, 429] {
        let f = fixture(McpOAuthConfig::default()).await;
        assert_eq!(call(&f).await.unwrap(), 200);
        let before = f.store.load(f.provider.store_key()).unwrap().unwrap();
        {
            let mut b = lock(&f.server);
            b.live_access.clear();
            b.refresh_failure = Some(status);
        }
        let err = call(&f).await.unwrap_err().to_string();
        assert!(
            err.contains("token refresh failed") && err.contains("stored credentials kept"),
            "{status}: {err}"
        );
        assert_eq!(
            f.store.load(f.provider.store_key()).unwrap().unwrap(),
            before,
            "{status}: nothing stored is lost"
        );
        // Once the server is back, the same refresh token works: no new
        // sign-in.
        lock(&f.server).refresh_failure = None;
        assert_eq!(call(&f).await.unwrap(), 200, "{status}");
        let b = lock(&f.server);
        assert_eq!(b.authorize_requests, 1, "{status}");
        assert_eq!(
            b.token_requests,
            ["authorization_code", "refresh_token", "refresh_token"],
            "{status}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_redirect_that_is_not_a_url_names_the_server() {
    use std::sync::Arc;

    use mcp_oauth::{InteractivePrompt, MemoryCredentialStore, OAuthProvider, OAuthSettings};

    let (base, _server) = support::serve().await;
    let prompt = InteractivePrompt::new(|_| Ok(()))
        .with_pasted_input(std::io::Cursor::new(b"hello, not a url\n".to_vec()));
    let provider = OAuthProvider::new(
        OAuthSettings::new("pasted", format!("{base}/mcp"), McpOAuthConfig::default()),
        Arc::new(MemoryCredentialStore::new()),
        Arc::new(prompt),
    )
    .unwrap();
    let err = provider.login().await.unwrap_err().to_string();
    assert_eq!(
        err,
        "authorization for pasted failed: the pasted text is not a redirect url with a code and state"
    );
}

/// A hostile MCP server or authorization server: answers from documents
/// in which `{base}` (its own origin) and `{other}` (the other hostile
/// server's) are filled in, and records every request it sees.
mod hostile {
    use std::sync::{Arc, Mutex};

    use axum::extract::State;
    use axum::http::{Method, StatusCode, Uri};
    use axum::response::{IntoResponse, Response};
    use serde_json::Value;

    #[derive(Debug, Default)]
    pub(crate) struct Script {
        pub(crate) base: String,
        pub(crate) other: String,
        pub(crate) challenge: Option<String>,
        pub(crate) prm: Option<Value>,
        pub(crate) as_metadata: Option<Value>,
        pub(crate) seen: Vec<String>,
    }

    pub(crate) type Shared = Arc<Mutex<Script>>;

    pub(crate) fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Script> {
        s.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fill(v: &Value, s: &Script) -> Value {
        let text = v
            .to_string()
            .replace("{base}", &s.base)
            .replace("{other}", &s.other);
        serde_json::from_str(&text).unwrap()
    }

    async fn any(State(s): State<Shared>, method: Method, uri: Uri) -> Response {
        let mut s = lock(&s);
        s.seen.push(format!("{method} {}", uri.path()));
        let json = |v: &Option<Value>, s: &Script| match v {
            Some(v) => axum::Json(fill(v, s)).into_response(),
            None => StatusCode::NOT_FOUND.into_response(),
        };
        match (method.as_str(), uri.path()) {
            ("POST", "/mcp") => {
                let www = s
                    .challenge
                    .clone()
                    .unwrap_or_else(|| "Bearer".into())
                    .replace("{base}", &s.base)
                    .replace("{other}", &s.other);
                (StatusCode::UNAUTHORIZED, [("www-authenticate", www)]).into_response()
            }
            ("GET", p) if p.starts_with("/.well-known/oauth-protected-resource") => {
                json(&s.prm, &s)
            }
            ("GET", p) if p.starts_with("/.well-known/") => json(&s.as_metadata, &s),
            ("POST", "/register") => {
                axum::Json(serde_json::json!({"client_id": "hostile"})).into_response()
            }
            ("POST", "/token") => {
                axum::Json(serde_json::json!({"access_token": "t", "token_type": "Bearer"}))
                    .into_response()
            }
            _ => StatusCode::NOT_FOUND.into_response(),
        }
    }

    pub(crate) async fn serve() -> (String, Shared) {
        let shared: Shared = Arc::default();
        let app = axum::Router::new().fallback(any).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        lock(&shared).base = base.clone();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (base, shared)
    }
}

/// One hostile sign-in: the MCP server (`{base}`) answers 401 with
/// `challenge` and serves `prm` and `as_metadata`; the other server
/// (`{other}`) serves the same documents. The test's browser records the
/// URLs it is handed and signs in nowhere.
struct Outcome {
    error: String,
    /// What the two servers saw beyond the MCP request and the resource
    /// metadata at the MCP server's origin.
    sent: Vec<String>,
    /// The URLs the browser was handed.
    browser: Vec<String>,
}

impl Outcome {
    /// Requests for authorization-server metadata.
    fn metadata_fetches(&self) -> usize {
        self.sent
            .iter()
            .filter(|r| r.starts_with("GET /.well-known/"))
            .count()
    }
}

async fn hostile_login(
    location: Option<mcp_oauth::HostClass>,
    challenge: Option<&str>,
    prm: Option<serde_json::Value>,
    as_metadata: Option<serde_json::Value>,
) -> Outcome {
    use std::sync::{Arc, Mutex};

    use mcp_oauth::{InteractivePrompt, MemoryCredentialStore, OAuthProvider, OAuthSettings};

    let (base, server) = hostile::serve().await;
    let (other, elsewhere) = hostile::serve().await;
    for s in [&server, &elsewhere] {
        let mut s = hostile::lock(s);
        s.base = base.clone();
        s.other = other.clone();
        s.challenge = challenge.map(str::to_owned);
        s.prm = prm.clone();
        s.as_metadata = as_metadata.clone();
    }
    let opened = Arc::new(Mutex::new(Vec::new()));
    let browser = {
        let opened = opened.clone();
        InteractivePrompt::new(move |url| {
            opened.lock().unwrap().push(url.to_string());
            Err("the test's browser signs in nowhere".into())
        })
    };
    let mut settings =
        OAuthSettings::new("hostile", format!("{base}/mcp"), McpOAuthConfig::default());
    if let Some(location) = location {
        settings = settings.with_server_location(location);
    }
    let provider = OAuthProvider::new(
        settings,
        Arc::new(MemoryCredentialStore::new()),
        Arc::new(browser),
    )
    .unwrap();
    let error = provider.login().await.unwrap_err().to_string();
    let mut sent: Vec<String> = hostile::lock(&server)
        .seen
        .iter()
        .filter(|r| {
            *r != "POST /mcp" && !r.starts_with("GET /.well-known/oauth-protected-resource")
        })
        .cloned()
        .collect();
    sent.extend(hostile::lock(&elsewhere).seen.iter().cloned());
    let browser = opened.lock().unwrap().clone();
    Outcome {
        error,
        sent,
        browser,
    }
}

fn prm_naming(issuer: &str) -> serde_json::Value {
    serde_json::json!({"resource": "{base}/mcp", "authorization_servers": [issuer]})
}

fn as_metadata_at(origin: &str) -> serde_json::Value {
    serde_json::json!({
        "issuer": origin,
        "authorization_endpoint": format!("{origin}/authorize"),
        "token_endpoint": format!("{origin}/token"),
        "registration_endpoint": format!("{origin}/register"),
        "revocation_endpoint": format!("{origin}/revoke"),
        "code_challenge_methods_supported": ["S256"]
    })
}

/// The metadata of the authorization server `{base}` with `field` set to
/// `value`.
fn as_metadata_with(field: &str, value: &str) -> serde_json::Value {
    let mut m = as_metadata_at("{base}");
    m[field] = value.into();
    m
}

/// The sign-in failed with `error_has`, and the authorization servers saw
/// `metadata` metadata requests and nothing else, the browser nothing.
#[track_caller]
fn check_refused(case: &str, outcome: &Outcome, error_has: &str, metadata: usize) {
    let Outcome {
        error,
        sent,
        browser,
    } = outcome;
    assert!(error.contains(error_has), "{case}: {error}");
    assert_eq!(
        (outcome.metadata_fetches(), sent.len(), browser.len()),
        (metadata, metadata, 0),
        "{case}: {sent:?} {browser:?}"
    );
}

/// A server that is not on loopback (declared so: it is reached through a
/// loopback port here) never sends us to loopback, and no authorization
/// server is reached over plain http from it: not a named one, not its own
/// origin guessed for a 2025-03-26 server, not a metadata location its
/// challenge names elsewhere.
#[tokio::test(flavor = "multi_thread")]
async fn a_remote_server_cannot_send_us_to_loopback_or_over_plain_http() {
    use mcp_oauth::HostClass::{Private, Public};

    for (location, issuer, error_has) in [
        (
            Public,
            "{other}",
            "a public server may not send us to a loopback address",
        ),
        (
            Public,
            "https://127.0.0.1:1",
            "a public server may not send us to a loopback address",
        ),
        (
            Public,
            "http://localhost:1",
            "a public server may not send us to a loopback address",
        ),
        (
            Public,
            "http://[::ffff:127.0.0.1]:1",
            "a public server may not send us to a loopback address",
        ),
        (
            Public,
            "http://0.0.0.0:1",
            "a public server may not send us to a loopback address",
        ),
        (
            Public,
            "http://169.254.169.254",
            "a public server may not send us to a link-local address",
        ),
        (
            Public,
            "http://[fe80::1]",
            "a public server may not send us to a link-local address",
        ),
        (
            Public,
            "https://192.168.1.1",
            "a public server may not send us to a private-use address",
        ),
        (
            Private,
            "{other}",
            "a private-use server may not send us to a loopback address",
        ),
        (
            Private,
            "https://169.254.169.254",
            "a private-use server may not send us to a link-local address",
        ),
    ] {
        let outcome = hostile_login(
            Some(location),
            None,
            Some(prm_naming(issuer)),
            Some(as_metadata_at("{other}")),
        )
        .await;
        check_refused(
            &format!("{location:?} naming {issuer}"),
            &outcome,
            error_has,
            0,
        );
    }
    // No resource metadata: the server's own plain-http origin would be
    // the authorization server, its metadata fetched and `/register`
    // guessed.
    let outcome = hostile_login(Some(Public), None, None, Some(as_metadata_at("{base}"))).await;
    check_refused(
        "guessed endpoints",
        &outcome,
        "refused the authorization server",
        0,
    );
    // A metadata location on another origin is a URL the server named.
    let outcome = hostile_login(
        Some(Public),
        Some(r#"Bearer resource_metadata="{other}/.well-known/oauth-protected-resource/mcp""#),
        Some(prm_naming("{other}")),
        Some(as_metadata_at("{other}")),
    )
    .await;
    check_refused(
        "metadata named elsewhere",
        &outcome,
        "refused the protected resource metadata",
        0,
    );
}

/// Every endpoint an authorization server names is judged before any is
/// used, even for a server on loopback: a bad one gets nothing sent to the
/// authorization server at all (no registration), and the browser is
/// handed only https, or http on loopback.
#[tokio::test(flavor = "multi_thread")]
async fn an_authorization_server_naming_a_bad_endpoint_gets_nothing() {
    for (field, value, error_has) in [
        (
            "authorization_endpoint",
            "javascript:alert(document.cookie)//",
            "scheme `javascript`",
        ),
        (
            "authorization_endpoint",
            "file:///etc/passwd",
            "scheme `file`",
        ),
        (
            "authorization_endpoint",
            "data:text/html,<script>alert(1)</script>",
            "scheme `data`",
        ),
        (
            "authorization_endpoint",
            "http://192.0.2.1/authorize",
            "plain http",
        ),
        (
            "authorization_endpoint",
            "https://169.254.169.254/authorize",
            "link-local",
        ),
        (
            "token_endpoint",
            "http://169.254.169.254/latest/meta-data/",
            "link-local",
        ),
        ("token_endpoint", "http://[fe80::1]/token", "link-local"),
        (
            "token_endpoint",
            "http://[64:ff9b::a9fe:a9fe]/token",
            "link-local",
        ),
        ("token_endpoint", "http://192.0.2.1/token", "plain http"),
        ("token_endpoint", "ftp://127.0.0.1:1/token", "scheme `ftp`"),
        (
            "registration_endpoint",
            "http://192.0.2.1/register",
            "plain http",
        ),
        (
            "registration_endpoint",
            "file:///tmp/register",
            "scheme `file`",
        ),
        (
            "revocation_endpoint",
            "http://[::ffff:169.254.169.254]/revoke",
            "link-local",
        ),
    ] {
        let outcome = hostile_login(
            None,
            None,
            Some(prm_naming("{base}")),
            Some(as_metadata_with(field, value)),
        )
        .await;
        check_refused(&format!("{field} {value}"), &outcome, error_has, 1);
        assert!(
            outcome.error.contains(&field.replace('_', " ")),
            "{field}: {}",
            outcome.error
        );
    }
}

/// Protected-resource metadata without its required `resource` is not
/// used: the authorization server it names is never asked.
#[tokio::test(flavor = "multi_thread")]
async fn resource_metadata_without_resource_is_refused() {
    for prm in [
        serde_json::json!({"authorization_servers": ["{other}"]}),
        serde_json::json!({"resource": null, "authorization_servers": ["{other}"]}),
        serde_json::json!({"authorization_servers": ["{other}"], "scopes_supported": ["a"]}),
    ] {
        let outcome = hostile_login(
            None,
            None,
            Some(prm.clone()),
            Some(as_metadata_at("{other}")),
        )
        .await;
        check_refused(&prm.to_string(), &outcome, "has no `resource`", 0);
    }
}

/// The same servers, done right, do reach the authorization server and the
/// browser: the refusals above are the policy's, not the harness's.
#[tokio::test(flavor = "multi_thread")]
async fn a_loopback_server_may_name_a_loopback_authorization_server() {
    for issuer in ["{base}", "{other}"] {
        let outcome = hostile_login(
            None,
            None,
            Some(prm_naming(issuer)),
            Some(as_metadata_at(issuer)),
        )
        .await;
        assert!(
            outcome.error.contains("signs in nowhere"),
            "{issuer}: {}",
            outcome.error
        );
        let registered = outcome
            .sent
            .iter()
            .filter(|r| *r == "POST /register")
            .count();
        assert_eq!(registered, 1, "{issuer}");
        assert_eq!(outcome.browser.len(), 1, "{issuer}");
        assert!(
            outcome.browser[0].starts_with("http://127.0.0.1:"),
            "{issuer}: {:?}",
            outcome.browser
        );
    }
}
