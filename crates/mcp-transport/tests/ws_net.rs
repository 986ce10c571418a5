//! WebSocket details at the frame level: the handshake (subprotocol `mcp`,
//! static and `headersHelper` headers), one message per text frame, pongs
//! for pings, and the close handshake. The server is a tokio-tungstenite
//! acceptor on 127.0.0.1 that records what it saw.

#![allow(clippy::unwrap_used, clippy::result_large_err)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use mcp_transport::HttpOptions;
use mcp_transport::kinds::WsTransport;
use mcp_transport::{Incoming, JsonRpcMessage, Notification, Transport};
use serde_json::json;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

#[derive(Debug, Default)]
struct Seen {
    headers: BTreeMap<String, String>,
    frames: Vec<String>,
}

/// Accepts one connection, sends a ping and a notification, then records
/// frames until the connection ends.
async fn server(offer_mcp: bool) -> (String, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "ws://127.0.0.1:{}/ws",
        listener.local_addr().unwrap().port()
    );
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let record = Arc::clone(&log);
        let check =
            move |request: &Request, mut response: Response| -> Result<Response, ErrorResponse> {
                let headers = request
                    .headers()
                    .iter()
                    .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
                    .collect();
                record.lock().unwrap().headers = headers;
                if offer_mcp {
                    response
                        .headers_mut()
                        .insert("sec-websocket-protocol", "mcp".parse().unwrap());
                }
                Ok(response)
            };
        let Ok(mut socket) = tokio_tungstenite::accept_hdr_async(stream, check).await else {
            return;
        };
        socket
            .send(Message::Ping(b"are you there".to_vec().into()))
            .await
            .unwrap();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        socket.send(Message::text(note.to_string())).await.unwrap();
        while let Some(Ok(frame)) = socket.next().await {
            let text = match frame {
                Message::Text(text) => format!("text {text}"),
                Message::Pong(data) => format!("pong {}", String::from_utf8_lossy(&data)),
                Message::Close(frame) => format!("close {:?}", frame.map(|f| u16::from(f.code))),
                other => format!("other {other:?}"),
            };
            log.lock().unwrap().frames.push(text);
        }
    });
    (url, seen)
}

#[tokio::test]
async fn handshake_frames_pings_and_close() {
    let (url, seen) = server(true).await;
    let mut options = HttpOptions::new("sock", &url);
    options.headers.insert("X-Static".into(), "s".into());
    options.headers_helper = Some(r#"printf '{"X-Helper":"h"}'"#.into());
    let mut transport = WsTransport::connect(options).await.unwrap();

    let mut batch = Vec::new();
    let open = tokio::time::timeout(Duration::from_secs(5), transport.receive(&mut batch))
        .await
        .unwrap()
        .unwrap();
    let first = batch.into_iter().next().map(Incoming::into_message);
    assert!(
        open && matches!(&first, Some(JsonRpcMessage::Notification(n)) if n.method == "notifications/tools/list_changed"),
        "{first:?}"
    );
    transport
        .send(JsonRpcMessage::Notification(Notification {
            method: "notifications/initialized".into(),
            params: None,
        }))
        .await
        .unwrap();
    transport.close().await.unwrap();
    // Closing is idempotent and a closed transport refuses to send.
    transport.close().await.unwrap();
    assert!(
        transport
            .send(JsonRpcMessage::Notification(Notification {
                method: "x".into(),
                params: None
            }))
            .await
            .is_err()
    );
    tokio::time::sleep(Duration::from_millis(100)).await;

    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.headers
            .get("sec-websocket-protocol")
            .map(String::as_str),
        Some("mcp")
    );
    assert_eq!(seen.headers.get("x-static").map(String::as_str), Some("s"));
    assert_eq!(seen.headers.get("x-helper").map(String::as_str), Some("h"));
    assert_eq!(
        seen.frames,
        [
            "pong are you there".to_owned(),
            r#"text {"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            "close Some(1000)".to_owned(),
        ]
    );
}

#[tokio::test]
async fn a_server_that_refuses_the_subprotocol_is_an_error_naming_the_server() {
    let (url, _seen) = server(false).await;
    let err = WsTransport::connect(HttpOptions::new("sock", &url))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("sock: WebSocket handshake failed"), "{err}");
}
