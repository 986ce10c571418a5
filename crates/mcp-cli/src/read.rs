//! The verbs that read the merged configuration: `list`, `get`,
//! `check-config`. Loading, merging and checking are `mcp_config`'s; this
//! module lays the answer out.

use mcp_config::diagnostic_line;
use mcp_config::policy::config_field_hashes;
use mcp_config::redaction::{
    redacted_command_line, redacted_remote_url, redacted_signature, redacted_words,
};
use mcp_config::{
    Approval, ApprovalBasis, CheckReport, LoadedConfig, ScopedServer, StdioConfig, TransportConfig,
    config_hash, load, signature,
};
use serde_json::{Value, json};

use crate::cli::{CheckArgs, GetArgs};
use crate::context::Context;
use crate::output::{self, Outcome, outln, shown};

/// `list`: every merged server, then every diagnostic.
pub(crate) fn list(context: &Context) -> anyhow::Result<Outcome> {
    let config = load(&context.load_options());
    if context.json {
        let servers: Vec<Value> = config
            .servers
            .iter()
            .map(|server| summary_json(&config, server))
            .collect();
        let mut document = json!({
            "project": {"path": context.project, "trusted": config.project_trusted},
            "servers": servers,
            "diagnostics": config.diagnostics,
        });
        let found = crate::import::other_hosts_json(context, config.servers.is_empty());
        if !found.is_empty() {
            document["otherHosts"] = json!(found);
        }
        output::print_json(&document)?;
        return Ok(Outcome::Ok);
    }
    let project = context.project.display();
    if config.project_trusted {
        outln!("project {project} is trusted: files inside it count as your consent");
    } else {
        outln!(
            "project {project} is not trusted: files inside it do not count as your consent (mcp-cli trust)"
        );
    }
    if config.servers.is_empty() {
        outln!("no servers configured");
        for line in crate::import::other_hosts_hint(context) {
            outln!("{}", shown(&line));
        }
    } else {
        let rows: Vec<[String; 7]> = config
            .servers
            .iter()
            .map(|server| {
                [
                    server.config.name.clone(),
                    server.config.transport.kind().to_string(),
                    server.scope.to_string(),
                    state(server),
                    approval_basis(&server.approval_basis),
                    server.source.display().to_string(),
                    target(&config, server),
                ]
            })
            .collect();
        print_table(
            [
                "NAME",
                "KIND",
                "SCOPE",
                "STATE",
                "APPROVAL",
                "SOURCE",
                "COMMAND/URL",
            ],
            &rows,
        );
    }
    print_diagnostics(&config);
    let pending = crate::approve::pending_names(&config);
    match pending.as_slice() {
        [] => {}
        [name] => outln!(
            "{}",
            shown(&format!(
                "to let `{name}` start, run `{}`",
                crate::approve::approve_command(&pending)
            ))
        ),
        _ => outln!(
            "{}",
            shown(&format!(
                "to let these start, run `{}` (or `mcp-cli approve --all`)",
                crate::approve::approve_command(&pending)
            ))
        ),
    }
    Ok(Outcome::Ok)
}

/// What a server runs or reaches, for `list`: a stdio server's command and
/// arguments (shell-quoted; what came from variables and credentials in url
/// arguments redacted; env values never), a remote server's url with its
/// credentials redacted.
fn target(config: &LoadedConfig, server: &ScopedServer) -> String {
    let written = config.raw_entries.get(&server.config.name);
    match &server.config.transport {
        TransportConfig::Stdio(stdio) => shell_words(&redacted_command_line(stdio, written)),
        TransportConfig::Http(remote)
        | TransportConfig::Sse(remote)
        | TransportConfig::Ws(remote) => redacted_remote_url(&remote.url, written),
        TransportConfig::ClaudeAiProxy(proxy) => redacted_remote_url(&proxy.url, written),
        TransportConfig::Sdk { name } => format!("sdk {name}"),
    }
}

/// Why a server may or may not start, in a few words.
pub(crate) fn approval_basis(basis: &ApprovalBasis) -> String {
    match basis {
        ApprovalBasis::NotNeeded => "-".to_owned(),
        ApprovalBasis::Recorded => "approved".to_owned(),
        ApprovalBasis::NameOnly => "by name only".to_owned(),
        ApprovalBasis::AllProjectServers => "all project servers".to_owned(),
        ApprovalBasis::TrustedRun => "--trust-project".to_owned(),
        ApprovalBasis::NotApproved => "not approved".to_owned(),
        ApprovalBasis::Changed { fields } => format!("changed: {}", fields.join(", ")),
        ApprovalBasis::Denied => "denied".to_owned(),
        // A basis added later: its name as `--json` writes it.
        other => serde_json::to_value(other)
            .ok()
            .and_then(|value| value["basis"].as_str().map(str::to_owned))
            .unwrap_or_default(),
    }
}

