//! DPoP (RFC 9449) against a loopback authorization and resource server
//! that both demand nonces: every token and resource request carries a
//! valid proof, all bound to one key (one thumbprint), a refresh and a
//! later process reuse the stored key, and hostile nonces are neither
//! echoed nor looped on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_config::McpOAuthConfig;
use mcp_oauth::{
    AuthError, AuthProvider, Challenge, ChallengeOutcome, CredentialStore, DpopMode,
    InteractivePrompt, MemoryCredentialStore, OAuthProvider, OAuthSettings, RequestTarget,
    authorization_fingerprint,
};
use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

const AS_NONCE: &str = "as-nonce-1";
const RS_NONCE: &str = "rs-nonce-1";

#[derive(Debug, Default)]
struct Server {
    base: String,
    /// Whether the metadata lists ES256 in dpop_signing_alg_values_supported.
    lists_es256: bool,
    /// A nonce the authorization server sends instead of its good one.
    hostile_as_nonce: Option<String>,
    /// A nonce the resource sends instead of its good one.
    hostile_rs_nonce: Option<String>,
    authorize_requests: usize,
    /// Every token request: grant type, nonce in the proof, thumbprint.
    token_requests: Vec<(String, Option<String>, Option<String>)>,
    /// Every authenticated resource request: nonce in the proof, thumbprint.
    resource_requests: Vec<(Option<String>, Option<String>)>,
    /// Every proof problem seen.
    errors: Vec<String>,
    jtis: HashSet<String>,
    /// Access and refresh tokens with the thumbprint they are bound to.
    access: HashMap<String, String>,
    refresh: HashMap<String, String>,
    issued: usize,
}

type Shared = Arc<Mutex<Server>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Server> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

fn decode(part: &str) -> Option<Value> {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).ok()?).ok()
}

/// Checks a proof as RFC 9449 section 4.3 says; returns its claims and the
/// RFC 7638 thumbprint of its key.
fn check_proof(
    s: &mut Server,
    proof: Option<&str>,
    htm: &str,
    htu: &str,
) -> Option<(Value, String)> {
    let result = (|| -> Result<(Value, String), String> {
        let proof = proof.ok_or("no DPoP header")?;
        let parts: Vec<&str> = proof.split('.').collect();
        let [h, c, sig] = parts[..] else {
            return Err("not a compact JWS".into());
        };
        let header = decode(h).ok_or("bad header")?;
        let claims = decode(c).ok_or("bad claims")?;
        if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
            return Err(format!("bad typ/alg: {header}"));
        }
        let jwk = &header["jwk"];
        if jwk.get("d").is_some() {
            return Err("private key in jwk".into());
        }
        let coordinate = |name: &str| {
            URL_SAFE_NO_PAD
                .decode(jwk[name].as_str().unwrap_or_default())
                .unwrap_or_default()
        };
        let mut point = vec![4u8];
        point.extend(coordinate("x"));
        point.extend(coordinate("y"));
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
            .verify(
                format!("{h}.{c}").as_bytes(),
                &URL_SAFE_NO_PAD.decode(sig).unwrap_or_default(),
            )
            .map_err(|_| "signature does not verify".to_owned())?;
        if claims["htm"] != htm || claims["htu"] != htu {
            return Err(format!("htm/htu {claims}"));
        }
        let iat = claims["iat"].as_u64().ok_or("no iat")?;
        let now = mcp_oauth::protocol::now_secs();
        if iat.abs_diff(now) > 60 {
            return Err("iat out of window".into());
        }
        let jti = claims["jti"].as_str().ok_or("no jti")?.to_owned();
        if !s.jtis.insert(jti) {
            return Err("jti replayed".into());
        }
        let canonical = format!(
            r#"{{"crv":"{}","kty":"{}","x":"{}","y":"{}"}}"#,
            jwk["crv"].as_str().unwrap_or_default(),
            jwk["kty"].as_str().unwrap_or_default(),
            jwk["x"].as_str().unwrap_or_default(),
            jwk["y"].as_str().unwrap_or_default()
        );
        let jkt = URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()));
        Ok((claims, jkt))
    })();
    match result {
        Ok(ok) => Some(ok),
        Err(e) => {
            s.errors.push(e);
            None
        }
    }
}

async fn prm(State(s): State<Shared>) -> Response {
    let base = lock(&s).base.clone();
    Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}))
        .into_response()
}

