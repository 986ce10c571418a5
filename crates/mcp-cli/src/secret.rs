//! `mcp-cli secret set|get|rm|list`: the values entries name as
//! `${secret:NAME}`, kept in the OS secret store (`--secret-store`).
//!
//! A value is read without echo on a terminal and from standard input
//! otherwise; it is printed only by `get --show`, and nothing else this
//! verb prints holds it.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};

use anyhow::Context as _;
use mcp_config::secret::{SecretName, SecretStore, SecretValue, referenced_secrets};
use serde_json::json;

use crate::cli::SecretCommand;
use crate::context::Context;
use crate::output::{self, Outcome, Terminal, outln, shown, usage};

/// Runs one `secret` verb.
pub(crate) fn secret(context: &Context, command: SecretCommand) -> anyhow::Result<Outcome> {
    match command {
        SecretCommand::Set(args) => set(context, &args.name),
        SecretCommand::Get(args) => get(context, &args.name, args.show),
        SecretCommand::Rm(args) => remove(context, &args.name),
        SecretCommand::List => list(context),
    }
}

fn name(text: &str) -> anyhow::Result<SecretName> {
    SecretName::new(text).map_err(|_| {
        let reason = mcp_config::secret::secret_name_problem(text).unwrap_or("invalid");
        usage(format!("`{}` is not a secret name: {reason}", shown(text)))
    })
}

fn set(context: &Context, text: &str) -> anyhow::Result<Outcome> {
    let name = name(text)?;
    let value = if std::io::stdin().is_terminal() {
        let mut stderr = Terminal::stderr();
        stderr.write_all(format!("value for secret {name}: ").as_bytes())?;
        stderr.flush()?;
        let value = read_without_echo().context("cannot read the value")?;
        // The line the user ended is not echoed either: end it here.
        stderr.write_all(b"\n")?;
        value
    } else {
        let mut value = String::new();
        std::io::stdin()
            .lock()
            .read_to_string(&mut value)
            .context("cannot read the value from standard input (it must be UTF-8)")?;
        let trimmed = value
            .strip_suffix("\r\n")
            .or_else(|| value.strip_suffix('\n'))
            .unwrap_or(&value);
        trimmed.to_owned()
    };
    if value.is_empty() {
        return Err(usage(format!(
            "refusing to store an empty value as secret {name}"
        )));
    }
    let store = context.secrets.as_ref();
    store.set(&name, &SecretValue::new(value))?;
    report(context, &name, store, "stored")
}

/// One line from the terminal that is standard input, with echo off.
#[cfg(unix)]
fn read_without_echo() -> std::io::Result<String> {
    // Standard input itself (not the controlling terminal `/dev/tty`):
    // the terminal the value was asked on is the one it is read from.
    rpassword::read_password_with_config(
        rpassword::ConfigBuilder::new()
            .input_file_path("/dev/stdin")
            .output_discard()
            .build(),
    )
}

/// One line from the console, with echo off.
#[cfg(not(unix))]
fn read_without_echo() -> std::io::Result<String> {
    rpassword::read_password()
}

fn get(context: &Context, text: &str, show: bool) -> anyhow::Result<Outcome> {
    let name = name(text)?;
    let store = context.secrets.as_ref();
    let Some(value) = store.get(&name)? else {
        output::errln!("error: no secret {name} in the {}", store.kind());
        return Ok(Outcome::Failed);
    };
    if show {
        outln!("{}", shown(value.expose()));
        return Ok(Outcome::Ok);
    }
    report(context, &name, store, "set")
}

fn remove(context: &Context, text: &str) -> anyhow::Result<Outcome> {
    let name = name(text)?;
    let store = context.secrets.as_ref();
    if !store.remove(&name)? {
        output::errln!("error: no secret {name} in the {}", store.kind());
        return Ok(Outcome::Failed);
    }
    report(context, &name, store, "removed")
}

/// One line (or JSON object) saying what became of `name`.
fn report(
    context: &Context,
    name: &SecretName,
    store: &dyn SecretStore,
    what: &str,
) -> anyhow::Result<Outcome> {
    if context.json {
        output::print_json(&json!({"name": name.as_str(), "store": store.kind(), "status": what}))?;
    } else {
        let place = if what == "removed" { "from" } else { "in" };
        outln!("secret {name} {what} {place} the {}", store.kind());
    }
    Ok(Outcome::Ok)
}

/// Every stored name with the servers that name it, then every name a
/// server uses that the store does not hold (a failure: those servers
/// cannot connect).
fn list(context: &Context) -> anyhow::Result<Outcome> {
    let config = mcp_config::load(&context.load_options());
    let mut used: BTreeMap<SecretName, Vec<String>> = BTreeMap::new();
    for server in &config.servers {
        for name in referenced_secrets(&server.config) {
            used.entry(name)
                .or_default()
                .push(server.config.name.clone());
        }
    }
    let store = context.secrets.as_ref();
    let stored = store.names()?;
    let missing: Vec<(&SecretName, &Vec<String>)> = used
        .iter()
        .filter(|(name, _)| !stored.contains(name))
        .collect();
    let no_servers = Vec::new();
    if context.json {
        let secrets: Vec<_> = stored
            .iter()
            .map(|name| {
                json!({"name": name.as_str(), "servers": used.get(name).unwrap_or(&no_servers)})
            })
            .collect();
        let missing: Vec<_> = missing
            .iter()
            .map(|(name, servers)| json!({"name": name.as_str(), "servers": servers}))
            .collect();
        output::print_json(
            &json!({"store": store.kind(), "secrets": secrets, "missing": missing}),
        )?;
    } else {
        outln!("{} secret(s) in the {}:", stored.len(), store.kind());
        for name in &stored {
            match used.get(name) {
                Some(servers) => outln!("  {name}  used by {}", shown(&servers.join(", "))),
                None => outln!("  {name}  used by no server"),
            }
        }
        for (name, servers) in &missing {
            outln!(
                "  {name}  MISSING, named by {} (mcp-cli secret set {name})",
                shown(&servers.join(", "))
            );
        }
    }
    Ok(if missing.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}
