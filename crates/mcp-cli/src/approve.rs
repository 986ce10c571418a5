//! The verbs that record a person's choice about project servers:
//! `approve NAME…`, `approve --all`, `deny NAME…`, `reset-project-choices`,
//! and about the project itself: `trust`, `untrust` (REFERENCE §1.7); and
//! how the CLI tells its user to approve a server that is held back
//! ([`approve_step`], used by the catalog's notes, `list` and `probe`).
//!
//! Choices go to local settings, this project's entry in
//! `<home>/.claude.json`, through `mcp_config::edit`: never to a file the
//! project ships, which could not be trusted to hold them. Approving also
//! records what was approved (`mcp_config::consent`), so a server changed
//! since is pending again. Several names are checked first and written in
//! one edit: a list with one wrong name writes nothing. A server the
//! managed policy blocks is never approved: the refusal names the rule.

use mcp_config::edit::{self, ProjectChoice, ServersLocation};
use mcp_config::{Approval, ApprovalRecord, LoadOptions, LoadedConfig, Scope, ScopedServer, load};
use serde_json::{Value, json};

use crate::cli::{ApproveArgs, DenyArgs};
use crate::context::Context;
use crate::output::{self, Outcome, outln, shown};

/// The command that approves the project server `name`, quoted for a
/// POSIX shell when the name needs it.
pub(crate) fn approve_command(names: &[&str]) -> String {
    let mut command = "mcp-cli approve".to_owned();
    for name in names {
        command.push(' ');
        command.push_str(&shell_words::quote(name));
    }
    command
}

/// The step that approves `name`, as the catalog's note on a held-back
/// server ends with it: "run `mcp-cli approve NAME`".
pub(crate) fn approve_step(name: &str) -> String {
    format!("run `{}`", approve_command(&[name]))
}

/// Why a server that is not started is skipped, for `probe`: its `state`
/// (as `list` words it), and for a server awaiting approval the command
/// that approves it.
pub(crate) fn skip_reason(server: &ScopedServer, state: String) -> String {
    if server.config.enabled && server.approval == Approval::Pending {
        format!("{state}: {}", approve_step(&server.config.name))
    } else {
        state
    }
}

/// The names of the enabled project servers awaiting approval (what
/// `list` shows as "pending approval").
pub(crate) fn pending_names(config: &LoadedConfig) -> Vec<&str> {
    config
        .servers
        .iter()
        .filter(|server| {
            server.scope == Scope::Project
                && server.config.enabled
                && server.approval == Approval::Pending
        })
        .map(|server| server.config.name.as_str())
        .collect()
}

/// `approve NAME…` and `approve --all`.
pub(crate) fn approve(context: &Context, args: &ApproveArgs) -> anyhow::Result<Outcome> {
    if !args.all {
        let names: Vec<&str> = args.names.iter().map(String::as_str).collect();
        return choose(context, &names, ProjectChoice::Approve);
    }
    let config = load(&settings_only(context));
    let names = pending_names(&config);
    if names.is_empty() {
        let location = local_location(context)?;
        if context.json {
            output::print_json(&json!({
                "action": "approve",
                "file": location.path,
                "servers": [],
            }))?;
        } else {
            outln!("no project servers await approval");
        }
        return Ok(Outcome::Ok);
    }
    let recorded = record(context, &config, &names, ProjectChoice::Approve)?;
    print_choices(context, &recorded, ProjectChoice::Approve, true)
}

/// `deny NAME…`.
pub(crate) fn deny(context: &Context, args: &DenyArgs) -> anyhow::Result<Outcome> {
    let names: Vec<&str> = args.names.iter().map(String::as_str).collect();
    choose(context, &names, ProjectChoice::Deny)
}

/// Records `choice` for every one of `names`, or for none of them.
fn choose(context: &Context, names: &[&str], choice: ProjectChoice) -> anyhow::Result<Outcome> {
    let config = load(&settings_only(context));
    let recorded = record(context, &config, names, choice)?;
    print_choices(context, &recorded, choice, names.len() > 1)
}

/// What recording the choices did.
struct Recorded {
    location: ServersLocation,
    /// Each name, whether its file changed, and its state after.
    servers: Vec<(String, bool, Option<Approval>)>,
}

