//! A refresh of the tokens is a CLIENT span (`oauth refresh`) in the trace
//! current where it runs (feature `otel`): the token endpoint's host and
//! port, nothing of the tokens, and on a refusal the endpoint's OAuth
//! error code as `error.type`. An in-memory exporter reads the spans back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json};
use axum::routing::post;
use mcp_config::McpOAuthConfig;
use mcp_oauth::{
    AuthProvider, ClientRegistration, CredentialStore, HeadlessPrompt, MemoryCredentialStore,
    OAuthProvider, OAuthSettings, Secret, StoreKey, StoredCredentials, TokenSet,
};
use opentelemetry::context::FutureExt;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Context, Value as OtelValue};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;

/// Issues `access-1`/`refresh-1` for `refresh-0`; refuses any other
/// refresh token as `invalid_grant`.
async fn token(
    State(asked): State<Arc<Mutex<usize>>>,
    Form(form): Form<HashMap<String, String>>,
) -> axum::response::Response {
    *asked.lock().unwrap() += 1;
    if form.get("refresh_token").map(String::as_str) != Some("refresh-0") {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant", "error_description": "refresh-9 is gone"})),
        )
            .into_response();
    }
    Json(json!({
        "access_token": "access-1",
        "refresh_token": "refresh-1",
        "token_type": "Bearer",
        "expires_in": 3600
    }))
    .into_response()
}

/// A provider whose stored access token has expired, holding the refresh
/// token `refresh`.
fn provider(base: &str, refresh: &str) -> OAuthProvider {
    let url = format!("{base}/mcp");
    let store = Arc::new(MemoryCredentialStore::new());
    store
        .save(
            &StoreKey::new("traced", &url),
            &StoredCredentials {
                issuer: Some(base.to_owned()),
                token_endpoint: Some(format!("{base}/token")),
                resource: Some(url.clone()),
                client: Some(ClientRegistration {
                    client_id: "client-1".into(),
                    client_secret: None,
                    token_endpoint_auth_method: "none".into(),
                    redirect_uri: None,
                }),
                tokens: Some(TokenSet {
                    access_token: Secret::new("access-0"),
                    refresh_token: Some(Secret::new(refresh)),
                    expires_at: Some(1),
                    scope: None,
                    lifetime: None,
                }),
                ..StoredCredentials::default()
            },
        )
        .unwrap();
    OAuthProvider::new(
        OAuthSettings::new("traced", &url, McpOAuthConfig::default()),
        store,
        Arc::new(HeadlessPrompt::new().unwrap()),
    )
    .unwrap()
}

/// A remote parent of its own trace for case `case`.
fn parent(case: u128) -> Context {
    Context::new().with_remote_span_context(SpanContext::new(
        TraceId::from(0x5eed_0000_0000_0000_0000_0000_0000_0000 + case),
        SpanId::from(0x00f0_67aa_0ba9_02b7),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    ))
}

fn spans_of(
    spans: &InMemorySpanExporter,
    provider: &SdkTracerProvider,
    cx: &Context,
) -> Vec<SpanData> {
    provider.force_flush().unwrap();
    let trace_id = cx.span().span_context().trace_id();
    spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|span| span.span_context.trace_id() == trace_id)
        .collect()
}

#[tokio::test]
async fn a_refresh_is_a_span_of_the_trace_it_runs_in() {
    let exporter = InMemorySpanExporter::default();
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    opentelemetry::global::set_tracer_provider(tracer_provider.clone());

    let asked = Arc::new(Mutex::new(0));
    let app = axum::Router::new()
        .route("/token", post(token))
        .with_state(asked.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    tokio::spawn(async move { axum::serve(listener, app).await });

    // (refresh token held, what the endpoint answers, the error.type)
    let cases: [(&str, Option<&str>); 2] =
        [("refresh-0", None), ("refresh-9", Some("invalid_grant"))];
    for (case, (refresh, error_type)) in cases.into_iter().enumerate() {
        let cx = parent(case as u128);
        let provider = provider(&base, refresh);
        let header = provider.authorization().with_context(cx.clone()).await;
        assert_eq!(
            header.is_ok_and(|header| header.as_deref() == Some("Bearer access-1")),
            error_type.is_none(),
            "{refresh}"
        );
        let spans = spans_of(&exporter, &tracer_provider, &cx);
        assert_eq!(spans.len(), 1, "{refresh}: one span, the refresh");
        let span = &spans[0];
        assert_eq!(span.name, "oauth refresh");
        assert_eq!(span.span_kind, SpanKind::Client);
        assert_eq!(span.parent_span_id, cx.span().span_context().span_id());
        let attributes: HashMap<String, OtelValue> = span
            .attributes
            .iter()
            .map(|kv| (kv.key.to_string(), kv.value.clone()))
            .collect();
        let mut expected = HashMap::from([
            ("server.address".to_owned(), OtelValue::from("127.0.0.1")),
            ("server.port".to_owned(), OtelValue::I64(i64::from(port))),
        ]);
        if let Some(error_type) = error_type {
            expected.insert("error.type".to_owned(), OtelValue::from(error_type));
            assert_eq!(span.status, Status::error(""), "{refresh}");
        } else {
            assert_eq!(span.status, Status::Unset, "{refresh}");
        }
        assert_eq!(attributes, expected, "{refresh}");
        // Nothing of a token, the endpoint's description or the URL's path
        // reaches the span.
        let shown = format!("{span:?}");
        for secret in [
            "access-0",
            "access-1",
            "refresh-0",
            "refresh-1",
            "refresh-9",
            "/token",
        ] {
            assert!(!shown.contains(secret), "{refresh}: {secret} in {shown}");
        }
    }
    assert_eq!(
        *asked.lock().unwrap(),
        2,
        "each case asked the endpoint once"
    );
}
