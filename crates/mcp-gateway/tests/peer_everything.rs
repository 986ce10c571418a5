//! The gateway in front of a server no one here wrote
//! (`@modelcontextprotocol/server-everything`, 2025-11-25):
//!
//! - Resource updates: it sends `notifications/resources/updated` for
//!   what it is subscribed to once its `toggle-subscriber-updates` tool is
//!   on. A 2025-11-25 session that subscribes and a 2026-07-28
//!   `subscriptions/listen` that names the resource both hear of it under
//!   the gateway's URI, and each stops hearing once it unsubscribes or its
//!   listen ends while the other still hears.
//! - Its own question to a 2026-07-28 client: `trigger-elicitation-request`
//!   asks with an `elicitation/create` of its own; the client gets it as an
//!   input round, answers in its retry, and the call ends with what the
//!   server made of the answer.
//! - Prompts: got by the prefixed name the gateway lists, twice (the
//!   second from the routes the first learned); an unlisted name refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::SessionRuntime;
use mcp_config::{ServerConfig, StdioConfig, TransportConfig};
use mcp_gateway::Gateway;
use mcp_test_peers as peers;
use serde_json::{Value, json};
use support::{Client, modern_meta, prefixed_gateway};

/// A gateway in front of server-everything, with the relay its
/// questions go through.
fn everything_gateway() -> (Arc<Gateway>, Arc<SessionRuntime>) {
    let server = ServerConfig::new(
        "everything",
        TransportConfig::Stdio(
            StdioConfig::new(peers::node22().to_string_lossy().into_owned()).with_args(vec![
                peers::everything_script().to_string_lossy().into_owned(),
                "stdio".into(),
            ]),
        ),
    );
    prefixed_gateway(vec![server])
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn a_resource_update_reaches_every_client_that_follows_it() {
    let (gateway, runtime) = everything_gateway();

    // A 2025-11-25 session subscribes to the first resource listed.
    let mut session = Client::session_of(&gateway).await;
    let listed = session.request(2, "resources/list", json!({})).await;
    let uri = listed["resources"][0]["uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with("mcp-gateway://everything/"), "{uri}");
    assert_eq!(
        session
            .request(3, "resources/subscribe", json!({"uri": uri}))
            .await,
        json!({})
    );

    // A 2026-07-28 client follows the same resource on a listen.
    let mut listener = Client::of(&gateway);
    listener
        .send(
            json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
            "params": {"_meta": modern_meta(),
                "notifications": {"resourceSubscriptions": [uri, "mcp-gateway://nowhere/x"]}}}),
        )
        .await;
    let acknowledged = listener.next(Duration::from_secs(30)).await.unwrap();
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );
    assert_eq!(
        acknowledged["params"]["notifications"]["resourceSubscriptions"],
        json!([uri]),
        "a resource of no server is left out: {acknowledged}"
    );

    // The server starts sending updates for what it is subscribed to.
    let tools = session.request(4, "tools/list", json!({})).await;
    let toggle = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .find(|name| name.ends_with("toggle-subscriber-updates"))
        .expect("server-everything's toggle-subscriber-updates")
        .to_owned();
    session
        .request(5, "tools/call", json!({"name": toggle, "arguments": {}}))
        .await;

    let heard = session
        .update(Duration::from_secs(15))
        .await
        .expect("the session hears of the update");
    assert_eq!(heard["params"]["uri"], uri, "{heard}");
    let heard = listener
        .update(Duration::from_secs(15))
        .await
        .expect("the listen hears of the update");
    assert_eq!(heard["params"]["uri"], uri, "{heard}");
    assert_eq!(
        heard["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1",
        "{heard}"
    );

    // The session unsubscribes: the listen still hears, the session not.
    assert_eq!(
        session
            .request(6, "resources/unsubscribe", json!({"uri": uri}))
            .await,
        json!({})
    );
    session.seen.clear();
    let heard = listener.update(Duration::from_secs(15)).await;
    assert!(heard.is_some(), "the listen still follows the resource");
    assert_eq!(session.update(Duration::from_millis(500)).await, None);

    // The listen ends: no one follows the resource, nothing is sent.
    listener
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "listen-1"}}),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    listener.seen.clear();
    while listener.next(Duration::from_millis(100)).await.is_some() {}
    assert_eq!(listener.update(Duration::from_secs(7)).await, None);
    runtime.shutdown().await;
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn an_older_servers_own_question_reaches_a_modern_client_as_an_input_round() {
    let (gateway, runtime) = everything_gateway();
    let mut client = Client::of(&gateway);
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {"form": {}}});
    let tools = client
        .request(1, "tools/list", json!({"_meta": meta}))
        .await;
    let elicit = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .find(|name| name.ends_with("trigger-elicitation-request"))
        .expect("server-everything's trigger-elicitation-request")
        .to_owned();
    let call = |state: Option<&str>, responses: Option<Value>| {
        let mut params = json!({"name": elicit, "arguments": {}, "_meta": meta});
        if let Some(state) = state {
            params["requestState"] = json!(state);
        }
        if let Some(responses) = responses {
            params["inputResponses"] = responses;
        }
        params
    };
    let round = client.request(2, "tools/call", call(None, None)).await;
    assert_eq!(round["resultType"], "input_required", "{round}");
    let (key, question) = round["inputRequests"]
        .as_object()
        .and_then(|requests| requests.iter().next())
        .expect("one input request");
    assert_eq!(question["method"], "elicitation/create", "{round}");
    assert!(question["params"]["requestedSchema"].is_object(), "{round}");
    let state = round["requestState"].as_str().unwrap().to_owned();

    // A made-up state names no held call.
    let forged = client
        .request_error(3, "tools/call", call(Some("mcp-gateway-held:00"), None))
        .await;
    assert_eq!(forged["code"], -32602, "{forged}");

    let answer = json!({key.clone(): {"action": "accept", "content": {"name": "Ada Lovelace"}}});
    let done = client
        .request(4, "tools/call", call(Some(&state), Some(answer)))
        .await;
    let text = done["content"].to_string();
    assert!(text.contains("Ada Lovelace"), "{done}");
    assert_ne!(done["resultType"], "input_required", "{done}");

    // The state was used up: a second retry with it is refused.
    let again = client
        .request_error(5, "tools/call", call(Some(&state), None))
        .await;
    assert_eq!(again["code"], -32602, "{again}");
    runtime.shutdown().await;
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn a_prompt_is_got_by_the_name_the_gateway_lists() {
    let (gateway, runtime) = everything_gateway();
    let mut client = Client::of(&gateway);
    let meta = modern_meta();
    let listed = client
        .request(1, "prompts/list", json!({"_meta": meta}))
        .await;
    let names: Vec<&str> = listed["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|prompt| prompt["name"].as_str())
        .collect();
    let simple = names
        .iter()
        .find(|name| name.ends_with("simple-prompt"))
        .unwrap_or_else(|| panic!("server-everything's simple-prompt in {names:?}"))
        .to_string();
    assert!(simple.starts_with("mcp__everything__"), "{simple}");
    // Got twice (the second from the names the first one learned), and a
    // name the gateway never listed is refused, naming it.
    for id in [2, 3] {
        let got = client
            .request(id, "prompts/get", json!({"name": simple, "_meta": meta}))
            .await;
        assert!(got["messages"][0]["content"]["text"].is_string(), "{got}");
    }
    let unknown = client
        .request_error(
            4,
            "prompts/get",
            json!({"name": "mcp__everything__nope", "_meta": meta}),
        )
        .await;
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .contains("unknown prompt"),
        "{unknown}"
    );
    runtime.shutdown().await;
}
