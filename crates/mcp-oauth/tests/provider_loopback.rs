//! `OAuthProvider` against a loopback authorization and resource server:
//! the browser path through the loopback listener, PKCE verified by the
//! server, refresh once on 401, a refused refresh falling back to a new
//! login, the step-up limit, resource mismatch, the metadata override, a
//! forged `state`, and no secret in any `Debug` output, error or log line.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use mcp_config::McpOAuthConfig;
use mcp_oauth::{
    AuthError, AuthProvider, Challenge, ChallengeOutcome, CredentialStore, InteractivePrompt,
    MAX_STEP_UPS, MemoryCredentialStore, OAuthProvider, OAuthSettings,
};
use serde_json::json;

const CLIENT_SECRET: &str = "client-secret-f00d";

/// What the server does and what it saw.
#[derive(Debug, Default)]
struct Behaviour {
    base: String,
    prm_resource: Option<String>,
    refuse_refresh: bool,
    always_insufficient_scope: bool,
    wrong_state: bool,
    metadata_only_at_custom_path: bool,
    authorize_requests: usize,
    token_requests: Vec<String>,
    challenge: Option<String>,
    live_access: Vec<String>,
    live_refresh: Vec<String>,
    issued: usize,
    /// Every secret the server handed out or received.
    secrets: Vec<String>,
}

type Shared = Arc<Mutex<Behaviour>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Behaviour> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

async fn prm(State(s): State<Shared>) -> Response {
    let b = lock(&s);
    Json(json!({
        "resource": b.prm_resource.clone().unwrap_or(format!("{}/mcp", b.base)),
        "authorization_servers": [b.base],
        "scopes_supported": ["read"]
    }))
    .into_response()
}

fn as_metadata(base: &str) -> serde_json::Value {
    json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "scopes_supported": ["read", "write", "offline_access"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
        "grant_types_supported": ["authorization_code", "refresh_token"]
    })
}

async fn well_known_as(State(s): State<Shared>) -> Response {
    let b = lock(&s);
    if b.metadata_only_at_custom_path {
        return StatusCode::NOT_FOUND.into_response();
    }
    Json(as_metadata(&b.base)).into_response()
}

async fn custom_as(State(s): State<Shared>) -> Response {
    let b = lock(&s);
    Json(as_metadata(&b.base)).into_response()
}

async fn register(State(s): State<Shared>) -> Response {
    lock(&s).secrets.push(CLIENT_SECRET.into());
    (
        StatusCode::CREATED,
        Json(json!({
            "client_id": "client-1",
            "client_secret": CLIENT_SECRET,
            "token_endpoint_auth_method": "client_secret_basic"
        })),
    )
        .into_response()
}

async fn authorize(State(s): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    let mut b = lock(&s);
    b.authorize_requests += 1;
    let code = format!("code-{}-c0ffee", b.authorize_requests);
    b.secrets.push(code.clone());
    // The code carries the challenge, so the token endpoint can check PKCE.
    let challenge = q.get("code_challenge").cloned().unwrap_or_default();
    b.challenge = Some(challenge);
    let state = if b.wrong_state {
        "forged".to_owned()
    } else {
        q.get("state").cloned().unwrap_or_default()
    };
    let mut target = url::Url::parse(&q["redirect_uri"]).unwrap();
    target
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &state);
    Redirect::to(target.as_str()).into_response()
}

fn issue(b: &mut Behaviour) -> Response {
    b.issued += 1;
    let access = format!("access-{}-beef", b.issued);
    let refresh = format!("refresh-{}-cafe", b.issued);
    b.live_access.push(access.clone());
    b.live_refresh.push(refresh.clone());
    b.secrets.push(access.clone());
    b.secrets.push(refresh.clone());
    Json(json!({
        "access_token": access,
        "refresh_token": refresh,
        "token_type": "Bearer",
        "expires_in": 3600,
        "scope": "read"
    }))
    .into_response()
}

fn refuse(status: StatusCode, error: &str) -> Response {
    (
        status,
        Json(json!({"error": error, "error_description": "refused by test server"})),
    )
        .into_response()
}

