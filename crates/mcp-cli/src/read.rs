//! The verbs that read the merged configuration: `list`, `get`,
//! `check-config`. Loading, merging and checking are `mcp_config`'s; this
//! module lays the answer out.

use mcp_config::check::diagnostic_line;
use mcp_config::{
    Approval, CheckReport, LoadedConfig, ScopedServer, TransportConfig, config_hash, load,
    signature,
};
use serde_json::{Value, json};

use crate::cli::{CheckArgs, GetArgs};
use crate::context::Context;
use crate::output::{self, Outcome, outln, shown};

/// What secret values are replaced with.
pub(crate) const REDACTED: &str = "***";

/// `list`: every merged server, then every diagnostic.
pub(crate) fn list(context: &Context) -> anyhow::Result<Outcome> {
    let config = load(&context.load_options());
    if context.json {
        let servers: Vec<Value> = config.servers.iter().map(summary_json).collect();
        output::print_json(&json!({
            "servers": servers,
            "diagnostics": config.diagnostics,
        }))?;
        return Ok(Outcome::Ok);
    }
    if config.servers.is_empty() {
        outln!("no servers configured");
    } else {
        let rows: Vec<[String; 5]> = config
            .servers
            .iter()
            .map(|server| {
                [
                    server.config.name.clone(),
                    server.config.transport.kind().to_string(),
                    server.scope.to_string(),
                    state(server),
                    server.source.display().to_string(),
                ]
            })
            .collect();
        print_table(["NAME", "KIND", "SCOPE", "STATE", "SOURCE"], &rows);
    }
    print_diagnostics(&config);
    Ok(Outcome::Ok)
}

/// `get NAME`: one server in full, secrets redacted.
pub(crate) fn get(context: &Context, args: &GetArgs) -> anyhow::Result<Outcome> {
    let config = load(&context.load_options());
    let Some(server) = config.server(&args.name) else {
        anyhow::bail!("{}", unknown_server(&config, &args.name));
    };
    let mut detail = serde_json::to_value(server)?;
    if !args.show_secrets {
        redact(&mut detail["config"]["transport"]);
    }
    if context.json {
        detail["signature"] = json!(signature(&server.config));
        detail["hash"] = json!(config_hash(&server.config));
        detail["diagnostics"] = json!(server_diagnostics(&config, &args.name));
        output::print_json(&detail)?;
        return Ok(Outcome::Ok);
    }
    let transport = &detail["config"]["transport"];
    let mut lines = vec![
        ("kind", server.config.transport.kind().to_string()),
        ("scope", server.scope.to_string()),
        ("source", server.source.display().to_string()),
        ("state", state(server)),
    ];
    if let Some(plugin) = &server.plugin {
        lines.push(("plugin", plugin.clone()));
    }
    match &server.config.transport {
        TransportConfig::Stdio(stdio) => {
            lines.push(("command", stdio.command.clone()));
            lines.push(("args", shell_words(&stdio.args)));
            lines.push(("env", pairs(&transport["env"], "=")));
            if let Some(cwd) = &stdio.cwd {
                lines.push(("cwd", cwd.display().to_string()));
            }
        }
        TransportConfig::Http(remote)
        | TransportConfig::Sse(remote)
        | TransportConfig::Ws(remote) => {
            lines.push(("url", remote.url.clone()));
            lines.push(("headers", pairs(&transport["headers"], ": ")));
            if let Some(helper) = &remote.headers_helper {
                lines.push(("headersHelper", helper.clone()));
            }
            if let Some(oauth) = &remote.oauth {
                let mut parts = Vec::new();
                if let Some(id) = &oauth.client_id {
                    parts.push(format!("client id {id}"));
                }
                if let Some(port) = oauth.callback_port {
                    parts.push(format!("callback port {port}"));
                }
                if !oauth.scopes.is_empty() {
                    parts.push(format!("scopes {}", oauth.scopes.join(" ")));
                }
                lines.push((
                    "oauth",
                    if parts.is_empty() {
                        "yes".to_owned()
                    } else {
                        parts.join(", ")
                    },
                ));
            }
        }
        TransportConfig::Sdk { name } => lines.push(("sdk name", name.clone())),
        TransportConfig::ClaudeAiProxy(proxy) => {
            lines.push(("url", proxy.url.clone()));
            lines.push(("id", proxy.id.clone()));
        }
        #[allow(unreachable_patterns)]
        _ => {}
    }
    let timeouts = &server.config.timeouts;
    lines.push((
        "timeouts",
        format!(
            "connect {} ms, request {} ms, tool call {} ms",
            timeouts.connect.as_millis(),
            timeouts.request.as_millis(),
            timeouts.tool_call.as_millis()
        ),
    ));
    let filter = &server.config.tool_filter;
    if !filter.include.is_empty() || !filter.exclude.is_empty() {
        lines.push((
            "tool filter",
            format!(
                "include [{}], exclude [{}]",
                filter.include.join(", "),
                filter.exclude.join(", ")
            ),
        ));
    }
    if server.config.required {
        lines.push(("required", "yes".to_owned()));
    }
    if let Some(signature) = signature(&server.config) {
        lines.push(("signature", signature));
    }
    lines.push(("hash", config_hash(&server.config)));
    outln!("{}", shown(&server.config.name));
    let width = lines
        .iter()
        .map(|(label, _)| label.len())
        .max()
        .unwrap_or(0);
    for (label, value) in lines {
        outln!("  {label:width$}  {}", shown(&value));
    }
    for diagnostic in config
        .diagnostics
        .iter()
        .filter(|d| d.server.as_deref() == Some(args.name.as_str()))
    {
        outln!("{}", shown(&diagnostic_line(diagnostic)));
    }
    Ok(Outcome::Ok)
}

