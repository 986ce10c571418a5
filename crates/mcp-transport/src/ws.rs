//! WebSocket transport.
//!
//! The handshake asks for the subprotocol `mcp` (`Sec-WebSocket-Protocol`)
//! and carries the entry's static headers and `headersHelper` output. Each
//! JSON-RPC message is one text frame (a binary frame holding UTF-8 JSON is
//! accepted too). Pings are answered with pongs. `close` performs the close
//! handshake: a Close frame, then up to two seconds for the server's.
//!
//! One task owns the socket: it writes what `send` hands it (and reports
//! the write's result back) and reads frames into the transport's
//! [`Inbox`], which keeps `receive` cancel-safe.

use std::time::Duration;

use async_trait::async_trait;
use futures::{SinkExt, StreamExt};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message};

use crate::codec::DEFAULT_MAX_MESSAGE_BYTES;
use crate::error::TransportError;
use crate::headers_helper::run_headers_helper;
use crate::http::{HttpOptions, encode, io_error, to_header_map};
use crate::inbox::{Delivery, Inbox};
use crate::message::JsonRpcMessage;
use crate::transport::{Transport, TransportInfo};

/// How long `close` waits for the server's Close frame.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

enum Command {
    Send(String, oneshot::Sender<Result<(), String>>),
    Close(oneshot::Sender<()>),
}

/// A WebSocket connection to one server.
#[derive(Debug)]
pub struct WsTransport {
    server: String,
    commands: mpsc::UnboundedSender<Command>,
    /// Fed by the task that owns the socket.
    inbox: Inbox,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Send(..) => f.write_str("Send"),
            Command::Close(_) => f.write_str("Close"),
        }
    }
}

impl WsTransport {
    /// Opens the connection (handshake within the connect timeout). `auth`
    /// in the options is ignored: WebSocket entries carry no OAuth.
    pub async fn connect(options: HttpOptions) -> Result<Self, TransportError> {
        let server = options.server.clone();
        let mut request = options
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| io_error(&server, format!("invalid url: {e}")).with_source(e))?;
        let mut extra = options.headers.clone();
        if let Some(command) = &options.headers_helper {
            extra.extend(run_headers_helper(&server, &options.url, command).await?);
        }
        // tungstenite and reqwest share the `http` crate's header types.
        request
            .headers_mut()
            .extend(to_header_map(&server, "headers", &extra)?);
        request
            .headers_mut()
            .insert("sec-websocket-protocol", HeaderValue::from_static("mcp"));

        let (stream, _response) = tokio::time::timeout(
            options.connect_timeout,
            tokio_tungstenite::connect_async_with_config(request, Some(ws_config()), false),
        )
        .await
        .map_err(|_| io_error(&server, "timed out opening the WebSocket"))?
        .map_err(|e| io_error(&server, describe_ws(&e)))?;

        let (command_tx, command_rx) = mpsc::unbounded_channel();
        let (inbox, delivery) = Inbox::new(&server);
        inbox
            .tasks()
            .spawn(drive(server.clone(), stream, command_rx, delivery));
        Ok(WsTransport {
            server,
            commands: command_tx,
            inbox,
        })
    }
}

/// Frames and messages past the message cap are refused by the socket
/// itself, as soon as a frame header announces one, instead of being
/// buffered first (tungstenite's default is 64 MiB).
fn ws_config() -> WebSocketConfig {
    let mut config = WebSocketConfig::default();
    config.max_message_size = Some(DEFAULT_MAX_MESSAGE_BYTES);
    config.max_frame_size = Some(DEFAULT_MAX_MESSAGE_BYTES);
    config
}

fn describe_ws(e: &tungstenite::Error) -> String {
    match e {
        tungstenite::Error::Http(response) => {
            format!("WebSocket handshake refused: HTTP {}", response.status())
        }
        tungstenite::Error::Protocol(p) => format!("WebSocket handshake failed: {p}"),
        other => format!("cannot open the WebSocket: {other}"),
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn drive(
    server: String,
    mut socket: Socket,
    mut commands: mpsc::UnboundedReceiver<Command>,
    inbox: Delivery,
) {
    loop {
        tokio::select! {
            command = commands.recv() => match command {
                Some(Command::Send(text, ack)) => {
                    let result = socket.send(Message::text(text)).await.map_err(|e| e.to_string());
                    let _ = ack.send(result);
                }
                Some(Command::Close(done)) => {
                    let frame = CloseFrame { code: CloseCode::Normal, reason: "".into() };
                    if socket.send(Message::Close(Some(frame))).await.is_ok() {
                        // Wait for the server's Close (tungstenite answers
                        // and ends the stream once it arrives).
                        let _ = tokio::time::timeout(CLOSE_GRACE, async {
                            while let Some(Ok(_)) = socket.next().await {}
                        })
                        .await;
                    }
                    let _ = done.send(());
                    return;
                }
                None => {
                    let _ = socket.close(None).await;
                    return;
                }
            },
            frame = socket.next() => match frame {
                Some(Ok(Message::Text(text))) => {
                    inbox.payload(text.as_bytes(), "frame");
                }
                // The codec checks the UTF-8 of what it decodes, and still
                // finds the id of an answer that is not.
                Some(Ok(Message::Binary(data))) => {
                    inbox.payload(&data, "frame");
                }
                // tungstenite queues the pong itself and flushes it with the
                // next read or write.
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                Some(Ok(Message::Close(_))) | None => return,
                Some(Err(e)) => {
                    inbox.lost(io_error(&server, format!("WebSocket broke: {e}")));
                    return;
                }
            },
        }
    }
}

#[async_trait]
impl Transport for WsTransport {
    async fn send(&mut self, message: JsonRpcMessage) -> Result<(), TransportError> {
        let closed = || TransportError::closed(&*self.server);
        if self.inbox.is_closed() {
            return Err(closed());
        }
        let (ack_tx, ack_rx) = oneshot::channel();
        self.commands
            .send(Command::Send(encode(&message), ack_tx))
            .map_err(|_| closed())?;
        match ack_rx.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(io_error(
                &self.server,
                format!("WebSocket write failed: {e}"),
            )),
            Err(_) => Err(closed()),
        }
    }

    async fn receive(
        &mut self,
        out: &mut Vec<crate::message::Incoming>,
    ) -> Result<bool, TransportError> {
        self.inbox.receive(out).await
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        if self.inbox.is_closed() {
            return Ok(());
        }
        let (done_tx, done_rx) = oneshot::channel();
        if self.commands.send(Command::Close(done_tx)).is_ok() {
            let _ =
                tokio::time::timeout(CLOSE_GRACE.saturating_add(Duration::from_secs(1)), done_rx)
                    .await;
        }
        self.inbox.close();
        Ok(())
    }

    fn info(&self) -> TransportInfo {
        TransportInfo::new("ws")
    }
}