async fn token(
    State(s): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let mut b = lock(&s);
    let grant = form.get("grant_type").cloned().unwrap_or_default();
    b.token_requests.push(grant.clone());
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("client-1:{CLIENT_SECRET}"))
    );
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
        return refuse(StatusCode::UNAUTHORIZED, "invalid_client");
    }
    if form.get("resource") != Some(&format!("{}/mcp", b.base)) {
        return refuse(StatusCode::BAD_REQUEST, "invalid_target");
    }
    match grant.as_str() {
        "authorization_code" => {
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            b.secrets.push(verifier.clone());
            let computed = mcp_oauth::pkce::s256_challenge(&verifier);
            if b.challenge.as_deref() != Some(computed.as_str()) {
                return refuse(StatusCode::BAD_REQUEST, "invalid_grant");
            }
            issue(&mut b)
        }
        "refresh_token" => {
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            let Some(at) = b.live_refresh.iter().position(|r| *r == presented) else {
                return refuse(StatusCode::BAD_REQUEST, "invalid_grant");
            };
            if b.refuse_refresh {
                return refuse(StatusCode::BAD_REQUEST, "invalid_grant");
            }
            b.live_refresh.remove(at);
            issue(&mut b)
        }
        _ => refuse(StatusCode::BAD_REQUEST, "unsupported_grant_type"),
    }
}

