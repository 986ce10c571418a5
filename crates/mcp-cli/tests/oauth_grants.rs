//! The grants that need no person, end to end through the binary: a
//! loopback authorization server issues client-credentials and workload
//! identity (JWT bearer) tokens, and `probe` and `call` succeed with no
//! `login`; an `oauth` block that cannot be used fails with its error
//! naming the server instead of an unauthenticated 401.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use serde_json::{Value, json};

use support::{Run, Tree};

const SECRET: &str = "cc-secret-5ca1ab1e";
const WORKLOAD_JWT: &str = "workload.jwt.f00d";

#[derive(Debug, Default)]
struct Seen {
    base: String,
    token_requests: Vec<String>,
    issued: Vec<String>,
}

type Shared = Arc<Mutex<Seen>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Seen> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

async fn prm(State(s): State<Shared>) -> Json<Value> {
    let base = lock(&s).base.clone();
    Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}))
}

async fn as_metadata(State(s): State<Shared>) -> Json<Value> {
    let base = lock(&s).base.clone();
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "grant_types_supported": ["client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
        "code_challenge_methods_supported": ["S256"]
    }))
}

async fn token(
    State(s): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let mut seen = lock(&s);
    let grant = form.get("grant_type").cloned().unwrap_or_default();
    seen.token_requests.push(grant.clone());
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("svc:{SECRET}"))
    );
    let authorization = headers.get("authorization").and_then(|v| v.to_str().ok());
    let ok = match grant.as_str() {
        "client_credentials" => authorization == Some(basic.as_str()),
        "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
            form.get("assertion").map(String::as_str) == Some(WORKLOAD_JWT)
        }
        _ => false,
    };
    if !ok || form.get("resource") != Some(&format!("{}/mcp", seen.base)) {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant"})),
        )
            .into_response();
    }
    let access = format!("access-{}", seen.issued.len() + 1);
    seen.issued.push(access.clone());
    Json(json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600}))
        .into_response()
}

