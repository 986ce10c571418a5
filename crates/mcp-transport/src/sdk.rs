//! The in-process (`sdk`) transport: a server object living in the host.
//!
//! The host implements [`SdkServer`] and registers it by name in an
//! [`SdkRegistry`]; a config entry `{"type": "sdk", "name": ...}` then
//! connects to it. Each connection gets a pair of channels carrying
//! [`JsonRpcMessage`] values, and the server's [`SdkServer::serve`] future
//! runs in its own task until the client side closes. Nothing is serialised
//! unless [`SdkOptions::roundtrip_through_codec`] asks for it (useful to
//! check that a server behaves the same in-process and on the wire).
//!
//! Client→server messages travel on an unbounded channel (the client's pace
//! is set by its callers), server→client on a bounded one, so a server that
//! floods notifications is slowed down instead of growing memory, and the
//! two directions can never block each other.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::codec::Codec;
use crate::error::{TransportError, TransportErrorKind};
use crate::message::{Incoming, JsonRpcMessage};
use crate::transport::{Transport, TransportInfo};

/// How many server→client messages may wait unread.
const SERVER_TO_CLIENT_CAPACITY: usize = 256;

/// The server's side of one connection.
#[derive(Debug)]
pub struct SdkServerConnection {
    /// Messages from the client; `None` once the client closed.
    pub incoming: mpsc::UnboundedReceiver<JsonRpcMessage>,
    /// Messages to the client.
    pub outgoing: mpsc::Sender<JsonRpcMessage>,
}

/// An MCP server that runs inside the host process.
#[async_trait]
pub trait SdkServer: Send + Sync {
    /// Serves one client connection until `connection.incoming` ends (the
    /// client closed) or the server decides to stop (which the client sees
    /// as the connection closing). Runs in its own task; it is aborted if
    /// the client goes away without closing.
    async fn serve(self: Arc<Self>, connection: SdkServerConnection);
}

/// In-process servers the host offers, by the name config entries use.
#[derive(Clone, Default)]
pub struct SdkRegistry {
    servers: BTreeMap<String, Arc<dyn SdkServer>>,
}

impl fmt::Debug for SdkRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.servers.keys()).finish()
    }
}

impl SdkRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        SdkRegistry::default()
    }

    /// Registers (or replaces) the server offered under `name`.
    pub fn register(&mut self, name: impl Into<String>, server: Arc<dyn SdkServer>) -> &mut Self {
        self.servers.insert(name.into(), server);
        self
    }

    /// The server registered under `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn SdkServer>> {
        self.servers.get(name).cloned()
    }

    /// The registered names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.servers.keys().map(String::as_str)
    }
}

/// Options of the sdk transport.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, Default)]
pub struct SdkOptions {
    /// Encode every message to bytes and decode it again, both ways, as a
    /// wire transport would (for parity tests).
    pub roundtrip_through_codec: bool,
    /// The codec used for the round trip.
    pub codec: Codec,
}

impl SdkOptions {
    /// Options that hand messages over as they are, with no codec round trip: the same as `SdkOptions::default()`.
    pub fn new() -> Self {
        SdkOptions::default()
    }

    /// Sets whether every message goes through bytes and back, as on a wire.
    #[must_use]
    pub fn with_roundtrip_through_codec(mut self, roundtrip_through_codec: bool) -> Self {
        self.roundtrip_through_codec = roundtrip_through_codec;
        self
    }

    /// Sets the codec used for the round trip.
    #[must_use]
    pub fn with_codec(mut self, codec: Codec) -> Self {
        self.codec = codec;
        self
    }
}

/// The client side of an in-process connection.
#[derive(Debug)]
pub struct SdkTransport {
    server: String,
    to_server: Option<mpsc::UnboundedSender<JsonRpcMessage>>,
    from_server: mpsc::Receiver<JsonRpcMessage>,
    task: JoinHandle<()>,
    options: SdkOptions,
}

impl SdkTransport {
    /// Connects to `server_impl`, starting its `serve` task. `server` names
    /// the server in errors.
    pub fn connect(
        server: impl Into<String>,
        server_impl: Arc<dyn SdkServer>,
        options: SdkOptions,
    ) -> SdkTransport {
        let (to_server, incoming) = mpsc::unbounded_channel();
        let (outgoing, from_server) = mpsc::channel(SERVER_TO_CLIENT_CAPACITY);
        let task = tokio::spawn(server_impl.serve(SdkServerConnection { incoming, outgoing }));
        SdkTransport {
            server: server.into(),
            to_server: Some(to_server),
            from_server,
            task,
            options,
        }
    }

    /// Looks `name` up in `registry` and connects.
    pub fn connect_registered(
        server: impl Into<String>,
        name: &str,
        registry: &SdkRegistry,
        options: SdkOptions,
    ) -> Result<SdkTransport, TransportError> {
        let server = server.into();
        match registry.get(name) {
            Some(server_impl) => Ok(SdkTransport::connect(server, server_impl, options)),
            None => Err(TransportError::new(
                server,
                TransportErrorKind::SdkServerNotRegistered {
                    name: name.to_string(),
                },
            )),
        }
    }

    fn roundtrip(&self, message: JsonRpcMessage) -> Result<Vec<JsonRpcMessage>, TransportError> {
        let codec = self.options.codec;
        let bytes = codec.encode(&message);
        match codec.decode(&bytes) {
            Ok(decoded) => Ok(decoded.into_iter().collect()),
            Err(TransportErrorKind::FrameTooLarge { max, .. }) => Err(TransportError::new(
                &*self.server,
                TransportErrorKind::MessageTooLarge { max },
            )),
            Err(e) => Err(TransportError::protocol(&*self.server, e.to_string())),
        }
    }
}

#[async_trait]
impl Transport for SdkTransport {
    async fn send(&mut self, message: JsonRpcMessage) -> Result<(), TransportError> {
        let closed = || TransportError::closed(&*self.server);
        let Some(to_server) = &self.to_server else {
            return Err(closed());
        };
        if self.options.roundtrip_through_codec {
            for message in self.roundtrip(message)? {
                to_server.send(message).map_err(|_| closed())?;
            }
            Ok(())
        } else {
            to_server.send(message).map_err(|_| closed())
        }
    }

    async fn receive(&mut self, out: &mut Vec<Incoming>) -> Result<bool, TransportError> {
        let message = match self.from_server.recv().await {
            Some(message) if self.options.roundtrip_through_codec => {
                // A single message encodes to a single message.
                self.roundtrip(message)?.pop()
            }
            message => message,
        };
        Ok(match message {
            Some(message) => {
                out.push(Incoming::Message(message));
                true
            }
            None => false,
        })
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        // Dropping our sender ends the server's `incoming`; give it a moment
        // to finish on its own, then stop it.
        self.to_server = None;
        if self.task.is_finished() {
            return Ok(());
        }
        let finished =
            tokio::time::timeout(std::time::Duration::from_secs(2), &mut self.task).await;
        if finished.is_err() {
            self.task.abort();
        }
        Ok(())
    }

    fn info(&self) -> TransportInfo {
        TransportInfo::new("sdk")
    }
}

impl Drop for SdkTransport {
    fn drop(&mut self) {
        self.task.abort();
    }
}