async fn mcp(State(s): State<Shared>, headers: HeaderMap) -> Response {
    let b = lock(&s);
    let www = format!(
        r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
        b.base
    );
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if !b.live_access.iter().any(|t| t == token) {
        return (StatusCode::UNAUTHORIZED, [("www-authenticate", www)]).into_response();
    }
    if b.always_insufficient_scope {
        return (
            StatusCode::FORBIDDEN,
            [(
                "www-authenticate",
                format!(r#"{www}, error="insufficient_scope", scope="read write""#),
            )],
        )
            .into_response();
    }
    Json(json!({"ok": true})).into_response()
}

async fn serve() -> (String, Shared) {
    let shared: Shared = Arc::default();
    let app = axum::Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route(
            "/.well-known/oauth-authorization-server",
            get(well_known_as),
        )
        .route("/custom/as-metadata", get(custom_as))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/mcp", post(mcp))
        .with_state(shared.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    lock(&shared).base = base.clone();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, shared)
}

/// A prompt that plays the browser: follows the authorization URL, with
/// redirects, all the way to the loopback listener.
fn browser() -> InteractivePrompt {
    InteractivePrompt::new(|url| {
        let url = url.clone();
        tokio::spawn(async move {
            let _ = reqwest::get(url).await;
        });
        Ok(())
    })
}

struct Fixture {
    url: String,
    server: Shared,
    store: MemoryCredentialStore,
    provider: OAuthProvider,
}

async fn fixture(config: McpOAuthConfig) -> Fixture {
    let (base, server) = serve().await;
    let url = format!("{base}/mcp");
    let store = MemoryCredentialStore::new();
    let provider = OAuthProvider::new(
        OAuthSettings::new("loopback", &url, config),
        Arc::new(store.clone()),
        Arc::new(browser()),
    )
    .unwrap();
    Fixture {
        url,
        server,
        store,
        provider,
    }
}

/// One MCP request the way the HTTP transports send it: header from the
/// provider, one retry after a challenge the provider answers with Retry.
async fn call(f: &Fixture) -> Result<u16, AuthError> {
    let http = reqwest::Client::new();
    let mut retried = false;
    loop {
        let mut request = http.post(&f.url).json(&json!({}));
        if let Some(value) = f.provider.authorization().await? {
            request = request.header("authorization", value);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        if !matches!(status, 401 | 403) || retried {
            return Ok(status);
        }
        retried = true;
        let challenge = Challenge {
            status,
            www_authenticate: response
                .headers()
                .get("www-authenticate")
                .map(|v| v.to_str().unwrap().to_owned()),
            url: f.url.clone(),
        };
        if f.provider.on_challenge(&challenge).await? == ChallengeOutcome::GiveUp {
            return Ok(status);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn browser_login_then_refresh_once_on_401() {
    let f = fixture(McpOAuthConfig::default()).await;
    assert_eq!(call(&f).await.unwrap(), 200);
    {
        let b = lock(&f.server);
        assert_eq!(b.authorize_requests, 1);
        assert_eq!(b.token_requests, ["authorization_code"]);
    }
    let tokens = f.provider.tokens().await.unwrap().unwrap();
    assert_eq!(tokens.access_token.expose(), "access-1-beef");
    assert_eq!(tokens.scope.as_deref(), Some("read"));

    // The server forgets the access token: one refresh, no new login.
    lock(&f.server).live_access.clear();
    assert_eq!(call(&f).await.unwrap(), 200);
    let b = lock(&f.server);
    assert_eq!(b.authorize_requests, 1);
    assert_eq!(b.token_requests, ["authorization_code", "refresh_token"]);
    let stored = f.store.load(f.provider.store_key()).unwrap().unwrap();
    assert_eq!(
        stored.tokens.unwrap().refresh_token.unwrap().expose(),
        "refresh-2-cafe"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_refresh_falls_back_to_a_new_login() {
    let f = fixture(McpOAuthConfig::default()).await;
    assert_eq!(call(&f).await.unwrap(), 200);
    {
        let mut b = lock(&f.server);
        b.live_access.clear();
        b.refuse_refresh = true;
    }
    assert_eq!(call(&f).await.unwrap(), 200);
    let b = lock(&f.server);
    assert_eq!(b.authorize_requests, 2);
    assert_eq!(
        b.token_requests,
        ["authorization_code", "refresh_token", "authorization_code"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn step_up_stops_after_the_limit() {
    let f = fixture(McpOAuthConfig::default()).await;
    lock(&f.server).always_insufficient_scope = true;
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(call(&f).await.unwrap());
    }
    assert_eq!(statuses, [403; 5]);
    // One login for the first 401, then at most MAX_STEP_UPS step-ups.
    assert_eq!(
        lock(&f.server).authorize_requests,
        1 + MAX_STEP_UPS as usize
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn mismatched_resource_is_refused_before_authorizing() {
    let f = fixture(McpOAuthConfig::default()).await;
    lock(&f.server).prm_resource = Some("https://evil.example.com/mcp".into());
    let err = call(&f).await.unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "protected resource metadata for loopback names resource https://evil.example.com/mcp, which does not match {}",
            f.url
        )
    );
    assert_eq!(lock(&f.server).authorize_requests, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_override_is_used() {
    let (base, server) = serve().await;
    lock(&server).metadata_only_at_custom_path = true;
    let url = format!("{base}/mcp");
    let config = McpOAuthConfig {
        auth_server_metadata_url: Some(format!("{base}/custom/as-metadata")),
        ..McpOAuthConfig::default()
    };
    let provider = OAuthProvider::new(
        OAuthSettings::new("loopback", &url, config),
        Arc::new(MemoryCredentialStore::new()),
        Arc::new(browser()),
    )
    .unwrap();
    provider.login().await.unwrap();
    assert!(provider.tokens().await.unwrap().is_some());
    assert_eq!(lock(&server).authorize_requests, 1);

    let refused = OAuthProvider::new(
        OAuthSettings::new(
            "loopback",
            &url,
            McpOAuthConfig {
                auth_server_metadata_url: Some("http://as.example.com/meta".into()),
                ..McpOAuthConfig::default()
            },
        ),
        Arc::new(MemoryCredentialStore::new()),
        Arc::new(browser()),
    )
    .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "oauth settings for loopback: oauth.authServerMetadataUrl: scheme http is not allowed; use https (http only on loopback)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_state_is_refused() {
    let f = fixture(McpOAuthConfig::default()).await;
    lock(&f.server).wrong_state = true;
    let err = call(&f).await.unwrap_err().to_string();
    assert_eq!(
        err,
        "authorization for loopback failed: the redirect's state does not match the request (possible forgery)"
    );
    assert!(lock(&f.server).token_requests.is_empty());
}

/// Collects log lines from this crate.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn no_secret_in_debug_errors_or_logs() {
    let logs = Logs::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || sink.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let f = fixture(McpOAuthConfig::default()).await;
    let mut texts = Vec::new();
    assert_eq!(call(&f).await.unwrap(), 200);
    lock(&f.server).live_access.clear();
    assert_eq!(call(&f).await.unwrap(), 200);
    texts.push(format!("{:?}", f.provider));
    texts.push(format!("{:?}", f.provider.tokens().await.unwrap()));
    texts.push(format!("{:?}", f.store));
    texts.push(format!(
        "{:?}",
        f.store.load(f.provider.store_key()).unwrap()
    ));
    // Errors from each refusing step.
    {
        let mut b = lock(&f.server);
        b.live_access.clear();
        b.refuse_refresh = true;
        b.wrong_state = true;
    }
    let err = call(&f).await.unwrap_err();
    texts.push(err.to_string());
    texts.push(format!("{err:?}"));
    let bad_code = mcp_oauth::token::request_token(
        &reqwest::Client::new(),
        "loopback",
        &format!("{}/token", lock(&f.server).base),
        &mcp_oauth::token::ClientAuth::Basic {
            client_id: "client-1".into(),
            client_secret: CLIENT_SECRET.into(),
        },
        vec![
            ("grant_type", "authorization_code".into()),
            ("code", "code-1-c0ffee".into()),
        ],
    )
    .await
    .unwrap()
    .unwrap_err();
    texts.push(bad_code.to_string());
    let log_text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(log_text.contains("refreshing access token"), "{log_text}");
    texts.push(log_text);

    let secrets = lock(&f.server).secrets.clone();
    assert!(secrets.len() >= 6, "{secrets:?}");
    for text in &texts {
        for secret in &secrets {
            assert!(
                !text.contains(secret.as_str()),
                "secret {secret} leaked into: {text}"
            );
        }
    }
    assert!(texts.iter().any(|t| t.contains("***")));
}