/// `get NAME`: one server in full, secrets redacted.
pub(crate) fn get(context: &Context, args: &GetArgs) -> anyhow::Result<Outcome> {
    let config = load(&context.load_options());
    let Some(server) = config.server(&args.name) else {
        anyhow::bail!("{}", unknown_server(&config, &args.name));
    };
    if args.pin {
        // Digests only: no value of the entry is printed.
        output::print_json(&json!({
            "serverName": server.config.name,
            "configHash": config_hash(&server.config),
            "pinned": config_field_hashes(&server.config),
        }))?;
        return Ok(Outcome::Ok);
    }
    let mut detail = serde_json::to_value(server)?;
    // The entry as the file spells it tells which parts came from variables.
    let written = config.raw_entries.get(&args.name);
    let shown_url = |url: &str| {
        if args.show_secrets {
            url.to_owned()
        } else {
            redacted_remote_url(url, written)
        }
    };
    // The command, then the arguments.
    let shown_command_line = |stdio: &StdioConfig| -> Vec<String> {
        if args.show_secrets {
            std::iter::once(&stdio.command)
                .chain(&stdio.args)
                .cloned()
                .collect()
        } else {
            redacted_command_line(stdio, written)
        }
    };
    let shown_signature = if args.show_secrets {
        signature(&server.config)
    } else {
        redacted_signature(&server.config, written)
    };
    if !args.show_secrets {
        let transport = &mut detail["config"]["transport"];
        crate::output::redact(transport);
        if let Some(url) = transport.get("url").and_then(Value::as_str) {
            transport["url"] = json!(shown_url(url));
        }
        if let TransportConfig::Stdio(stdio) = &server.config.transport {
            let shown = shown_command_line(stdio);
            transport["command"] = json!(shown[0]);
            transport["args"] = json!(shown[1..]);
        }
    }
    if context.json {
        detail["signature"] = json!(shown_signature);
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
        ("approval", approval_basis(&server.approval_basis)),
    ];
    if let Some(plugin) = &server.plugin {
        lines.push(("plugin", plugin.clone()));
    }
    match &server.config.transport {
        TransportConfig::Stdio(stdio) => {
            let shown = shown_command_line(stdio);
            lines.push(("command", shown[0].clone()));
            lines.push(("args", shell_words(&shown[1..])));
            lines.push(("env", pairs(&transport["env"], "=")));
            if !stdio.env_passthrough.is_empty() {
                // Names only: the values are the host's, never shown.
                lines.push(("envPassthrough", stdio.env_passthrough.join(", ")));
            }
            if let Some(cwd) = &stdio.cwd {
                lines.push(("cwd", cwd.display().to_string()));
            }
        }
        TransportConfig::Http(remote)
        | TransportConfig::Sse(remote)
        | TransportConfig::Ws(remote) => {
            lines.push(("url", shown_url(&remote.url)));
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
                if oauth.grant.is_some() || oauth.xaa {
                    parts.push(format!("grant {}", oauth.grant()));
                }
                if let Some(var) = &oauth.client_secret_env {
                    parts.push(format!("client secret from ${var}"));
                }
                if oauth.client_secret.is_some() {
                    parts.push(format!("client secret {}", crate::output::REDACTED));
                }
                if let Some(url) = &oauth.client_metadata_url {
                    parts.push(format!("client metadata {url}"));
                }
                if let Some(path) = &oauth.private_key_file {
                    let alg = oauth
                        .signing_algorithm
                        .as_deref()
                        .unwrap_or(mcp_config::limits::DEFAULT_SIGNING_ALGORITHM);
                    parts.push(format!("private key {} ({alg})", path.display()));
                }
                match &oauth.assertion {
                    Some(mcp_config::CredentialSource::Env { name }) => {
                        parts.push(format!("assertion from ${name}"));
                    }
                    Some(mcp_config::CredentialSource::Command { argv, .. }) => {
                        parts.push(format!(
                            "assertion from `{}`",
                            shell_words(&if args.show_secrets {
                                argv.clone()
                            } else {
                                redacted_words(argv)
                            })
                        ));
                    }
                    Some(_) => parts.push("assertion from another source".to_owned()),
                    None => {}
                }
                if let Some(idp) = &oauth.idp {
                    parts.push(format!(
                        "identity provider {} as {}",
                        idp.token_endpoint, idp.client_id
                    ));
                }
                if let Some(dpop) = oauth.dpop {
                    parts.push(format!("dpop {}", if dpop { "always" } else { "never" }));
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
            lines.push(("url", shown_url(&proxy.url)));
            lines.push(("id", proxy.id.clone()));
        }
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
    if let Some(signature) = shown_signature {
        lines.push(("signature", signature));
    }
    lines.push(("hash", config_hash(&server.config)));
    if let Some(block) = server.blocked() {
        lines.push(("policy", format!("blocked: {block}")));
    }
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
    let unconfigured = report.config.servers.is_empty();
    if context.json {
        let mut document = report.to_json();
        let found = crate::import::other_hosts_json(context, unconfigured);
        if !found.is_empty() {
            document["otherHosts"] = json!(found);
        }
        output::print_json(&document)?;
    } else {
        for line in report.human_lines() {
            outln!("{}", shown(&line));
        }
        if unconfigured {
            for line in crate::import::other_hosts_hint(context) {
                outln!("{}", shown(&line));
            }
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

fn summary_json(config: &LoadedConfig, server: &ScopedServer) -> Value {
    let mut summary = json!({
        "name": server.config.name,
        "kind": server.config.transport.kind(),
        "scope": server.scope,
        "source": server.source,
        "enabled": server.config.enabled,
        "approval": server.approval,
        "approvalBasis": server.approval_basis,
        "plugin": server.plugin,
    });
    match &server.config.transport {
        TransportConfig::Stdio(stdio) => {
            let shown = redacted_command_line(stdio, config.raw_entries.get(&server.config.name));
            summary["command"] = json!(shown[0]);
            summary["args"] = json!(shown[1..]);
        }
        TransportConfig::Sdk { name } => summary["sdkName"] = json!(name),
        _ => summary["url"] = json!(target(config, server)),
    }
    summary
}

fn server_diagnostics(config: &LoadedConfig, name: &str) -> Vec<Value> {
    config
        .diagnostics
        .iter()
        .filter(|d| d.server.as_deref() == Some(name))
        .filter_map(|d| serde_json::to_value(d).ok())
        .collect()
}

/// `blocked by policy`, `enabled`, `disabled`, `pending approval` or
/// `denied`.
pub(crate) fn state(server: &ScopedServer) -> String {
    if server.blocked().is_some() {
        return "blocked by policy".to_owned();
    }
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