/// `check-config [--strict]`: the shared check of `mcp_config::check`.
pub(crate) fn check_config(context: &Context, args: &CheckArgs) -> anyhow::Result<Outcome> {
    let report = CheckReport::run(&context.load_options());
    if context.json {
        output::print_json(&report.to_json())?;
    } else {
        for line in report.human_lines() {
            outln!("{}", shown(&line));
        }
    }
    Ok(if report.failed(args.strict) {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}

/// The error for a name no source defines, listing the names that exist.
pub(crate) fn unknown_server(config: &LoadedConfig, name: &str) -> String {
    let names: Vec<&str> = config
        .servers
        .iter()
        .map(|s| s.config.name.as_str())
        .collect();
    if names.is_empty() {
        format!("no server named `{name}`: no servers are configured")
    } else {
        format!(
            "no server named `{name}` (configured: {})",
            names.join(", ")
        )
    }
}

fn summary_json(server: &ScopedServer) -> Value {
    json!({
        "name": server.config.name,
        "kind": server.config.transport.kind(),
        "scope": server.scope,
        "source": server.source,
        "enabled": server.config.enabled,
        "approval": server.approval,
        "plugin": server.plugin,
    })
}

fn server_diagnostics(config: &LoadedConfig, name: &str) -> Vec<Value> {
    config
        .diagnostics
        .iter()
        .filter(|d| d.server.as_deref() == Some(name))
        .filter_map(|d| serde_json::to_value(d).ok())
        .collect()
}

/// `enabled`, `disabled`, `pending approval` or `denied`.
pub(crate) fn state(server: &ScopedServer) -> String {
    if !server.config.enabled {
        return "disabled".to_owned();
    }
    match server.approval {
        Approval::Approved => "enabled",
        Approval::Pending => "pending approval",
        Approval::Denied => "denied",
    }
    .to_owned()
}

/// Replaces every value of `env` and `headers` with `***`.
fn redact(transport: &mut Value) {
    for field in ["env", "headers"] {
        if let Some(Value::Object(values)) = transport.get_mut(field) {
            for value in values.values_mut() {
                *value = Value::from(REDACTED);
            }
        }
    }
}

fn pairs(values: &Value, separator: &str) -> String {
    match values {
        Value::Object(map) if !map.is_empty() => map
            .iter()
            .map(|(key, value)| format!("{key}{separator}{}", value.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", "),
        _ => "(none)".to_owned(),
    }
}

fn shell_words(args: &[String]) -> String {
    if args.is_empty() {
        return "(none)".to_owned();
    }
    args.iter()
        .map(|arg| {
            if !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c))
            {
                arg.clone()
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn print_diagnostics(config: &LoadedConfig) {
    for diagnostic in &config.diagnostics {
        outln!("{}", shown(&diagnostic_line(diagnostic)));
    }
}

/// Prints left-aligned columns; the last column is not padded. Cells are
/// outside text, shown escaped, so none can break its row.
pub(crate) fn print_table<const N: usize>(header: [&str; N], rows: &[[String; N]]) {
    let rows: Vec<[String; N]> = rows
        .iter()
        .map(|row| row.clone().map(|cell| shown(&cell).into_owned()))
        .collect();
    let rows = rows.as_slice();
    let mut widths = header.map(str::len);
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (index, cell) in cells.iter().enumerate() {
            if index + 1 == N {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:width$}  ", width = widths[index]));
            }
        }
        outln!("{}", text.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}
