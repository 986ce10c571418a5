//! The verbs that change config files: `add`, `add-json`, `remove`,
//! `enable`, `disable`. All the file work is `mcp_config::edit`'s; this
//! module turns arguments into one edit and reports what it did. A server
//! the user adds to project scope is approved for them in the same step.

use mcp_config::Scope;
use mcp_config::edit::{self, ServersLocation};
use serde_json::{Value, json};

use crate::approve::{self, AddedApproval};
use crate::cli::{AddArgs, AddJsonArgs, NameScopeArgs};
use crate::context::Context;
use crate::entry_args;
use crate::output::{self, Outcome, outln, shown, usage};

/// `add NAME [--scope S] [--env K=V]… -- CMD ARGS…` or
/// `add NAME --transport http|sse|ws --url URL [--header 'K: V']…`.
pub(crate) fn add(context: &Context, args: &AddArgs) -> anyhow::Result<Outcome> {
    let entry = entry_args::entry_from_args(args)?;
    let kind = if entry["type"] == "stdio" {
        "stdio"
    } else {
        "remote"
    };
    write_entry(
        context,
        &args.name,
        entry,
        args.scope.scope(),
        args.force,
        kind,
    )
}

/// `add-json NAME JSON [--scope S]`.
pub(crate) fn add_json(context: &Context, args: &AddJsonArgs) -> anyhow::Result<Outcome> {
    let entry: Value = serde_json::from_str(&args.entry)
        .map_err(|err| usage(format!("invalid JSON for server `{}`: {err}", args.name)))?;
    write_entry(
        context,
        &args.name,
        entry,
        args.scope.scope(),
        args.force,
        "",
    )
}

fn write_entry(
    context: &Context,
    name: &str,
    entry: Value,
    scope: Scope,
    force: bool,
    kind: &str,
) -> anyhow::Result<Outcome> {
    // The policy of this load (managed files and every settings file's
    // lists): a server it would block is refused before any file changes.
    let policy = mcp_config::load(&context.load_options()).policy;
    let entry = edit::validate_entry(name, entry, &context.env, &policy, scope)?;
    let location = ServersLocation::for_scope(scope, &context.edit_dirs())?;
    let report_location = location.clone();
    let replaced = edit::edit(location, |document| {
        if force {
            document.upsert(name, entry).map(|old| old.is_some())
        } else {
            document.insert_new(name, entry).map(|()| false)
        }
    })
    .map_err(|err| match err.kind() {
        mcp_config::EditErrorKind::AlreadyExists { .. } => {
            anyhow::anyhow!("{err} (pass --force to replace it)")
        }
        _ => err.into(),
    })?;
    let action = if replaced { "replaced" } else { "added" };
    // The user named this project server's command themselves: it is
    // approved in the same step rather than held back until they approve
    // what they just typed.
    let approval = if scope == Scope::Project {
        Some(approve::approve_added(context, name)?)
    } else {
        None
    };
    if context.json {
        let mut document = json!({
            "action": action,
            "name": name,
            "scope": scope.as_str(),
            "file": report_location.path,
        });
        match &approval {
            Some(AddedApproval::Approved { path, .. }) => {
                document["approval"] = json!({"approval": "approved", "file": path});
            }
            Some(AddedApproval::Shadowed { scope, source }) => {
                document["approval"] = json!({"approval": "shadowed", "by": {"scope": scope.as_str(), "source": source}});
            }
            None => {}
        }
        output::print_json(&document)?;
        return Ok(Outcome::Ok);
    }
    let kind = if kind.is_empty() {
        String::new()
    } else {
        format!("{kind} ")
    };
    let file = format!("{} ({scope})", report_location.path.display());
    outln!(
        "{}",
        shown(&format!("{action} {kind}server `{name}` in {file}"))
    );
    match approval {
        Some(AddedApproval::Approved { file, .. }) => outln!(
            "{}",
            shown(&format!(
                "approved it for this project in {file}, as you added it"
            ))
        ),
        Some(AddedApproval::Shadowed { scope, source }) => outln!(
            "{}",
            shown(&format!(
                "note: `{name}` from {scope} scope ({source}) has the same name and wins, so the added server does not start and was not approved"
            ))
        ),
        None => {}
    }
    Ok(Outcome::Ok)
}