async fn as_metadata(State(s): State<Shared>) -> Response {
    let b = lock(&s);
    let base = &b.base;
    let algs = if b.lists_es256 {
        json!(["RS256", "ES256"])
    } else {
        json!(["RS256"])
    };
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "token_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "dpop_signing_alg_values_supported": algs,
    }))
    .into_response()
}

async fn register() -> Response {
    (
        StatusCode::CREATED,
        Json(json!({"client_id": "client-1", "token_endpoint_auth_method": "none"})),
    )
        .into_response()
}

async fn authorize(State(s): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    lock(&s).authorize_requests += 1;
    let mut target = url::Url::parse(&q["redirect_uri"]).unwrap();
    target
        .query_pairs_mut()
        .append_pair("code", "code-1")
        .append_pair("state", q.get("state").map(String::as_str).unwrap_or(""));
    Redirect::to(target.as_str()).into_response()
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn token(
    State(s): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let mut b = lock(&s);
    let grant = form.get("grant_type").cloned().unwrap_or_default();
    let htu = format!("{}/token", b.base);
    let checked = check_proof(&mut b, header(&headers, "dpop"), "POST", &htu);
    let nonce = checked
        .as_ref()
        .and_then(|(c, _)| c["nonce"].as_str().map(str::to_owned));
    let jkt = checked.map(|(_, jkt)| jkt);
    b.token_requests
        .push((grant.clone(), nonce.clone(), jkt.clone()));
    let Some(jkt) = jkt else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_dpop_proof"})),
        )
            .into_response();
    };
    if nonce.as_deref() != Some(AS_NONCE) {
        let sent = b.hostile_as_nonce.clone().unwrap_or(AS_NONCE.into());
        return (
            StatusCode::BAD_REQUEST,
            [("dpop-nonce", sent)],
            Json(json!({"error": "use_dpop_nonce"})),
        )
            .into_response();
    }
    if grant == "refresh_token" {
        let presented = form.get("refresh_token").cloned().unwrap_or_default();
        if b.refresh.remove(&presented).as_deref() != Some(jkt.as_str()) {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": "invalid_grant"})),
            )
                .into_response();
        }
    }
    b.issued += 1;
    let access = format!("access-{}", b.issued);
    let refresh = format!("refresh-{}", b.issued);
    b.access.insert(access.clone(), jkt.clone());
    b.refresh.insert(refresh.clone(), jkt);
    Json(json!({
        "access_token": access,
        "refresh_token": refresh,
        "token_type": "DPoP",
        "expires_in": 3600,
    }))
    .into_response()
}

async fn mcp(State(s): State<Shared>, headers: HeaderMap) -> Response {
    let mut b = lock(&s);
    let www = format!(
        r#"DPoP algs="ES256", resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
        b.base
    );
    let Some(token) = header(&headers, "authorization").map(str::to_owned) else {
        return (StatusCode::UNAUTHORIZED, [("www-authenticate", www)]).into_response();
    };
    let htu = format!("{}/mcp", b.base);
    let checked = check_proof(&mut b, header(&headers, "dpop"), "POST", &htu);
    let nonce = checked
        .as_ref()
        .and_then(|(c, _)| c["nonce"].as_str().map(str::to_owned));
    b.resource_requests
        .push((nonce.clone(), checked.as_ref().map(|(_, j)| j.clone())));
    let Some(access) = token.strip_prefix("DPoP ") else {
        b.errors.push(format!("scheme of {token}"));
        return (StatusCode::UNAUTHORIZED, [("www-authenticate", www)]).into_response();
    };
    let Some((claims, jkt)) = checked else {
        return (StatusCode::UNAUTHORIZED, [("www-authenticate", www)]).into_response();
    };
    let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(access.as_bytes()));
    if claims["ath"] != ath.as_str() {
        b.errors.push("ath does not match".into());
    }
    if nonce.as_deref() != Some(RS_NONCE) {
        let sent = b.hostile_rs_nonce.clone().unwrap_or(RS_NONCE.into());
        return (
            StatusCode::UNAUTHORIZED,
            [
                (
                    "www-authenticate",
                    r#"DPoP error="use_dpop_nonce""#.to_owned(),
                ),
                ("dpop-nonce", sent),
            ],
        )
            .into_response();
    }
    match b.access.get(access) {
        Some(bound) if *bound == jkt => Json(json!({"ok": true})).into_response(),
        Some(_) => {
            b.errors.push("token presented with another key".into());
            (StatusCode::UNAUTHORIZED, [("www-authenticate", www)]).into_response()
        }
        None => (
            StatusCode::UNAUTHORIZED,
            [(
                "www-authenticate",
                format!(r#"{www}, error="invalid_token""#),
            )],
        )
            .into_response(),
    }
}

