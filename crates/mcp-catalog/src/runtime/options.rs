//! What a runtime is built with: [`RuntimeOptions`] and the builder.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_config::limits::DEFAULT_SESSION_IDLE_TTL;

use crate::backoff::BackoffPolicy;
use crate::catalog::MaterializeOptions;
use crate::clock::Clock;
use crate::result::DEFAULT_MAX_RESULT_BYTES;
use crate::servers::ServerSet;

use super::connection::Connector;

use super::session::SessionRuntime;

/// Default number of servers one build connects at the same time.
pub const DEFAULT_MAX_CONCURRENT_CONNECTS: usize = 32;

/// How long, by default, the calls under way on a removed or replaced
/// server may run on before its old session is closed under them.
pub const DEFAULT_RETIRE_GRACE: Duration = Duration::from_secs(30);
/// Settings of a runtime, chosen by the host: how the catalog is
/// materialised, how many servers connect at once, when an unused runtime
/// is evicted, how failing servers back off and how large a converted
/// result may be.
///
/// Built from [`RuntimeOptions::default`] (or [`RuntimeOptions::new`],
/// the same) and the `with_*` methods, so new settings can be added
/// without breaking hosts:
///
/// ```
/// use std::time::Duration;
/// use mcp_catalog::{MaterializeOptions, NamingStyle, RuntimeOptions};
///
/// let options = RuntimeOptions::new()
///     .with_materialize(MaterializeOptions::new().with_style(NamingStyle::OpenClaw))
///     .with_idle_ttl(Duration::from_secs(300));
/// assert_eq!(options.materialize.style, NamingStyle::OpenClaw);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RuntimeOptions {
    /// How every catalog of this runtime is materialised (naming,
    /// provider profile, reserved names, budget).
    pub materialize: MaterializeOptions,
    /// Servers one build connects at the same time.
    pub max_concurrent_connects: usize,
    /// A runtime unused this long is evicted; zero never evicts.
    pub idle_ttl: Duration,
    /// When a failing server is paused, and for how long.
    pub backoff: BackoffPolicy,
    /// Cap on one converted tool result.
    pub max_result_bytes: usize,
    /// How long calls under way on a removed or replaced server may run
    /// on before its old session closes under them (see
    /// [`SessionRuntime::reconcile`]).
    pub retire_grace: Duration,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            materialize: MaterializeOptions::default(),
            max_concurrent_connects: DEFAULT_MAX_CONCURRENT_CONNECTS,
            idle_ttl: DEFAULT_SESSION_IDLE_TTL,
            backoff: BackoffPolicy::default(),
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            retire_grace: DEFAULT_RETIRE_GRACE,
        }
    }
}

impl RuntimeOptions {
    /// The defaults: default materialisation, up to
    /// [`DEFAULT_MAX_CONCURRENT_CONNECTS`] connects at once, the
    /// configuration's default idle TTL, the default backoff and
    /// [`DEFAULT_MAX_RESULT_BYTES`](crate::result::DEFAULT_MAX_RESULT_BYTES)
    /// and a [`DEFAULT_RETIRE_GRACE`].
    pub fn new() -> Self {
        RuntimeOptions::default()
    }

    /// The same options, materialising with `materialize`.
    pub fn with_materialize(mut self, materialize: MaterializeOptions) -> Self {
        self.materialize = materialize;
        self
    }

    /// The same options, connecting at most `limit` servers at once
    /// (zero counts as one).
    pub fn with_max_concurrent_connects(mut self, limit: usize) -> Self {
        self.max_concurrent_connects = limit;
        self
    }

    /// The same options, evicting a runtime unused for `ttl` (zero never
    /// evicts).
    pub fn with_idle_ttl(mut self, ttl: Duration) -> Self {
        self.idle_ttl = ttl;
        self
    }

    /// The same options, pausing failing servers by `backoff`.
    pub fn with_backoff(mut self, backoff: BackoffPolicy) -> Self {
        self.backoff = backoff;
        self
    }

    /// The same options, cutting one converted result at `max_bytes`.
    pub fn with_max_result_bytes(mut self, max_bytes: usize) -> Self {
        self.max_result_bytes = max_bytes;
        self
    }

    /// The same options, letting calls on a removed or replaced server
    /// run for `grace` before its old session closes under them.
    pub fn with_retire_grace(mut self, grace: Duration) -> Self {
        self.retire_grace = grace;
        self
    }
}

/// How a [`SessionRuntime`] is made: the session id, the servers and the
/// connector are required ([`SessionRuntime::builder`]); the clock
/// (default [`SystemClock`](crate::SystemClock)) and the options (default
/// [`RuntimeOptions::default`]) are optional. Building connects nothing.
#[must_use = "a builder does nothing until `build` is called"]
pub struct SessionRuntimeBuilder {
    pub(super) session_id: String,
    pub(super) servers: ServerSet,
    pub(super) connector: Arc<dyn Connector>,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) options: RuntimeOptions,
}

impl fmt::Debug for SessionRuntimeBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionRuntimeBuilder")
            .field("session_id", &self.session_id)
            .field("servers", &self.servers)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl SessionRuntimeBuilder {
    /// Keeps time through `clock` (a [`crate::clock::ManualClock`] in tests, so
    /// eviction and backoff run without waiting).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Uses `options` instead of the defaults.
    pub fn with_options(mut self, options: RuntimeOptions) -> Self {
        self.options = options;
        self
    }

    /// The runtime. Connects nothing yet: the first
    /// [`SessionRuntime::catalog`] does.
    pub fn build(self) -> SessionRuntime {
        SessionRuntime::sharing(
            self.session_id,
            self.servers,
            self.connector,
            self.clock,
            self.options,
            Arc::default(),
        )
    }
}
