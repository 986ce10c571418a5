//! Workspace-level integration tests live in `tests/`. This library holds
//! what they share: the example MCP server core ([`server`]), run over stdio
//! by the `mcp-example-server` binary and in-process through the `sdk`
//! transport, and one [`harness`] per transport kind so the behaviour suite
//! runs the same test bodies against every kind.

pub mod harness;
pub mod server;
