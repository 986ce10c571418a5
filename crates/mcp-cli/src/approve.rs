//! The verbs that record a person's choice about project servers:
//! `approve NAME`, `deny NAME`, `reset-project-choices`, and about the
//! project itself: `trust`, `untrust` (REFERENCE §1.7).
//!
//! Choices go to local settings, this project's entry in
//! `<home>/.claude.json`, through `mcp_config::edit`: never to a file the
//! project ships, which could not be trusted to hold them. Approving also
//! records what was approved (`mcp_config::consent`), so a server changed
//! since is pending again.

use mcp_config::edit::{self, ProjectChoice, ServersLocation};
use mcp_config::{Approval, ApprovalRecord, LoadOptions, LoadedConfig, Scope, ScopedServer, load};
use serde_json::json;

use crate::cli::NameArgs;
use crate::context::Context;
use crate::output::{self, Outcome, outln, shown};

/// `approve NAME` and `deny NAME`.
pub(crate) fn choose(
    context: &Context,
    args: &NameArgs,
    choice: ProjectChoice,
) -> anyhow::Result<Outcome> {
    let name = args.name.as_str();
    edit::validate_name(name)?;
    let options = settings_only(context);
    let config = load(&options);
    let record = ApprovalRecord::of(&project_server(&config, name)?.config);
    let location = local_location(context)?;
    let changed = edit::edit(location.clone(), |document| {
        let mut changed = document.set_project_choice(name, choice)?;
        if choice == ProjectChoice::Approve {
            changed |= document.set_approval_record(name, &record)?;
        }
        Ok(changed)
    })?;
    let (verb, wanted) = match choice {
        ProjectChoice::Approve => ("approved", Approval::Approved),
        ProjectChoice::Deny => ("denied", Approval::Denied),
    };
    let now = load(&options).server(name).map(|server| server.approval);
    let file = place(&location);
    if context.json {
        output::print_json(&json!({
            "action": if wanted == Approval::Approved { "approve" } else { "deny" },
            "name": name,
            "file": location.path,
            "changed": changed,
            "approval": now,
        }))?;
    } else if changed {
        outln!("{verb} project server `{}` in {file}", shown(name));
    } else {
        outln!(
            "project server `{}` was already {verb} in {file}",
            shown(name)
        );
    }
    if now != Some(wanted) {
        // Approving cannot undo a denial kept in another user or local file.
        anyhow::bail!(
            "project server `{name}` is still denied: `disabledMcpjsonServers` in another user or local settings file (such as {}) lists it",
            context
                .project
                .join(".claude")
                .join("settings.local.json")
                .display()
        );
    }
    Ok(Outcome::Ok)
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
    LoadOptions {
        trust_project_servers: false,
        ..context.load_options()
    }
}

/// Where project servers come from, for messages.
const PROJECT_FILES: &str = "only servers from the project's .mcp.json, .claude.json or .claude/settings.json (and .claude/settings.local.json while the project is not trusted) need approval";

/// The server `name`, which must be one the project's own files define.
fn project_server<'a>(config: &'a LoadedConfig, name: &str) -> anyhow::Result<&'a ScopedServer> {
    match config.server(name) {
        Some(server) if server.scope == Scope::Project => Ok(server),
        Some(server) => anyhow::bail!(
            "server `{name}` is not a project server: it comes from {} scope ({}); {PROJECT_FILES}",
            server.scope,
            server.source.display()
        ),
        None => anyhow::bail!("no project server named `{name}`; {PROJECT_FILES}"),
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
