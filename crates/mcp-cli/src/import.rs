//! `import --from HOST`: copies the servers of another host's config file
//! (Claude Desktop, Cursor, VS Code, Codex, Gemini CLI, Windsurf, Zed,
//! Goose) into ours. Reading and translating is `mcp_config::import`'s,
//! writing `mcp_config::edit`'s; this module chooses the files and scopes,
//! asks for VS Code's `${input:…}` values, refuses to overwrite, and
//! reports every field that did not carry over.
//!
//! Scope: without `--scope`, a host's user-wide file goes to our user
//! scope and a project's file to our local scope (this user, this
//! project), so each server reaches as far as it did in the host; a
//! project's file never goes to the shared `.mcp.json` unless asked
//! (`--scope project`), since that changes a file the project's other
//! people read.
//!
//! Nothing is written when any chosen name already exists in its target
//! file (unless `--force`), or when an input has no value: the import is
//! all of the translatable servers or none.
//!
//! A password input's value is never written to a config file: it is
//! stored in the secret store under a name derived from the input's id,
//! and the entry refers to it (`${secret:NAME}`), which only `env` and
//! `headers` values can. A password used elsewhere, or with no secret
//! store to keep it, refuses the import.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mcp_config::diagnostic_line;
use mcp_config::edit::{self, ServersLocation};
use mcp_config::import::{
    FoundFile, Host, ImportContext, ImportDirs, Imported, InputPrompt, Reach, fill_inputs,
    fill_secret_inputs, found_files, import_file, input_secret_name,
};
use mcp_config::secret::{SecretName, SecretStore, SecretValue};
use mcp_config::{Diagnostic, Level, Scope};
use serde_json::{Value, json};

use crate::cli::{ImportArgs, ImportHost};
use crate::context::Context;
use crate::output::{self, Outcome, Stream, Terminal, errln, outln, shown, usage};

impl ImportHost {
    fn host(self) -> Host {
        match self {
            ImportHost::ClaudeDesktop => Host::ClaudeDesktop,
            ImportHost::Cursor => Host::Cursor,
            ImportHost::VsCode => Host::VsCode,
            ImportHost::Codex => Host::Codex,
            ImportHost::Gemini => Host::Gemini,
            ImportHost::Windsurf => Host::Windsurf,
            ImportHost::Zed => Host::Zed,
            ImportHost::Goose => Host::Goose,
        }
    }
}

