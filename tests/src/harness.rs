//! One way to reach the example server per transport kind, so the
//! behaviour suite (`tests/transport_suite.rs`) runs the same test bodies
//! against every kind.
//!
//! A kind implements [`Harness`]: given the server's [`ServerOptions`] and the
//! client's [`SessionOptions`], start a fresh example server reachable over
//! that kind and return an initialized session.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use mcp_config::{ServerConfig, StdioConfig, Timeouts, TransportConfig};
use mcp_transport::kinds::SdkOptions;
use mcp_transport::kinds::SdkRegistry;
use mcp_transport::{ClientSession, ConnectOptions, SessionOptions, TransportError};

use crate::server::{ExampleServer, ServerOptions};

/// Starts an example server over one transport kind and connects to it.
#[async_trait]
pub trait Harness: Send + Sync {
    /// The kind's name (`stdio`, `sdk`, `http`, ...).
    fn kind(&self) -> &'static str;

    /// A session with a fresh server.
    async fn connect(
        &self,
        server: &ServerOptions,
        session: SessionOptions,
    ) -> Result<ClientSession, TransportError>;

    /// Whether errors about a dead server carry its stderr (stdio only).
    fn captures_stderr(&self) -> bool {
        false
    }
}

/// The config entry name the harnesses give their server.
pub fn server_name(kind: &str) -> String {
    format!("example-{kind}")
}

/// Timeouts taken from session options, for a config entry.
pub fn timeouts_of(session: &SessionOptions) -> Timeouts {
    Timeouts::default()
        .with_connect(session.connect_timeout)
        .with_request(session.request_timeout)
        .with_tool_call(session.tool_call_timeout)
}

/// A server config entry with defaults for everything but the transport.
pub fn entry(name: &str, transport: TransportConfig, timeouts: Timeouts) -> ServerConfig {
    ServerConfig::new(name.to_string(), transport).with_timeouts(timeouts)
}

/// The environment tests hand to stdio children: only `PATH`.
pub fn test_env() -> BTreeMap<String, String> {
    std::env::var("PATH")
        .map(|path| BTreeMap::from([("PATH".to_string(), path)]))
        .unwrap_or_default()
}

/// `mcp-example-server` as a child process.
#[derive(Debug, Clone)]
pub struct StdioHarness {
    /// Path of the `mcp-example-server` binary.
    pub binary: PathBuf,
}

impl StdioHarness {
    /// A harness running `binary`.
    pub fn new(binary: impl Into<PathBuf>) -> Self {
        StdioHarness {
            binary: binary.into(),
        }
    }

    /// The config entry that starts the server with `server` options.
    pub fn config(&self, server: &ServerOptions, timeouts: Timeouts) -> ServerConfig {
        entry(
            &server_name("stdio"),
            TransportConfig::Stdio(
                StdioConfig::new(self.binary.to_string_lossy().into_owned())
                    .with_args(server.to_args()),
            ),
            timeouts,
        )
    }
}

#[async_trait]
impl Harness for StdioHarness {
    fn kind(&self) -> &'static str {
        "stdio"
    }

    async fn connect(
        &self,
        server: &ServerOptions,
        session: SessionOptions,
    ) -> Result<ClientSession, TransportError> {
        let config = self.config(server, timeouts_of(&session));
        let options = ConnectOptions::default()
            .with_session(session)
            .with_env(test_env());
        mcp_transport::connect(&config, &options).await
    }

    fn captures_stderr(&self) -> bool {
        true
    }
}

/// The example server in-process, through the `sdk` transport.
#[derive(Debug, Clone, Copy, Default)]
pub struct SdkHarness {
    /// Round-trip every message through the codec (wire parity).
    pub roundtrip_through_codec: bool,
}

#[async_trait]
impl Harness for SdkHarness {
    fn kind(&self) -> &'static str {
        "sdk"
    }

    async fn connect(
        &self,
        server: &ServerOptions,
        session: SessionOptions,
    ) -> Result<ClientSession, TransportError> {
        let mut registry = SdkRegistry::new();
        registry.register(
            "example",
            Arc::new(ExampleServer::new(server.clone()))
                as Arc<dyn mcp_transport::kinds::SdkServer>,
        );
        let config = entry(
            &server_name("sdk"),
            TransportConfig::Sdk {
                name: "example".to_string(),
            },
            timeouts_of(&session),
        );
        let options = ConnectOptions::default()
            .with_session(session)
            .with_sdk_servers(Arc::new(registry))
            .with_sdk(
                SdkOptions::default().with_roundtrip_through_codec(self.roundtrip_through_codec),
            );
        mcp_transport::connect(&config, &options).await
    }
}
