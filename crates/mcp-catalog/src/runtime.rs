//! Session runtimes (REFERENCE §3.1): the live connections behind one
//! host session and the catalog built from them.
//!
//! Nothing connects until an attempt asks for the catalog. Then every
//! enabled server connects at once (bounded by a limit), each within its
//! connect timeout, and lists its tools. Callers that ask while a build
//! runs share it. A generation counter, bumped by every invalidation, keeps
//! a build that was overtaken from being cached. A server that failed is
//! reported in the catalog's diagnostics and tried again on a later
//! attempt, unless its failure backoff pauses it.
//!
//! The connection step sits behind [`Connector`], so the same runtime runs
//! over real transports and over scripted servers in tests; time comes from
//! a [`crate::clock::Clock`].
//!
//! The module has one file per seam: `connection` (what the runtime asks of
//! a server: the [`Connection`] and [`Connector`] traits and what they
//! report), `session` (one session's runtime: its slots, cache and calls),
//! `build` (one catalog build), `connect` (one shared connect attempt per
//! server), `subscribe` (catalog change notices), `utility` (the utility
//! tools' requests and their content blocks), `browse` (one server's
//! resources and prompts, outside the catalog), `reconcile` (what applying a new server set changed), `manager` (the runtimes of
//! every session) and `listings` (the public listings those runtimes
//! share).
//!
//! A server's tool listing is kept until `list_changed` says it changed
//! or, when the server gave a `ttlMs` (2026-07-28), until that TTL runs
//! out; then the next catalog lists that server again and reuses every
//! other. A listing is shared with other sessions' runtimes only when
//! the server marked it `cacheScope: "public"`.

mod browse;
mod build;
mod connect;
mod connection;
mod listings;
mod manager;
mod options;
mod reconcile;
mod session;
mod state;
mod subscribe;
mod utility;

pub use browse::{Browsed, MAX_LISTED_ITEMS};
pub use connection::{
    ConnectReport, Connection, Connector, InputRounds, ServerCounts, ServerEvents, ServerIdentity,
    ToolCallOutput,
};
pub use manager::{MIN_SWEEP_INTERVAL, RuntimeLease, RuntimeManager, RuntimeManagerBuilder};
pub use options::{
    DEFAULT_MAX_CONCURRENT_CONNECTS, DEFAULT_RETIRE_GRACE, RuntimeOptions, SessionRuntimeBuilder,
};
pub use reconcile::Reconciled;
pub use session::SessionRuntime;
pub use subscribe::CatalogUpdates;