/// Checks every name, then writes the choices in one edit of local
/// settings. Nothing is written when one name is not a project server.
fn record(
    context: &Context,
    config: &LoadedConfig,
    names: &[&str],
    choice: ProjectChoice,
) -> anyhow::Result<Recorded> {
    for name in names {
        edit::validate_name(name)?;
    }
    let mut unique: Vec<&str> = Vec::new();
    for name in names {
        if !unique.contains(name) {
            unique.push(name);
        }
    }
    let mut records = Vec::new();
    let mut problems = Vec::new();
    let mut blocked = Vec::new();
    for name in &unique {
        match project_server(config, name) {
            // An approval could never let it run, and would stand ready
            // for the day the rule goes: the policy decides, not consent.
            Ok(server) => match server.blocked() {
                Some(block) if choice == ProjectChoice::Approve => {
                    blocked.push(format!("server `{name}` is blocked by policy: {block}"));
                }
                _ => records.push((*name, ApprovalRecord::of(&server.config))),
            },
            Err(problem) => problems.push(problem),
        }
    }
    match blocked.as_slice() {
        [] => {}
        [only] if unique.len() == 1 => anyhow::bail!("{only}"),
        several => anyhow::bail!("nothing was approved: {}", several.join("; ")),
    }
    match problems.as_slice() {
        [] => {}
        [only] if unique.len() == 1 => anyhow::bail!("{only}; {PROJECT_FILES}"),
        several => {
            let verb = match choice {
                ProjectChoice::Approve => "approved",
                ProjectChoice::Deny => "denied",
            };
            anyhow::bail!(
                "nothing was {verb}: {}; {PROJECT_FILES}",
                several.join("; ")
            );
        }
    }
    let location = local_location(context)?;
    let changed = edit::edit(location.clone(), |document| {
        let mut changed = Vec::new();
        for (name, record) in &records {
            let mut this = document.set_project_choice(name, choice)?;
            if choice == ProjectChoice::Approve {
                this |= document.set_approval_record(name, record)?;
            }
            changed.push(this);
        }
        Ok(changed)
    })?;
    let now = load(&settings_only(context));
    let servers = unique
        .iter()
        .zip(changed)
        .map(|(name, changed)| {
            let approval = now.server(name).map(|server| server.approval);
            ((*name).to_owned(), changed, approval)
        })
        .collect();
    Ok(Recorded { location, servers })
}

/// Reports recorded choices: one line (or JSON document) per server, and
/// an error for servers an approval could not free from a denial kept
/// elsewhere. `list_shape` prints the JSON of several servers even for
/// one (`approve --all`, several names).
fn print_choices(
    context: &Context,
    recorded: &Recorded,
    choice: ProjectChoice,
    list_shape: bool,
) -> anyhow::Result<Outcome> {
    let (verb, wanted, action) = match choice {
        ProjectChoice::Approve => ("approved", Approval::Approved, "approve"),
        ProjectChoice::Deny => ("denied", Approval::Denied, "deny"),
    };
    let location = &recorded.location;
    let file = place(location);
    if context.json {
        let servers: Vec<Value> = recorded
            .servers
            .iter()
            .map(|(name, changed, approval)| {
                json!({"name": name, "changed": changed, "approval": approval})
            })
            .collect();
        match (list_shape, servers.as_slice()) {
            (false, [one]) => output::print_json(&json!({
                "action": action,
                "name": one["name"],
                "file": location.path,
                "changed": one["changed"],
                "approval": one["approval"],
            }))?,
            _ => output::print_json(&json!({
                "action": action,
                "file": location.path,
                "servers": servers,
            }))?,
        }
    } else {
        for (name, changed, _) in &recorded.servers {
            if *changed {
                outln!("{verb} project server `{}` in {file}", shown(name));
            } else {
                outln!(
                    "project server `{}` was already {verb} in {file}",
                    shown(name)
                );
            }
        }
    }
    let stuck: Vec<&str> = recorded
        .servers
        .iter()
        .filter(|(_, _, approval)| *approval != Some(wanted))
        .map(|(name, _, _)| name.as_str())
        .collect();
    match stuck.as_slice() {
        [] => Ok(Outcome::Ok),
        // Approving cannot undo a denial kept in another user or local file.
        [name] => anyhow::bail!(
            "project server `{name}` is still denied: `disabledMcpjsonServers` in another user or local settings file (such as {}) lists it",
            denial_example(context)
        ),
        names => anyhow::bail!(
            "project servers {} are still denied: `disabledMcpjsonServers` in another user or local settings file (such as {}) lists them",
            names
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", "),
            denial_example(context)
        ),
    }
}

fn denial_example(context: &Context) -> String {
    context
        .project
        .join(".claude")
        .join("settings.local.json")
        .display()
        .to_string()
}

/// What `add --scope project` did about approval.
pub(crate) enum AddedApproval {
    /// The added server was approved in `file` (changed or already so).
    Approved {
        file: String,
        path: std::path::PathBuf,
    },
    /// Another scope's server of the same name wins, so the added one
    /// cannot start and was not approved.
    Shadowed { scope: Scope, source: String },
}