async fn serve(lists_es256: bool) -> Shared {
    let shared: Shared = Arc::default();
    let app = axum::Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/mcp", post(mcp))
        .with_state(shared.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    {
        let mut b = lock(&shared);
        b.base = format!("http://{}", listener.local_addr().unwrap());
        b.lists_es256 = lists_es256;
    }
    tokio::spawn(async move { axum::serve(listener, app).await });
    shared
}

fn browser() -> InteractivePrompt {
    InteractivePrompt::new(|url| {
        let url = url.clone();
        tokio::spawn(async move {
            let _ = reqwest::get(url).await;
        });
        Ok(())
    })
}

fn provider(server: &Shared, store: &MemoryCredentialStore, mode: DpopMode) -> OAuthProvider {
    let url = format!("{}/mcp", lock(server).base);
    let mut settings = OAuthSettings::new("dpop-loopback", url, McpOAuthConfig::default());
    settings.dpop = mode;
    OAuthProvider::new(settings, Arc::new(store.clone()), Arc::new(browser())).unwrap()
}

/// One MCP request the way the HTTP transports send it: credentials for
/// the real method and url, every `DPoP-Nonce` handed to the provider,
/// and each kind of challenge (401, nonce) answered at most once.
async fn call(server: &Shared, provider: &OAuthProvider) -> Result<u16, AuthError> {
    let url = format!("{}/mcp", lock(server).base);
    let http = reqwest::Client::new();
    let (mut answered_401, mut answered_nonce) = (false, false);
    loop {
        let mut request = http.post(&url).json(&json!({}));
        let credentials = provider
            .credentials(&RequestTarget {
                method: "POST",
                url: &url,
            })
            .await?;
        if let Some(c) = &credentials {
            request = request.header("authorization", c.authorization.as_str());
            if let Some(proof) = &c.dpop {
                request = request.header("dpop", proof.as_str());
            }
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let www = header(response.headers(), "www-authenticate").map(str::to_owned);
        let nonce = header(response.headers(), "dpop-nonce").map(str::to_owned);
        if let Some(nonce) = &nonce {
            provider.observe_dpop_nonce(nonce);
        }
        if status != 401 {
            return Ok(status);
        }
        let answered =
            if nonce.is_some() && www.as_deref().is_some_and(|w| w.contains("use_dpop_nonce")) {
                &mut answered_nonce
            } else {
                &mut answered_401
            };
        if *answered {
            return Ok(status);
        }
        *answered = true;
        let mut challenge = Challenge::new(status, url.clone());
        challenge.www_authenticate = www;
        challenge.refused_authorization = credentials
            .as_ref()
            .map(|c| authorization_fingerprint(&c.authorization));
        challenge.dpop_nonce = nonce;
        if provider.on_challenge(&challenge).await? == ChallengeOutcome::GiveUp {
            return Ok(status);
        }
    }
}

fn thumbprints(b: &Server) -> HashSet<String> {
    b.token_requests
        .iter()
        .filter_map(|(_, _, j)| j.clone())
        .chain(b.resource_requests.iter().filter_map(|(_, j)| j.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn token_and_resource_requests_carry_proofs_bound_to_one_key() {
    let server = serve(true).await;
    let store = MemoryCredentialStore::new();
    let p = provider(&server, &store, DpopMode::Auto);
    assert_eq!(call(&server, &p).await.unwrap(), 200);
    {
        let b = lock(&server);
        assert!(b.errors.is_empty(), "{:?}", b.errors);
        // The token request is retried once with the server's nonce.
        let grants: Vec<_> = b
            .token_requests
            .iter()
            .map(|(g, n, _)| (g.as_str(), n.as_deref()))
            .collect();
        assert_eq!(
            grants,
            [
                ("authorization_code", None),
                ("authorization_code", Some(AS_NONCE))
            ]
        );
        // The resource's nonce challenge is answered without a new grant.
        let nonces: Vec<_> = b
            .resource_requests
            .iter()
            .map(|(n, _)| n.as_deref())
            .collect();
        assert_eq!(nonces, [None, Some(RS_NONCE)]);
        assert_eq!(b.authorize_requests, 1);
        assert_eq!(thumbprints(&b).len(), 1);
    }
    // Both nonces are remembered: no more challenges.
    assert_eq!(call(&server, &p).await.unwrap(), 200);
    {
        let b = lock(&server);
        assert_eq!(
            b.resource_requests.last().unwrap().0.as_deref(),
            Some(RS_NONCE)
        );
        assert_eq!(b.resource_requests.len(), 3);
    }
    let stored = store.load(p.store_key()).unwrap().unwrap();
    assert!(
        stored.dpop_key.is_some(),
        "the key is stored with the DPoP tokens"
    );

    // The server forgets the access token: the refresh proves the same key
    // (the server refuses the refresh token otherwise) and needs no nonce
    // round trip.
    lock(&server).access.clear();
    assert_eq!(call(&server, &p).await.unwrap(), 200);
    {
        let b = lock(&server);
        assert!(b.errors.is_empty(), "{:?}", b.errors);
        let (grant, nonce, _) = b.token_requests.last().unwrap();
        assert_eq!(
            (grant.as_str(), nonce.as_deref()),
            ("refresh_token", Some(AS_NONCE))
        );
        assert_eq!(b.token_requests.len(), 3);
        assert_eq!(b.authorize_requests, 1);
        assert_eq!(thumbprints(&b).len(), 1);
    }

    // A later process over the same store signs with the stored key.
    let later = provider(&server, &store, DpopMode::Auto);
    assert_eq!(call(&server, &later).await.unwrap(), 200);
    let b = lock(&server);
    assert!(b.errors.is_empty(), "{:?}", b.errors);
    assert_eq!(b.authorize_requests, 1);
    assert_eq!(thumbprints(&b).len(), 1);
    let stored_key = store.load(p.store_key()).unwrap().unwrap().dpop_key;
    assert_eq!(stored_key, stored.dpop_key);
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_nonces_are_not_echoed_or_looped_on() {
    for hostile in [
        "n".repeat(2048),
        "caf\u{e9}-nonce".into(),
        "two words".into(),
        "quo\"te".into(),
    ] {
        // The authorization server: one request, no retry, a clear refusal.
        let server = serve(true).await;
        lock(&server).hostile_as_nonce = Some(hostile.clone());
        let store = MemoryCredentialStore::new();
        let p = provider(&server, &store, DpopMode::Auto);
        let err = call(&server, &p).await.unwrap_err().to_string();
        assert!(err.contains("use_dpop_nonce"), "{err}");
        assert!(!err.contains(&hostile), "{err}");
        assert_eq!(lock(&server).token_requests.len(), 1, "{hostile:?}");

        // The resource: its challenge is given up on, not retried.
        let server = serve(true).await;
        lock(&server).hostile_rs_nonce = Some(hostile.clone());
        let store = MemoryCredentialStore::new();
        let p = provider(&server, &store, DpopMode::Auto);
        assert_eq!(call(&server, &p).await.unwrap(), 401);
        assert_eq!(call(&server, &p).await.unwrap(), 401);
        let b = lock(&server);
        assert!(b.errors.is_empty(), "{:?}", b.errors);
        assert!(b.resource_requests.iter().all(|(n, _)| n.is_none()));
        assert_eq!(b.resource_requests.len(), 2, "{hostile:?}");
        assert_eq!(b.authorize_requests, 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn always_needs_a_server_that_accepts_es256_and_never_sends_no_proof() {
    let server = serve(false).await;
    let p = provider(&server, &MemoryCredentialStore::new(), DpopMode::Always);
    let err = call(&server, &p).await.unwrap_err().to_string();
    assert!(
        err.starts_with("oauth settings for dpop-loopback: oauth.dpop: "),
        "{err}"
    );
    assert!(
        err.contains("does not accept ES256 proofs (it lists: RS256)"),
        "{err}"
    );
    assert!(lock(&server).token_requests.is_empty());

    let server = serve(true).await;
    let p = provider(&server, &MemoryCredentialStore::new(), DpopMode::Never);
    let err = call(&server, &p).await.unwrap_err().to_string();
    assert!(err.contains("invalid_dpop_proof"), "{err}");
    let b = lock(&server);
    assert_eq!(b.token_requests.len(), 1);
    assert_eq!(b.errors, ["no DPoP header"]);
}
