//! The smallest in-process server the benches measure the session's own
//! share against: answers `initialize` and echoes `tools/call` text,
//! inline on its task.

use std::sync::Arc;

use async_trait::async_trait;
use mcp_transport::kinds::{SdkServer, SdkServerConnection};
use mcp_transport::{JsonRpcMessage, Response};
use serde_json::json;

/// The smallest in-process server: answers `initialize` and echoes
/// `tools/call` text, inline on its task.
pub(crate) struct EchoServer;

#[async_trait]
impl SdkServer for EchoServer {
    async fn serve(self: Arc<Self>, mut connection: SdkServerConnection) {
        while let Some(message) = connection.incoming.recv().await {
            let JsonRpcMessage::Request(request) = message else {
                continue;
            };
            let result = if request.method == "initialize" {
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "echo", "version": "1"}})
            } else {
                let text = request
                    .params
                    .as_ref()
                    .and_then(|p| p.pointer("/arguments/text"))
                    .cloned()
                    .unwrap_or_default();
                json!({"content": [{"type": "text", "text": text}]})
            };
            let response = JsonRpcMessage::Response(Response {
                id: Some(request.id),
                outcome: Ok(result),
            });
            if connection.outgoing.send(response).await.is_err() {
                return;
            }
        }
    }
}