/// The directories other hosts' files live under, from the context
/// (`$XDG_CONFIG_HOME` when set to an absolute path).
pub(crate) fn import_dirs(context: &Context) -> ImportDirs {
    let mut dirs = ImportDirs::new(context.home.clone()).with_project(context.project.clone());
    dirs.config_dir = context
        .env
        .get("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute());
    dirs
}

/// One server on its way to a file.
struct Planned {
    name: String,
    entry: Value,
    scope: Scope,
    imported_from: usize,
    server: usize,
}

/// `import --from HOST [--file PATH] [--scope S] [--dry-run] [--force]
/// [--input ID=VALUE]… [NAME…]`. The values of password inputs go to the
/// run's secret store; one that cannot be opened refuses the import.
pub(crate) fn import(context: &Context, args: &ImportArgs) -> anyhow::Result<Outcome> {
    let host = args.from.host();
    let dirs = import_dirs(context);
    let files: Vec<(PathBuf, Option<Reach>)> = match &args.file {
        Some(file) => vec![(std::path::absolute(file)?, None)],
        None => host
            .files(&dirs)
            .into_iter()
            .map(|f| (f.path, Some(f.reach)))
            .collect(),
    };
    let scope_of = |reach: Option<Reach>| match (args.scope, reach) {
        (Some(scope), _) => scope.scope(),
        (None, Some(Reach::Project)) => Scope::Local,
        (None, _) => Scope::User,
    };
    let mut imported: Vec<(Imported, Option<Reach>)> = Vec::new();
    for (path, reach) in &files {
        // `${workspaceFolder}` is this project only where the entry stays
        // with this project.
        let project_bound = matches!(scope_of(*reach), Scope::Local | Scope::Project);
        let mut cx = ImportContext::default().with_home(&context.home);
        cx.project = project_bound.then_some(context.project.as_path());
        if let Some(one) = import_file(host, path, &cx) {
            imported.push((one, *reach));
        }
    }
    if imported.is_empty() {
        let looked: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        anyhow::bail!(
            "no {} config file found (looked for {})",
            host.display_name(),
            looked.join(", ")
        );
    }
    let mut plan: Vec<Planned> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for (i, (one, reach)) in imported.iter().enumerate() {
        let scope = scope_of(*reach);
        for (j, server) in one.servers.iter().enumerate() {
            if !args.names.is_empty() && !args.names.contains(&server.name) {
                continue;
            }
            if let Some(k) = plan
                .iter()
                .position(|p| p.name == server.name && p.scope == scope)
            {
                // The host layers its project file over its user file.
                notes.push(format!(
                    "server `{}` of {} is left out: {} defines it too and wins, as in {}",
                    server.name,
                    imported[plan[k].imported_from].0.file.display(),
                    one.file.display(),
                    host.display_name()
                ));
                plan.remove(k);
            }
            plan.push(Planned {
                name: server.name.clone(),
                entry: server.entry.clone(),
                scope,
                imported_from: i,
                server: j,
            });
        }
    }
    for name in &args.names {
        if !plan.iter().any(|p| &p.name == name) {
            let available: Vec<&str> = imported
                .iter()
                .flat_map(|(one, _)| one.servers.iter().map(|s| s.name.as_str()))
                .collect();
            return Err(usage(format!(
                "no server named `{name}` to import from {} (found: {})",
                host.display_name(),
                if available.is_empty() {
                    "none".to_owned()
                } else {
                    available.join(", ")
                }
            )));
        }
    }
    let prompts = needed_inputs(&imported, &plan);
    let diagnostics: Vec<&Diagnostic> = imported
        .iter()
        .flat_map(|(one, _)| &one.diagnostics)
        .collect();
    // Naming the servers to import sets the others' problems aside (they
    // are still shown).
    let failed = diagnostics.iter().any(|d| {
        d.level == Level::Error
            && (args.names.is_empty() || d.server.as_ref().is_some_and(|s| args.names.contains(s)))
    });

    let edit_dirs = context.edit_dirs();
    let mut locations: Vec<(Scope, ServersLocation)> = Vec::new();
    for planned in &plan {
        if !locations.iter().any(|(s, _)| *s == planned.scope) {
            locations.push((
                planned.scope,
                ServersLocation::for_scope(planned.scope, &edit_dirs)?,
            ));
        }
    }
    let location_of = |scope: Scope| {
        locations
            .iter()
            .find(|(s, _)| *s == scope)
            .map(|(_, l)| l.clone())
    };
    // Which names exist already, per target file.
    let mut existing: Vec<bool> = Vec::with_capacity(plan.len());
    for planned in &plan {
        let Some(location) = location_of(planned.scope) else {
            existing.push(false);
            continue;
        };
        let document = edit::ConfigDocument::read(location)?;
        existing.push(document.get(&planned.name)?.is_some());
    }

    if args.dry_run {
        return dry_run(
            context,
            args,
            host,
            &imported,
            &plan,
            &existing,
            &prompts,
            &notes,
            &location_of,
            failed,
        );
    }

    let conflicts: Vec<String> = plan
        .iter()
        .zip(&existing)
        .filter(|(_, exists)| **exists)
        .map(|(p, _)| format!("`{}` ({})", p.name, p.scope))
        .collect();
    if !conflicts.is_empty() && !args.force {
        anyhow::bail!(
            "{} already exist{}; nothing written (pass --force to replace, or name the servers to import)",
            conflicts.join(", "),
            if conflicts.len() == 1 { "s" } else { "" }
        );
    }
    // Password inputs become secret references before anything is asked,
    // so a password that would land in clear is refused before it is typed.
    let secret_names = password_secrets(&prompts)?;
    for planned in &mut plan {
        fill_secret_inputs(&planned.name, &mut planned.entry, &secret_names)?;
    }
    let mut values = input_values(args, &prompts)?;
    let mut to_store: Vec<(SecretName, SecretValue)> = Vec::new();
    for (id, name) in &secret_names {
        if let Some(value) = values.remove(id) {
            to_store.push((name.clone(), SecretValue::new(value)));
        }
    }
    for planned in &mut plan {
        let missing = fill_inputs(&mut planned.entry, &values);
        if let Some(id) = missing.first() {
            anyhow::bail!(
                "server `{}` needs a value for input `{id}`; nothing written (pass --input {id}=VALUE)",
                planned.name
            );
        }
    }
    // Every entry is checked before the first file changes.
    let policy = mcp_config::load(&context.load_options()).policy;
    let mut valid = Vec::with_capacity(plan.len());
    for planned in &plan {
        valid.push(edit::validate_entry(
            &planned.name,
            planned.entry.clone(),
            &context.env,
            &policy,
            planned.scope,
        )?);
    }
    for (name, value) in &to_store {
        context.secrets.set(name, value)?;
        notes.push(format!(
            "the password input is kept as secret `{name}` in the {} store; entries refer to it as ${{secret:{name}}}",
            context.secrets.kind()
        ));
    }
    for (scope, location) in &locations {
        edit::edit(location.clone(), |document| {
            for (planned, entry) in plan.iter().zip(&valid) {
                if planned.scope == *scope {
                    document.upsert(&planned.name, entry.clone())?;
                }
            }
            Ok(())
        })?;
    }
    report(
        context,
        host,
        &imported,
        &plan,
        &existing,
        &notes,
        &location_of,
        false,
    )?;
    Ok(if failed { Outcome::Failed } else { Outcome::Ok })
}

/// The prompts for every input the planned servers use, in the files'
/// order.
fn needed_inputs(imported: &[(Imported, Option<Reach>)], plan: &[Planned]) -> Vec<InputPrompt> {
    let mut prompts: Vec<InputPrompt> = Vec::new();
    for planned in plan {
        let (one, _) = &imported[planned.imported_from];
        for id in &one.servers[planned.server].inputs {
            if prompts.iter().any(|p| &p.id == id) {
                continue;
            }
            if let Some(prompt) = one.inputs.iter().find(|p| &p.id == id) {
                prompts.push(prompt.clone());
            }
        }
    }
    prompts
}

/// The secret each password input of `prompts` is stored as.
fn password_secrets(prompts: &[InputPrompt]) -> anyhow::Result<BTreeMap<String, SecretName>> {
    let mut names = BTreeMap::new();
    for prompt in prompts.iter().filter(|p| p.password) {
        names.insert(prompt.id.clone(), input_secret_name(&prompt.id)?);
    }
    Ok(names)
}

/// A value for every prompt: from `--input ID=VALUE`, else asked on the
/// terminal (without echo for password inputs), else refused.
fn input_values(
    args: &ImportArgs,
    prompts: &[InputPrompt],
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut values = BTreeMap::new();
    for given in &args.inputs {
        let Some((id, value)) = given.split_once('=') else {
            return Err(usage(format!(
                "--input takes ID=VALUE, got `{}`",
                shown(given.split('=').next().unwrap_or_default())
            )));
        };
        values.insert(id.to_owned(), value.to_owned());
    }
    let interactive = std::io::stdin().is_terminal() && Stream::Stderr.is_terminal();
    for prompt in prompts {
        if values.contains_key(&prompt.id) {
            continue;
        }
        let what = match &prompt.description {
            Some(d) => format!("input `{}` ({})", prompt.id, d),
            None => format!("input `{}`", prompt.id),
        };
        if !interactive {
            anyhow::bail!(
                "{} needs a value; nothing written (pass --input {}=VALUE)",
                shown(&what),
                prompt.id
            );
        }
        let question = format!("value for {}: ", shown(&what));
        let mut stderr = Terminal::stderr();
        stderr.write_all(question.as_bytes())?;
        stderr.flush()?;
        let value = if prompt.password {
            rpassword::read_password().context("cannot read the input")?
        } else {
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            line.trim_end_matches(['\r', '\n']).to_owned()
        };
        values.insert(prompt.id.clone(), value);
    }
    Ok(values)
}

/// `entry` with env and header values shown as `***`, as `get` shows them.
fn redacted(entry: &Value) -> Value {
    let mut entry = entry.clone();
    crate::output::redact(&mut entry);
    entry
}

#[allow(clippy::too_many_arguments)]
fn dry_run(
    context: &Context,
    args: &ImportArgs,
    host: Host,
    imported: &[(Imported, Option<Reach>)],
    plan: &[Planned],
    existing: &[bool],
    prompts: &[InputPrompt],
    notes: &[String],
    location_of: &dyn Fn(Scope) -> Option<ServersLocation>,
    failed: bool,
) -> anyhow::Result<Outcome> {
    let refused = existing.iter().any(|e| *e) && !args.force;
    report(
        context,
        host,
        imported,
        plan,
        existing,
        notes,
        location_of,
        true,
    )?;
    if !context.json {
        for prompt in prompts {
            outln!(
                "needs input `{}`{}: pass --input {}=VALUE{}",
                shown(&prompt.id),
                prompt
                    .description
                    .as_deref()
                    .map(|d| format!(" ({})", shown(d)))
                    .unwrap_or_default(),
                shown(&prompt.id),
                if prompt.password { " (a secret)" } else { "" }
            );
        }
        outln!("dry run: nothing written");
    }
    Ok(if failed || refused {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}

/// Prints what was (or would be) written, every field left out, every
/// diagnostic: human lines or one JSON document.
#[allow(clippy::too_many_arguments)]
fn report(
    context: &Context,
    host: Host,
    imported: &[(Imported, Option<Reach>)],
    plan: &[Planned],
    existing: &[bool],
    notes: &[String],
    location_of: &dyn Fn(Scope) -> Option<ServersLocation>,
    dry_run: bool,
) -> anyhow::Result<()> {
    let action = |exists: bool| match (dry_run, exists) {
        (false, false) => "added",
        (false, true) => "replaced",
        (true, false) => "would add",
        (true, true) => "exists",
    };
    if context.json {
        let servers: Vec<Value> = plan
            .iter()
            .zip(existing)
            .map(|(planned, exists)| {
                let (one, _) = &imported[planned.imported_from];
                let server = &one.servers[planned.server];
                json!({
                    "name": planned.name,
                    "action": action(*exists),
                    "scope": planned.scope.as_str(),
                    "target": location_of(planned.scope).map(|l| l.path),
                    "source": {"file": one.file, "line": server.line, "column": server.column},
                    "entry": redacted(&planned.entry),
                    "untranslated": server.untranslated,
                    "inputs": server.inputs,
                })
            })
            .collect();
        let inputs = needed_inputs(imported, plan);
        let files: Vec<Value> = imported
            .iter()
            .map(|(one, reach)| json!({"path": one.file, "reach": reach, "servers": one.servers.len()}))
            .collect();
        let diagnostics: Vec<&Diagnostic> = imported
            .iter()
            .flat_map(|(one, _)| &one.diagnostics)
            .collect();
        output::print_json(&json!({
            "host": host,
            "dryRun": dry_run,
            "files": files,
            "servers": servers,
            "inputs": inputs,
            "notes": notes,
            "diagnostics": diagnostics,
        }))?;
        return Ok(());
    }
    for (one, _) in imported {
        outln!(
            "{} {}: {} server(s)",
            host.display_name(),
            shown(&one.file.display().to_string()),
            one.servers.len()
        );
    }
    for (planned, exists) in plan.iter().zip(existing) {
        let (one, _) = &imported[planned.imported_from];
        let server = &one.servers[planned.server];
        let target = location_of(planned.scope)
            .map(|l| l.path.display().to_string())
            .unwrap_or_default();
        let kind = planned
            .entry
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("");
        let verb = action(*exists);
        let verb = if verb == "exists" {
            "exists already (pass --force to replace)"
        } else {
            verb
        };
        outln!(
            "  {verb} {kind} server `{}` in {} ({})",
            shown(&planned.name),
            shown(&target),
            planned.scope
        );
        if dry_run {
            outln!("    {}", shown(&redacted(&planned.entry).to_string()));
        }
        let file = one
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for u in &server.untranslated {
            outln!(
                "    not translated: {} ({file}:{}:{}): {}",
                shown(&u.field),
                u.line,
                u.column,
                shown(&u.reason)
            );
        }
    }
    for note in notes {
        outln!("note: {}", shown(note));
    }
    for d in imported.iter().flat_map(|(one, _)| &one.diagnostics) {
        errln!("{}", shown(&diagnostic_line(d)));
    }
    Ok(())
}

/// The lines `list` and `check-config` add when no server is configured:
/// the other hosts' files that hold servers, and how to import them.
pub(crate) fn other_hosts_hint(context: &Context) -> Vec<String> {
    let found = found_files(&import_dirs(context));
    if found.is_empty() {
        return Vec::new();
    }
    let mut lines = vec!["found servers in other hosts' files:".to_owned()];
    for file in &found {
        lines.push(format!(
            "  {} {} ({} server{}) — import with `mcp-cli import --from {}`",
            file.host.display_name(),
            tilde(&file.path, &context.home),
            file.servers,
            if file.servers == 1 { "" } else { "s" },
            file.host
        ));
    }
    lines
}

/// The same for `list --json` and `check-config --json`: the files found
/// when `unconfigured`, else none (the key is left out then, so the
/// documents of configured projects keep their shape).
pub(crate) fn other_hosts_json(context: &Context, unconfigured: bool) -> Vec<FoundFile> {
    if unconfigured {
        found_files(&import_dirs(context))
    } else {
        Vec::new()
    }
}

fn tilde(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}
