//! Streamable HTTP details no public peer lets us provoke on demand: what
//! every request carries (static headers, `headersHelper` output, session
//! id, negotiated protocol version), the 401/403 challenge retry through an
//! `AuthProvider`, resumption after the server's `retry:` delay, and the
//! DELETE on close. The server is a scripted HTTP/1.1 responder on
//! 127.0.0.1 that records each request; one request per connection.

#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use mcp_oauth::{AuthError, AuthProvider, Challenge, ChallengeOutcome, Credentials, RequestTarget};
use mcp_transport::HttpOptions;
use mcp_transport::kinds::StreamableHttpTransport;
use mcp_transport::{JsonRpcMessage, Notification, Request, RequestId, Transport};
use serde_json::{Value, json};

mod support;
use support::loopback::{Answer, Seen};
use support::queued::Queued;

fn json_answer(status: u16, body: Value) -> Answer {
    Answer {
        status,
        headers: vec![("content-type", "application/json".into())],
        parts: vec![body.to_string()],
        pause: Duration::ZERO,
    }
}

fn empty(status: u16) -> Answer {
    Answer {
        status,
        headers: vec![],
        parts: vec![],
        pause: Duration::ZERO,
    }
}

type Script = Arc<dyn Fn(&Seen) -> Answer + Send + Sync>;

/// The shared responder with a script that needs no request count.
async fn server(script: Script) -> (String, Arc<Mutex<Vec<Seen>>>) {
    support::loopback::server(Arc::new(move |seen: &Seen, _| script(seen))).await
}

/// The `Authorization` header of every request the server saw, in order
/// (empty when absent).
fn authorizations(seen: &Mutex<Vec<Seen>>) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|s| s.header("authorization").unwrap_or("").to_owned())
        .collect()
}

/// Answers initialize with a session and version, tools/list with no tools,
/// 202 to the rest, 405 to GET, 200 to DELETE.
fn basic(seen: &Seen) -> Answer {
    match (seen.method.as_str(), seen.rpc_method()) {
        ("POST", "initialize") => {
            let mut answer = json_answer(
                200,
                json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}),
            );
            answer.headers.push(("mcp-session-id", "s-1".into()));
            answer
        }
        ("POST", "tools/list") => json_answer(
            200,
            json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {"tools": []}}),
        ),
        ("POST", _) => empty(202),
        ("GET", _) => empty(405),
        ("DELETE", _) => empty(200),
        _ => empty(400),
    }
}

fn request(id: i64, method: &str) -> JsonRpcMessage {
    JsonRpcMessage::Request(Request {
        id: RequestId::Number(id),
        method: method.into(),
        params: Some(json!({})),
    })
}

async fn next_response<T: Transport>(transport: &mut Queued<T>) -> mcp_transport::Response {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), transport.receive())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let JsonRpcMessage::Response(r) = message {
            return r;
        }
    }
}

async fn handshake(transport: &mut Queued<StreamableHttpTransport>) {
    transport.send(request(1, "initialize")).await.unwrap();
    assert!(next_response(transport).await.outcome.is_ok());
    transport
        .send(JsonRpcMessage::Notification(Notification {
            method: "notifications/initialized".into(),
            params: None,
        }))
        .await
        .unwrap();
}

