//! The options every connection gets from the context, and the verbs'
//! `--timeout` values.

use std::time::Duration;

use crate::context::Context;
use crate::output::usage;

/// What a connection needs from outside: the environment stdio children
/// draw their allow-listed variables from, stored OAuth credentials, the
/// eras servers were found in before (`<home>/.mcp-cli/eras.json`, so a
/// server that answered `initialize` last time is not probed with
/// `server/discover` first), the host's answers to what servers ask
/// ([`crate::host`]), and the secret store (opened only when an entry
/// being connected names a secret).
pub(crate) fn connect_options<'a>(
    context: &Context,
    servers: impl IntoIterator<Item = &'a mcp_config::ServerConfig>,
) -> mcp_transport::ConnectOptions {
    let eras = mcp_transport::EraMemory::open(context.home.join(".mcp-cli").join("eras.json"));
    if let Some(problem) = eras.problem() {
        crate::output::errln!("warning: {}", crate::output::shown(&problem));
    }
    let mut session = mcp_transport::SessionOptions::default()
        .with_handler(crate::host::Host::handler(context, servers));
    if let Some(revision) = &context.protocol {
        session.protocol_version = revision.clone();
        session.pin_protocol = true;
    }
    mcp_transport::ConnectOptions::default()
        .with_session(session)
        .with_env(context.env.clone())
        .with_auth(std::sync::Arc::new(crate::auth::StoredCredentials::new(
            context,
        )))
        .with_eras(std::sync::Arc::new(eras))
        .with_secrets(context.secrets.clone())
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
