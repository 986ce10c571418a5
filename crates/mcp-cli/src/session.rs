//! Connecting: the runtime the async verbs run on and the options every
//! connection gets from the context.

use std::time::Duration;

use crate::context::Context;
use crate::output::usage;

/// A multi-threaded runtime for one verb.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// What a connection needs from outside: the environment stdio children
/// draw their allow-listed variables from, and stored OAuth credentials.
pub(crate) fn connect_options(context: &Context) -> mcp_transport::ConnectOptions {
    mcp_transport::ConnectOptions {
        env: Some(context.env.clone()),
        auth: Some(std::sync::Arc::new(crate::auth::StoredCredentials::new(
            context,
        ))),
        ..mcp_transport::ConnectOptions::default()
    }
}

/// A `--timeout S` value: positive seconds, fractions allowed.
pub(crate) fn seconds(value: f64, flag: &str) -> anyhow::Result<Duration> {
    if value.is_finite() && value > 0.0 {
        Duration::try_from_secs_f64(value).map_err(|err| usage(format!("{flag} {value}: {err}")))
    } else {
        Err(usage(format!(
            "{flag} {value}: expected a positive number of seconds"
        )))
    }
}
