//! Workspace-level integration tests live in `tests/`. This library holds
//! what they share: the example MCP server core ([`server`]), run over stdio
//! by the `mcp-example-server` binary and in-process through the `sdk`
//! transport, loopback servers for the network kinds ([`net`]), one
//! [`harness`] per transport kind so the behaviour suite runs the same test
//! bodies against every kind, the auth provider the conformance client
//! builds for the suite's `auth/*` scenarios ([`conformance_auth`]), and for
//! the fault injection and load suites: the script of
//! `mcp-misbehaving-server` ([`misbehaving`]), a loopback HTTP server that
//! misbehaves on purpose ([`fault_net`]), process measurements
//! ([`measure`]), the scripted listings of `mcp-listing-server`
//! ([`listing`]), and for the deadline and input-round tests the script
//! of `mcp-relentless-server` ([`relentless`]).

// A test-support crate: a failed loopback bind or a bad static header fails
// the test that asked for it.
#![allow(clippy::expect_used)]

pub mod conformance_auth;
pub mod fault_net;
pub mod harness;
pub mod listing;
pub mod measure;
pub mod misbehaving;
pub mod net;
pub mod relentless;
pub mod scripted;
pub mod server;