#[tokio::test]
async fn every_request_carries_headers_helper_output_session_and_version() {
    let (url, seen) = server(Arc::new(basic)).await;
    let mut options = HttpOptions::new("files", &url);
    options
        .headers
        .insert("X-Static".into(), "static-value".into());
    options.headers_helper = Some(r#"printf '{"X-Helper":"helper-value"}'"#.into());
    let mut transport = Queued::new(StreamableHttpTransport::connect(options).await.unwrap());
    handshake(&mut transport).await;
    transport.send(request(2, "tools/list")).await.unwrap();
    assert!(next_response(&mut transport).await.outcome.is_ok());
    // Let the GET stream attempt land.
    tokio::time::sleep(Duration::from_millis(200)).await;
    transport.close().await.unwrap();

    let seen = seen.lock().unwrap().clone();
    let summary: Vec<String> = seen
        .iter()
        .map(|s| format!("{} {}", s.method, s.rpc_method()))
        .collect();
    assert_eq!(
        summary,
        [
            "POST initialize",
            "POST notifications/initialized",
            "GET ",
            "POST tools/list",
            "DELETE "
        ]
    );
    for s in &seen {
        assert_eq!(s.header("x-static"), Some("static-value"), "{s:?}");
        assert_eq!(s.header("x-helper"), Some("helper-value"), "{s:?}");
    }
    let init = &seen[0];
    assert_eq!(
        init.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(init.header("content-type"), Some("application/json"));
    assert_eq!(init.header("mcp-session-id"), None);
    assert_eq!(init.header("mcp-protocol-version"), None);
    for s in &seen[1..] {
        assert_eq!(s.header("mcp-session-id"), Some("s-1"), "{s:?}");
        assert_eq!(
            s.header("mcp-protocol-version"),
            Some("2025-06-18"),
            "{s:?}"
        );
    }
    assert_eq!(seen[2].header("accept"), Some("text/event-stream"));
}

/// Hands out `Bearer t<N>`; each challenge moves to the next token.
#[derive(Debug, Default)]
struct Rotating {
    generation: AtomicUsize,
    challenges: Mutex<Vec<Challenge>>,
    give_up: bool,
}

#[async_trait]
impl AuthProvider for Rotating {
    async fn authorization(&self) -> Result<Option<String>, AuthError> {
        Ok(Some(format!(
            "Bearer t{}",
            self.generation.load(Ordering::SeqCst)
        )))
    }

    async fn on_challenge(&self, challenge: &Challenge) -> Result<ChallengeOutcome, AuthError> {
        self.challenges.lock().unwrap().push(challenge.clone());
        if self.give_up {
            return Ok(ChallengeOutcome::GiveUp);
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(ChallengeOutcome::Retry)
    }
}

/// Refuses `Bearer t0` with `status` and `www`, accepts later tokens.
fn guarded(status: u16, www: &'static str) -> Script {
    refusing(vec![("Bearer t0", status, www)])
}

/// Refuses each listed `Authorization` value with its status and
/// `WWW-Authenticate`, and answers every other request.
fn refusing(refusals: Vec<(&'static str, u16, &'static str)>) -> Script {
    Arc::new(move |seen: &Seen| {
        let authorization = seen.header("authorization");
        match refusals
            .iter()
            .find(|(token, ..)| authorization == Some(*token))
        {
            Some(&(_, status, www)) => {
                let mut answer = empty(status);
                answer.headers.push(("www-authenticate", www.into()));
                answer
            }
            None => basic(seen),
        }
    })
}

#[tokio::test]
async fn a_401_asks_the_provider_once_and_retries_with_the_new_token() {
    let www = r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource""#;
    for (status, www) in [
        (401, www),
        (
            403,
            r#"Bearer error="insufficient_scope", scope="files:write""#,
        ),
    ] {
        let (url, seen) = server(guarded(status, www)).await;
        let auth = Arc::new(Rotating::default());
        let mut options = HttpOptions::new("files", &url);
        options.auth = Some(auth.clone());
        let mut transport = Queued::new(StreamableHttpTransport::connect(options).await.unwrap());
        handshake(&mut transport).await;
        let challenges = auth.challenges.lock().unwrap().clone();
        assert_eq!(challenges.len(), 1, "{challenges:?}");
        assert_eq!(challenges[0].status, status);
        assert_eq!(challenges[0].www_authenticate.as_deref(), Some(www));
        assert_eq!(challenges[0].url, url);
        let tokens = authorizations(&seen);
        assert_eq!(tokens[..3], ["Bearer t0", "Bearer t1", "Bearer t1"]);
    }
}

#[tokio::test]
async fn a_step_up_after_a_401_retry_is_still_answered_once() {
    let scope = r#"Bearer error="insufficient_scope", scope="files:write""#;
    let script = refusing(vec![
        ("Bearer t0", 401, "Bearer"),
        ("Bearer t1", 403, scope),
    ]);
    let (url, seen) = server(script).await;
    let auth = Arc::new(Rotating::default());
    let mut options = HttpOptions::new("files", &url);
    options.auth = Some(auth.clone());
    let mut transport = Queued::new(StreamableHttpTransport::connect(options).await.unwrap());
    handshake(&mut transport).await;
    let challenges = auth.challenges.lock().unwrap().clone();
    let statuses: Vec<_> = challenges.iter().map(|c| c.status).collect();
    assert_eq!(statuses, [401, 403], "{challenges:?}");
    // The provider learns which token was refused, as a fingerprint.
    let refused: Vec<_> = challenges
        .iter()
        .map(|c| c.refused_authorization.clone())
        .collect();
    assert_eq!(
        refused,
        [
            Some(mcp_oauth::authorization_fingerprint("Bearer t0")),
            Some(mcp_oauth::authorization_fingerprint("Bearer t1")),
        ]
    );
    let tokens = authorizations(&seen);
    assert_eq!(tokens[..3], ["Bearer t0", "Bearer t1", "Bearer t2"]);
}

#[tokio::test]
async fn a_provider_that_gives_up_surfaces_the_refusal() {
    let (url, _seen) = server(guarded(401, "Bearer")).await;
    let auth = Arc::new(Rotating {
        give_up: true,
        ..Rotating::default()
    });
    let mut options = HttpOptions::new("files", &url);
    options.auth = Some(auth.clone());
    let mut transport = Queued::new(StreamableHttpTransport::connect(options).await.unwrap());
    let err = transport
        .send(request(1, "initialize"))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(err, "files: initialize: HTTP 401 Unauthorized");
    assert_eq!(auth.challenges.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_broken_stream_resumes_with_last_event_id_after_the_retry_delay() {
    let script: Script = Arc::new(
        |seen: &Seen| match (seen.method.as_str(), seen.rpc_method()) {
            ("POST", "tools/call") => Answer {
                status: 200,
                headers: vec![
                    ("content-type", "text/event-stream".into()),
                    ("mcp-session-id", "s-1".into()),
                ],
                parts: vec!["id: e-1\nretry: 400\ndata: \n\n".into()],
                pause: Duration::ZERO,
            },
            ("GET", _) if seen.header("last-event-id") == Some("e-1") => Answer {
                status: 200,
                headers: vec![("content-type", "text/event-stream".into())],
                parts: vec![format!(
                    "id: e-2\ndata: {}\n\n",
                    json!({"jsonrpc": "2.0", "id": 7, "result": {"content": []}})
                )],
                pause: Duration::ZERO,
            },
            _ => basic(seen),
        },
    );
    let (url, seen) = server(script).await;
    let mut transport = Queued::new(
        StreamableHttpTransport::connect(HttpOptions::new("files", &url))
            .await
            .unwrap(),
    );
    handshake(&mut transport).await;
    transport.send(request(7, "tools/call")).await.unwrap();
    let answer = next_response(&mut transport).await;
    assert_eq!(answer.id, Some(RequestId::Number(7)));
    assert!(answer.outcome.is_ok());
    let seen = seen.lock().unwrap().clone();
    let call = seen
        .iter()
        .find(|s| s.rpc_method() == "tools/call")
        .unwrap();
    let resume = seen
        .iter()
        .find(|s| s.header("last-event-id").is_some())
        .unwrap();
    assert_eq!(resume.method, "GET");
    // The server asked for 400 ms between the stream's end and the retry.
    assert!(
        resume.at.duration_since(call.at) >= Duration::from_millis(400),
        "{:?}",
        resume.at.duration_since(call.at)
    );
}

#[tokio::test]
async fn a_failed_request_gets_an_error_answer_naming_the_server() {
    let script: Script = Arc::new(|seen: &Seen| match seen.rpc_method() {
        "tools/call" => json_answer(500, json!({"error": "boom"})),
        _ => basic(seen),
    });
    let (url, _seen) = server(script).await;
    let mut transport = Queued::new(
        StreamableHttpTransport::connect(HttpOptions::new("files", &url))
            .await
            .unwrap(),
    );
    handshake(&mut transport).await;
    transport.send(request(3, "tools/call")).await.unwrap();
    let answer = next_response(&mut transport).await;
    assert_eq!(answer.id, Some(RequestId::Number(3)));
    let error = answer.outcome.unwrap_err();
    assert_eq!(error.code, mcp_transport::wire::TRANSPORT_ERROR_CODE);
    assert_eq!(
        error.message,
        r#"files: POST: HTTP 500 Internal Server Error: {"error":"boom"}"#
    );
}

/// Hands out `DPoP tok` with a proof naming the request's method, url and
/// the latest nonce it was given; a `use_dpop_nonce` challenge is retried.
#[derive(Debug, Default)]
struct Proving {
    nonce: Mutex<Option<String>>,
    observed: Mutex<Vec<String>>,
    challenges: Mutex<Vec<Challenge>>,
}

#[async_trait]
impl AuthProvider for Proving {
    async fn authorization(&self) -> Result<Option<String>, AuthError> {
        Ok(Some("DPoP tok".into()))
    }

    async fn credentials(
        &self,
        target: &RequestTarget<'_>,
    ) -> Result<Option<Credentials>, AuthError> {
        let nonce = self.nonce.lock().unwrap().clone().unwrap_or_default();
        Ok(Some(Credentials {
            authorization: "DPoP tok".into(),
            dpop: Some(format!("{} {} {nonce}", target.method, target.url)),
        }))
    }

    fn observe_dpop_nonce(&self, nonce: &str) {
        self.observed.lock().unwrap().push(nonce.to_owned());
        *self.nonce.lock().unwrap() = Some(nonce.to_owned());
    }

    async fn on_challenge(&self, challenge: &Challenge) -> Result<ChallengeOutcome, AuthError> {
        self.challenges.lock().unwrap().push(challenge.clone());
        Ok(ChallengeOutcome::Retry)
    }
}

#[tokio::test]
async fn dpop_proofs_name_the_request_and_nonces_reach_the_provider() {
    // A proof without the nonce is refused once with a nonce challenge;
    // every answer carries the next nonce.
    let script: Script = Arc::new(|seen: &Seen| {
        let proof = seen.header("dpop").unwrap_or("");
        let mut answer = if proof.ends_with(" n1") || proof.ends_with(" n2") {
            basic(seen)
        } else {
            let mut refusal = empty(401);
            refusal
                .headers
                .push(("www-authenticate", r#"DPoP error="use_dpop_nonce""#.into()));
            refusal
        };
        let next = if proof.ends_with(" n1") { "n2" } else { "n1" };
        answer.headers.push(("dpop-nonce", next.into()));
        answer
    });
    let (url, seen) = server(script).await;
    let auth = Arc::new(Proving::default());
    let mut options = HttpOptions::new("files", format!("{url}?tenant=1"));
    options.auth = Some(auth.clone());
    let mut transport = Queued::new(StreamableHttpTransport::connect(options).await.unwrap());
    handshake(&mut transport).await;
    let seen = seen.lock().unwrap().clone();
    let proofs: Vec<&str> = seen
        .iter()
        .map(|s| s.header("dpop").unwrap_or(""))
        .collect();
    assert_eq!(
        proofs[..3],
        [
            // The header's trailing space (no nonce yet) is not sent.
            format!("POST {url}"),
            format!("POST {url} n1"),
            format!("POST {url} n2"),
        ]
    );
    assert!(
        seen.iter()
            .all(|s| s.header("authorization") == Some("DPoP tok"))
    );
    let challenges = auth.challenges.lock().unwrap().clone();
    assert_eq!(challenges.len(), 1, "{challenges:?}");
    assert_eq!(challenges[0].dpop_nonce.as_deref(), Some("n1"));
    assert_eq!(auth.observed.lock().unwrap()[..3], ["n1", "n2", "n1"]);
}