async fn mcp(State(s): State<Shared>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let (base, issued) = {
        let seen = lock(&s);
        (seen.base.clone(), seen.issued.clone())
    };
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if !bearer.is_some_and(|t| issued.iter().any(|i| i == t)) {
        let www = format!(
            r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
        );
        return (StatusCode::UNAUTHORIZED, [("www-authenticate", www)]).into_response();
    }
    let Some(id) = body.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let method = body["method"].as_str().unwrap_or_default();
    let result = match method {
        "server/discover" => {
            return Json(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}}))
            .into_response();
        }
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "grants", "version": "1"}
        }),
        "tools/list" => json!({"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "a service account"}]}),
        _ => json!({}),
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

/// Starts the loopback servers on their own thread; returns the base url.
fn serve() -> (String, Shared) {
    let shared: Shared = Arc::default();
    let state = shared.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new()
                .route("/.well-known/oauth-protected-resource/mcp", get(prm))
                .route("/.well-known/oauth-authorization-server", get(as_metadata))
                .route("/token", post(token))
                .route(
                    "/mcp",
                    post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
                )
                .with_state(state.clone());
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            lock(&state).base = base.clone();
            tx.send(base).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    let base = rx.recv().unwrap();
    (base, shared)
}

fn tree_with(servers: Value) -> Tree {
    let tree = Tree::new("no-fixture");
    tree.write(
        "home/.claude.json",
        &serde_json::to_string_pretty(&json!({"mcpServers": servers})).unwrap(),
    );
    tree
}

fn run(tree: &Tree, args: &[&str], vars: &[(&str, &str)]) -> Run {
    tree.run_with(args, |command| {
        for (k, v) in vars {
            command.env(k, v);
        }
    })
}

fn shows_no_secret(run: &Run) {
    for secret in [SECRET, WORKLOAD_JWT, "access-1", "access-2"] {
        assert!(
            !run.stdout.contains(secret) && !run.stderr.contains(secret),
            "{secret} shown:\n{}\n{}",
            run.stdout,
            run.stderr
        );
    }
}

#[test]
fn client_credentials_and_workload_identity_need_no_login() {
    let (base, seen) = serve();
    let url = format!("{base}/mcp");
    let tree = tree_with(json!({
        "cc": {"type": "http", "url": url, "oauth": {
            "grant": "client_credentials", "clientId": "svc", "clientSecretEnv": "CC_SECRET"}},
        "wl": {"type": "http", "url": url, "oauth": {
            "grant": "jwt_bearer", "assertion": {"command": ["printf", "%s", WORKLOAD_JWT]}}}
    }));
    let vars = [("CC_SECRET", SECRET)];

    // `login` has nothing to do for these grants, and says so.
    let login = run(&tree, &["login", "cc"], &vars);
    assert_eq!(login.code, 0, "{}{}", login.stdout, login.stderr);
    assert!(
        login.stdout.contains("no sign-in needed for `cc` (client_credentials): client credentials are obtained automatically"),
        "{}",
        login.stdout
    );
    assert!(lock(&seen).token_requests.is_empty());

    for name in ["cc", "wl"] {
        let probe = run(&tree, &["--json", "probe", name], &vars);
        assert_eq!(probe.code, 0, "{}{}", probe.stdout, probe.stderr);
        let json = probe.json();
        assert_eq!(json["servers"][0]["status"], "ok", "{json}");
        assert_eq!(json["servers"][0]["tools"], 1, "{json}");
        shows_no_secret(&probe);
    }
    assert_eq!(
        lock(&seen).token_requests,
        [
            "client_credentials",
            "urn:ietf:params:oauth:grant-type:jwt-bearer"
        ]
    );

    // The stored token is used again: `call` asks for no new one.
    let call = run(&tree, &["call", "mcp__cc__whoami", "--args", "{}"], &vars);
    assert_eq!(call.code, 0, "{}{}", call.stdout, call.stderr);
    assert!(call.stdout.contains("a service account"), "{}", call.stdout);
    assert_eq!(lock(&seen).token_requests.len(), 2);

    let status = run(&tree, &["--json", "auth-status"], &vars);
    assert_eq!(status.code, 0, "{}{}", status.stdout, status.stderr);
    let json = status.json();
    let servers = json["servers"].as_array().unwrap();
    assert_eq!(servers[0]["grant"], "client_credentials");
    assert_eq!(servers[0]["signInNeeded"], false);
    assert_eq!(servers[0]["status"], "signed in");
    assert_eq!(servers[1]["grant"], "jwt_bearer");
    shows_no_secret(&status);
}

#[test]
fn an_oauth_block_that_cannot_be_used_is_an_error_naming_the_server() {
    let (base, seen) = serve();
    let url = format!("{base}/mcp");
    let tree = tree_with(json!({
        "cc": {"type": "http", "url": url, "oauth": {
            "grant": "client_credentials", "clientId": "svc", "clientSecretEnv": "CC_SECRET"}},
        "xaa": {"type": "http", "url": url, "oauth": {"clientId": "svc", "xaa": true}}
    }));
    // The secret's variable is not set.
    let probe = run(&tree, &["probe", "cc"], &[]);
    assert_eq!(probe.code, 1, "{}{}", probe.stdout, probe.stderr);
    let all = format!("{}{}", probe.stdout, probe.stderr);
    assert!(
        all.contains("oauth settings for cc: oauth.clientSecretEnv: CC_SECRET is not set"),
        "{all}"
    );
    let login = run(&tree, &["login", "cc"], &[]);
    assert_eq!(login.code, 1);
    assert!(
        login.stderr.contains("CC_SECRET is not set"),
        "{}",
        login.stderr
    );

    // `xaa: true` without its identity provider used to end in a bare 401.
    let probe = run(&tree, &["probe", "xaa"], &[]);
    assert_eq!(probe.code, 1, "{}{}", probe.stdout, probe.stderr);
    let all = format!("{}{}", probe.stdout, probe.stderr);
    assert!(
        all.contains(
            "oauth settings for xaa: oauth.idp: cross-app access needs the identity provider"
        ),
        "{all}"
    );
    let status = run(&tree, &["--json", "auth-status"], &[]);
    assert_eq!(status.code, 1);
    let json = status.json();
    assert_eq!(json["servers"][1]["grant"], "cross_app_access");
    assert_eq!(json["servers"][1]["status"], "error");
    assert!(lock(&seen).token_requests.is_empty());
}
