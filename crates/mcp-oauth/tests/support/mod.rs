//! A loopback authorization and resource server for the provider tests,
//! and a request helper that behaves like the HTTP transports.

#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use mcp_config::McpOAuthConfig;
use mcp_oauth::{
    AuthError, AuthProvider, Challenge, ChallengeOutcome, InteractivePrompt, MemoryCredentialStore,
    OAuthProvider, OAuthSettings, authorization_fingerprint,
};
use serde_json::json;

pub const CLIENT_SECRET: &str = "client-secret-f00d";

/// What the server does and what it saw.
#[derive(Debug, Default)]
pub struct Behaviour {
    pub base: String,
    pub prm_resource: Option<String>,
    pub refuse_refresh: bool,
    pub forget_clients: bool,
    pub registrations: usize,
    pub always_insufficient_scope: bool,
    pub wrong_state: bool,
    pub metadata_only_at_custom_path: bool,
    pub prm_only_at_custom_path: bool,
    /// Refreshes fail with this status (a 5xx, a 429) before any check.
    pub refresh_failure: Option<u16>,
    /// The token endpoint answers with an endless JSON document.
    pub huge_token_answer: bool,
    pub authorize_requests: usize,
    pub authorize_scopes: Vec<Option<String>>,
    pub token_requests: Vec<String>,
    pub challenge: Option<String>,
    pub live_access: Vec<String>,
    pub live_refresh: Vec<String>,
    pub issued: usize,
    /// Every secret the server handed out or received.
    pub secrets: Vec<String>,
}

pub type Shared = Arc<Mutex<Behaviour>>;

pub fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Behaviour> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

async fn prm(State(s): State<Shared>) -> Response {
    let b = lock(&s);
    if b.prm_only_at_custom_path {
        return StatusCode::NOT_FOUND.into_response();
    }
    prm_document(&b)
}

async fn custom_prm(State(s): State<Shared>) -> Response {
    prm_document(&lock(&s))
}

fn prm_document(b: &Behaviour) -> Response {
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
    {
        let mut b = lock(&s);
        b.secrets.push(CLIENT_SECRET.into());
        b.registrations += 1;
        b.forget_clients = false;
    }
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
    b.authorize_scopes.push(q.get("scope").cloned());
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
    if b.huge_token_answer {
        // 4 MiB of a JSON string, streamed without a length.
        let chunks = std::iter::once(Ok::<_, std::io::Error>(b"{\"access_token\":\"".to_vec()))
            .chain((0..64).map(|_| Ok(vec![b'a'; 64 * 1024])));
        return axum::body::Body::from_stream(futures::stream::iter(chunks)).into_response();
    }
    if grant == "refresh_token"
        && let Some(status) = b.refresh_failure
    {
        return refuse(
            StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
            "temporarily_unavailable",
        );
    }
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("client-1:{CLIENT_SECRET}"))
    );
    if b.forget_clients
        || headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str())
    {
        return refuse(StatusCode::UNAUTHORIZED, "invalid_client");
    }
    if form.get("resource") != Some(&format!("{}/mcp", b.base)) {
        return refuse(StatusCode::BAD_REQUEST, "invalid_target");
    }
    match grant.as_str() {
        "authorization_code" => {
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            b.secrets.push(verifier.clone());
            let computed = mcp_oauth::protocol::s256_challenge(&verifier);
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
    let prm_path = if b.prm_only_at_custom_path {
        "/custom/prm"
    } else {
        "/.well-known/oauth-protected-resource/mcp"
    };
    let www = format!(r#"Bearer resource_metadata="{}{prm_path}""#, b.base);
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

pub async fn serve() -> (String, Shared) {
    let shared: Shared = Arc::default();
    let app = axum::Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route(
            "/.well-known/oauth-authorization-server",
            get(well_known_as),
        )
        .route("/custom/as-metadata", get(custom_as))
        .route("/custom/prm", get(custom_prm))
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
pub fn browser() -> InteractivePrompt {
    InteractivePrompt::new(|url| {
        let url = url.clone();
        tokio::spawn(async move {
            let _ = reqwest::get(url).await;
        });
        Ok(())
    })
}

pub struct Fixture {
    pub url: String,
    pub server: Shared,
    pub store: MemoryCredentialStore,
    pub provider: OAuthProvider,
}

pub async fn fixture(config: McpOAuthConfig) -> Fixture {
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
pub async fn call(f: &Fixture) -> Result<u16, AuthError> {
    let http = reqwest::Client::new();
    let mut retried = false;
    loop {
        let mut request = http.post(&f.url).json(&json!({}));
        let sent = f.provider.authorization().await?;
        if let Some(value) = &sent {
            request = request.header("authorization", value.as_str());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        if !matches!(status, 401 | 403) || retried {
            return Ok(status);
        }
        retried = true;
        let mut challenge = Challenge::new(status, f.url.clone());
        challenge.www_authenticate = response
            .headers()
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_owned());
        challenge.refused_authorization = sent.as_deref().map(authorization_fingerprint);
        if f.provider.on_challenge(&challenge).await? == ChallengeOutcome::GiveUp {
            return Ok(status);
        }
    }
}