/// `remove NAME [--scope S]`.
pub(crate) fn remove(context: &Context, args: &NameScopeArgs) -> anyhow::Result<Outcome> {
    let dirs = context.edit_dirs();
    let scope = match args.scope {
        Some(scope) => scope.scope(),
        None => {
            let found = edit::find_entries(&args.name, &dirs)?;
            match found.as_slice() {
                [] => anyhow::bail!(
                    "no server named `{}` in the user, project, local or openclaw config files (a plugin's server can only be disabled)",
                    args.name
                ),
                [(scope, _)] => *scope,
                several => {
                    return Err(usage(format!(
                        "server `{}` is in several scopes ({}); choose one with --scope",
                        args.name,
                        scope_list(several.iter().map(|(scope, _)| *scope))
                    )));
                }
            }
        }
    };
    let location = ServersLocation::for_scope(scope, &dirs)?;
    edit::edit(location.clone(), |document| document.remove(&args.name))?;
    report(context, "removed", &args.name, scope, &location, |file| {
        format!("removed server `{}` from {file}", args.name)
    })
}

/// `enable NAME [--scope S]` and `disable NAME [--scope S]`.
pub(crate) fn set_enabled(
    context: &Context,
    args: &NameScopeArgs,
    enabled: bool,
) -> anyhow::Result<Outcome> {
    edit::validate_name(&args.name)?;
    let dirs = context.edit_dirs();
    let scopes: Vec<Scope> = match args.scope {
        Some(scope) => vec![scope.scope()],
        None => {
            let found = edit::find_entries(&args.name, &dirs)?;
            if enabled {
                // Every switched-off entry hides the server: clear them all.
                found
                    .iter()
                    .filter(|(_, entry)| entry.get("enabled") == Some(&Value::Bool(false)))
                    .map(|(scope, _)| *scope)
                    .collect()
            } else {
                // One `enabled: false` in the highest scope that has the
                // server hides it everywhere; with no entry at all (a
                // plugin's server) a tombstone in local scope does.
                vec![found.last().map_or(Scope::Local, |(scope, _)| *scope)]
            }
        }
    };
    let verb = if enabled { "enabled" } else { "disabled" };
    let mut changes = Vec::new();
    for scope in &scopes {
        let location = ServersLocation::for_scope(*scope, &dirs)?;
        let changed = edit::edit(location.clone(), |document| {
            document.set_enabled(&args.name, enabled)
        })?;
        changes.push((*scope, location, changed));
    }
    if context.json {
        let files: Vec<Value> = changes
            .iter()
            .map(|(scope, location, changed)| {
                json!({
                    "scope": scope.as_str(),
                    "file": location.path,
                    "changed": changed,
                })
            })
            .collect();
        output::print_json(&json!({"action": verb, "name": args.name, "files": files}))?;
        return Ok(Outcome::Ok);
    }
    if changes.is_empty() {
        outln!(
            "server `{}` is not disabled in any config file",
            shown(&args.name)
        );
    }
    for (scope, location, changed) in &changes {
        let file = format!("{} ({scope})", location.path.display());
        if *changed {
            outln!("{verb} server `{}` in {}", shown(&args.name), shown(&file));
        } else {
            outln!(
                "server `{}` was already {verb} in {}",
                shown(&args.name),
                shown(&file)
            );
        }
    }
    Ok(Outcome::Ok)
}

fn report(
    context: &Context,
    action: &str,
    name: &str,
    scope: Scope,
    location: &ServersLocation,
    human: impl FnOnce(&str) -> String,
) -> anyhow::Result<Outcome> {
    if context.json {
        output::print_json(&json!({
            "action": action,
            "name": name,
            "scope": scope.as_str(),
            "file": location.path,
        }))?;
    } else {
        let line = human(&format!("{} ({scope})", location.path.display()));
        outln!("{}", shown(&line));
    }
    Ok(Outcome::Ok)
}

fn scope_list(scopes: impl Iterator<Item = Scope>) -> String {
    scopes.map(Scope::as_str).collect::<Vec<_>>().join(", ")
}
