//! Workspace-level integration tests live in `tests/`. This library holds
//! what they share: the example MCP server core ([`server`]), run over stdio
//! by the `mcp-example-server` binary and in-process through the `sdk`
//! transport, loopback servers for the network kinds ([`net`]), one
//! [`harness`] per transport kind so the behaviour suite runs the same test
//! bodies against every kind, and the auth provider the conformance client
//! builds for the suite's `auth/*` scenarios ([`conformance_auth`]).

pub mod conformance_auth;
pub mod harness;
pub mod net;
pub mod server;