/// Approves a project server the user has just added: they typed its
/// command, so asking them again would only teach them to approve blindly.
pub(crate) fn approve_added(context: &Context, name: &str) -> anyhow::Result<AddedApproval> {
    let config = load(&settings_only(context));
    match config.server(name) {
        Some(server) if server.scope != Scope::Project => {
            return Ok(AddedApproval::Shadowed {
                scope: server.scope,
                source: server.source.display().to_string(),
            });
        }
        _ => {}
    }
    let recorded = record(context, &config, &[name], ProjectChoice::Approve)?;
    if recorded
        .servers
        .iter()
        .any(|(_, _, approval)| *approval != Some(Approval::Approved))
    {
        anyhow::bail!(
            "project server `{name}` was added but is still denied: `disabledMcpjsonServers` in another user or local settings file (such as {}) lists it",
            denial_example(context)
        );
    }
    Ok(AddedApproval::Approved {
        file: place(&recorded.location),
        path: recorded.location.path,
    })
}

/// `reset-project-choices`: forgets every approval and denial this
/// project's local entry holds, so each project server asks again.
pub(crate) fn reset(context: &Context) -> anyhow::Result<Outcome> {
    let location = local_location(context)?;
    let changed = edit::edit(location.clone(), |document| {
        document.reset_project_choices()
    })?;
    let config = load(&settings_only(context));
    let pending: Vec<&str> = config
        .servers
        .iter()
        .filter(|server| server.scope == Scope::Project && server.approval != Approval::Approved)
        .map(|server| server.config.name.as_str())
        .collect();
    if context.json {
        output::print_json(&json!({
            "action": "reset-project-choices",
            "file": location.path,
            "changed": changed,
            "not_approved": pending,
        }))?;
        return Ok(Outcome::Ok);
    }
    let file = place(&location);
    if changed {
        outln!("reset the project server choices in {file}");
    } else {
        outln!("no project server choices to reset in {file}");
    }
    if !pending.is_empty() {
        outln!(
            "project servers not approved: {}",
            shown(&pending.join(", "))
        );
    }
    Ok(Outcome::Ok)
}

/// The load options with `--trust-project` ignored: these verbs report what
/// the settings say, not what one run was allowed to do.
fn settings_only(context: &Context) -> LoadOptions {
    context.load_options().with_trust_project_servers(false)
}

/// Where project servers come from, for messages.
const PROJECT_FILES: &str = "only servers from the project's .mcp.json, .claude.json or .claude/settings.json (and .claude/settings.local.json while the project is not trusted) need approval";

/// The server `name`, which must be one the project's own files define.
/// The problem, when there is one, is said without [`PROJECT_FILES`], which
/// the caller adds once.
fn project_server<'a>(config: &'a LoadedConfig, name: &str) -> Result<&'a ScopedServer, String> {
    match config.server(name) {
        Some(server) if server.scope == Scope::Project => Ok(server),
        Some(server) => Err(format!(
            "server `{name}` is not a project server: it comes from {} scope ({})",
            server.scope,
            server.source.display()
        )),
        None => Err(format!("no project server named `{name}`")),
    }
}

/// `trust` and `untrust`: whether files inside this project count as the
/// user's consent (`hasTrustDialogAccepted` in this project's entry of
/// `<home>/.claude.json`).
pub(crate) fn trust(context: &Context, trusted: bool) -> anyhow::Result<Outcome> {
    let location = local_location(context)?;
    let changed = edit::edit(location.clone(), |document| {
        document.set_project_trust(trusted)
    })?;
    let project = context.project.display();
    let file = place(&location);
    if context.json {
        output::print_json(&json!({
            "action": if trusted { "trust" } else { "untrust" },
            "project": context.project,
            "file": location.path,
            "changed": changed,
            "trusted": trusted,
        }))?;
    } else if changed && trusted {
        outln!("trusted project {project} in {file}: files inside it now count as your consent");
    } else if changed {
        outln!(
            "stopped trusting project {project} in {file}: files inside it no longer count as your consent"
        );
    } else {
        let state = if trusted { "trusted" } else { "not trusted" };
        outln!("project {project} was already {state} in {file}");
    }
    Ok(Outcome::Ok)
}

/// `<home>/.claude.json`, under this project's entry.
fn local_location(context: &Context) -> anyhow::Result<ServersLocation> {
    Ok(ServersLocation::for_scope(
        Scope::Local,
        &context.edit_dirs(),
    )?)
}

fn place(location: &ServersLocation) -> String {
    let project = location
        .key_path
        .get(1)
        .map(String::as_str)
        .unwrap_or_default();
    format!("{} (projects[\"{project}\"])", location.path.display())
}
