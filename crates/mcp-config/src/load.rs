//! The loader: reads every source from the directories the caller names,
//! parses each file with the pure core, and merges (REFERENCE §1.3).
//!
//! Files read, lowest precedence first (a missing file is simply absent):
//!
//! | layer | files, in order |
//! |---|---|
//! | plugin | each plugin root given in [`LoadOptions::plugin_roots`], then each plugin the settings enable |
//! | openclaw | `<openclaw_home>/openclaw.json` (`mcp.servers`, `mcp.sessionIdleTtlMs`) |
//! | user | `<home>/.claude.json` (top-level `mcpServers`), `<home>/.claude/settings.json` |
//! | project | `<project>/.claude.json`, `<project>/.claude/settings.json`, `<project>/.mcp.json` |
//! | local | `<project>/.claude/settings.local.json`, `<home>/.claude.json` `projects["<project>"]` |
//!
//! Non-MCP settings deep-merge from the settings files (`settings.json`,
//! `settings.local.json`, the `projects["<project>"]` object and
//! `openclaw.json`); the top level of a `.claude.json` is application
//! state, not settings, and is not merged.
//!
//! **Trust.** `<project>/.claude/settings.local.json` lives inside the
//! project tree, so a cloned project can ship it. It counts as the user's
//! local settings only once the user trusts the project
//! (`projects["<project>"].hasTrustDialogAccepted: true` in
//! `<home>/.claude.json`, see [`crate::consent`]). Until then it is read
//! as one more project file, after `.mcp.json`: its servers are project
//! servers awaiting approval, and its consent keys are ignored with a
//! warning (its other settings, denials included, still count).
//!
//! **Installed plugins.** The settings key `enabledPlugins` (an object of
//! `"<name>"` or `"<name>@<marketplace>"` to `true`/`false`, deep-merged
//! across user, project and local settings, so a later layer can switch a
//! plugin off) enables plugins installed as folders
//! `<home>/.claude/plugins/<name>/`. A plugin the user's own settings
//! (user and local) switch off stays off whatever the project's files say:
//! a plugin runs code, and the project cannot consent to that for the
//! user. They load after the explicit roots, sorted by name; an enabled
//! plugin that is not installed is a warning.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::consent::CONSENT_KEYS;
use crate::consent::trusted_in;
use crate::file::read_text;
use crate::json::{Document, child_pointer};
use crate::merge::{Contribution, deep_merge, merge};
use crate::parse::{ParseEnv, parse_file, parse_servers, settings_without};
use crate::plugin::{PluginInfo, load_canonical_plugin, load_plugin};
use crate::policy::{Candidate, Policy, read_managed, read_settings_lists};
use crate::sources::{
    Base, PROJECTS_KEY, SOURCES, ServerMap, Source, pointer_below, untrusted_rank,
};
use crate::types::{
    Approval, ApprovalBasis, DEFAULT_SESSION_IDLE_TTL, Diagnostic, Level, Scope, ScopedServer,
};

/// The caller's inputs: every directory and every variable the loader may
/// use. Nothing else is consulted (no `$HOME`, no current directory, no
/// process environment). Its `Debug` names the variables, never their
/// values.
///
/// Built with [`LoadOptions::default`] and the `with_*` methods, so new
/// inputs can be added without breaking callers:
///
/// ```
/// use mcp_config::LoadOptions;
///
/// let options = LoadOptions::default()
///     .with_home("/home/ada")
///     .with_project("/home/ada/src/app")
///     .with_env([("API_TOKEN".to_owned(), "t0ken".to_owned())]);
/// assert!(options.project.is_some());
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct LoadOptions {
    /// The user's home (for `.claude.json`, `.claude/settings.json`,
    /// installed plugins and `~`).
    pub home: Option<PathBuf>,
    /// The project folder. `projects[...]` in `<home>/.claude.json` is
    /// matched against this path exactly as given, so pass it absolute.
    pub project: Option<PathBuf>,
    /// The folder holding OpenClaw's `openclaw.json`.
    pub openclaw_home: Option<PathBuf>,
    /// Plugin roots enabled explicitly, in registry order.
    pub plugin_roots: Vec<PathBuf>,
    /// Variables for `${VAR}` expansion.
    pub env: BTreeMap<String, String>,
    /// Approve every project server (for hosts running without a person
    /// to ask). Servers in `disabledMcpjsonServers` stay denied.
    pub trust_project_servers: bool,
    /// The organisation's managed directory ([`crate::policy`]); `None`
    /// reads no managed policy. Never filled in from the platform on its
    /// own: a host passes [`crate::policy::default_managed_dir`] or its own.
    pub managed_dir: Option<PathBuf>,
}

impl LoadOptions {
    /// Sets the user's home.
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Sets the project folder (pass it absolute, see [`LoadOptions::project`]).
    pub fn with_project(mut self, project: impl Into<PathBuf>) -> Self {
        self.project = Some(project.into());
        self
    }

    /// Sets the folder holding OpenClaw's `openclaw.json`.
    pub fn with_openclaw_home(mut self, openclaw_home: impl Into<PathBuf>) -> Self {
        self.openclaw_home = Some(openclaw_home.into());
        self
    }

    /// Sets the explicitly enabled plugin roots, in registry order.
    pub fn with_plugin_roots(mut self, roots: impl IntoIterator<Item = PathBuf>) -> Self {
        self.plugin_roots = roots.into_iter().collect();
        self
    }

    /// Sets the variables for `${VAR}` expansion (replacing any set before).
    pub fn with_env(mut self, env: impl IntoIterator<Item = (String, String)>) -> Self {
        self.env = env.into_iter().collect();
        self
    }

    /// Reads the managed policy from `dir` (see [`LoadOptions::managed_dir`]).
    pub fn with_managed_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.managed_dir = Some(dir.into());
        self
    }

    /// Approves every project server for this load (see
    /// [`LoadOptions::trust_project_servers`]).
    pub fn with_trust_project_servers(mut self, trust: bool) -> Self {
        self.trust_project_servers = trust;
        self
    }
}

impl std::fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("home", &self.home)
            .field("project", &self.project)
            .field("openclaw_home", &self.openclaw_home)
            .field("plugin_roots", &self.plugin_roots)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("trust_project_servers", &self.trust_project_servers)
            .field("managed_dir", &self.managed_dir)
            .finish()
    }
}

/// The loaded, merged configuration. Its `Debug` names the raw entries
/// and settings keys without their values (they hold env values and
/// header values).
#[derive(Clone, PartialEq)]
pub struct LoadedConfig {
    /// Winning servers, sorted by name. Includes `enabled: false` entries
    /// and servers awaiting approval; see [`LoadedConfig::runnable`].
    pub servers: Vec<ScopedServer>,
    /// The raw JSON of each winning entry, by server name.
    pub raw_entries: BTreeMap<String, Value>,
    /// Deep-merged non-MCP settings.
    pub settings: Value,
    /// OpenClaw's `mcp.sessionIdleTtlMs` (zero: never evict).
    pub session_idle_ttl: Duration,
    /// Plugins that were loaded, in registry order.
    pub plugins: Vec<PluginInfo>,
    /// Files that were read, in reading order.
    pub files: Vec<PathBuf>,
    /// Every problem found, in reading order, then merge notes.
    pub diagnostics: Vec<Diagnostic>,
    /// Whether the user trusts the project (see [`ApprovalRecord`](crate::ApprovalRecord)): only
    /// then do files inside it count as the user's consent.
    pub project_trusted: bool,
    /// The policy every server was checked against; the write verbs check
    /// a new entry against it too.
    pub policy: Policy,
}

impl std::fmt::Debug for LoadedConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let settings_keys: Vec<&String> = self
            .settings
            .as_object()
            .map(|settings| settings.keys().collect())
            .unwrap_or_default();
        f.debug_struct("LoadedConfig")
            .field("servers", &self.servers)
            .field("raw_entries", &self.raw_entries.keys().collect::<Vec<_>>())
            .field("settings", &settings_keys)
            .field("session_idle_ttl", &self.session_idle_ttl)
            .field("plugins", &self.plugins)
            .field("files", &self.files)
            .field("diagnostics", &self.diagnostics)
            .field("project_trusted", &self.project_trusted)
            .field("policy", &self.policy)
            .finish()
    }
}

impl LoadedConfig {
    /// The server named `name`.
    pub fn server(&self, name: &str) -> Option<&ScopedServer> {
        self.servers.iter().find(|s| s.config.name == name)
    }

    /// Servers that may be started: enabled, approved and not blocked by
    /// the managed policy ([`ScopedServer::is_runnable`]).
    pub fn runnable(&self) -> impl Iterator<Item = &ScopedServer> {
        self.servers.iter().filter(|s| s.is_runnable())
    }

    /// Whether any diagnostic is at `level` or above.
    pub fn has_diagnostics_at(&self, level: Level) -> bool {
        self.diagnostics.iter().any(|d| d.level >= level)
    }
}

struct Loader<'a> {
    env: ParseEnv<'a>,
    files: Vec<PathBuf>,
    diagnostics: Vec<Diagnostic>,
    contributions: Vec<Contribution>,
    /// The user trusts the project (read from `<home>/.claude.json`).
    trusted: bool,
    /// The allow and deny lists of the settings files read so far.
    policy: Policy,
}

impl Loader<'_> {
    fn read(&mut self, path: &Path) -> Option<String> {
        match read_text(path) {
            Ok(Some(text)) => {
                self.files.push(path.to_path_buf());
                Some(text)
            }
            Ok(None) => None,
            Err(d) => {
                self.diagnostics.push(d);
                None
            }
        }
    }

    /// The `allowedMcpServers` / `deniedMcpServers` of a settings file.
    fn policy_lists(&mut self, text: &str, path: &Path) {
        read_settings_lists(
            text,
            path,
            self.env.vars,
            &mut self.policy,
            &mut self.diagnostics,
        );
    }

    /// Reads and parses a Claude/OpenClaw file into one contribution.
    fn file(&mut self, path: &Path, source: &Source) {
        let Some(text) = self.read(path) else { return };
        let parsed = parse_file(&text, path, source.scope, self.env);
        self.diagnostics.extend(parsed.diagnostics);
        if source.settings {
            self.policy_lists(&text, path);
        }
        self.contributions.push(Contribution {
            scope: source.scope,
            rank: source.rank,
            entries: parsed.entries,
            settings: source.settings.then_some(parsed.settings),
        });
    }

    /// `<project>/.claude/settings.local.json`: local settings when the
    /// project is trusted, else one more project file without its consent
    /// keys (see the module docs).
    fn project_local_settings(&mut self, path: &Path, source: &Source, home: Option<&Path>) {
        if self.trusted {
            self.file(path, source);
            return;
        }
        let Some(text) = self.read(path) else { return };
        let mut parsed = parse_file(&text, path, source.scope, self.env);
        self.diagnostics.extend(parsed.diagnostics);
        self.policy_lists(&text, path);
        let ignored: Vec<&str> = CONSENT_KEYS
            .iter()
            .copied()
            .filter(|key| {
                parsed
                    .settings
                    .as_object_mut()
                    .is_some_and(|map| map.remove(*key).is_some())
            })
            .collect();
        if !ignored.is_empty()
            && let Ok(doc) = Document::parse(&text, path)
        {
            let home_file = home.map_or_else(
                || "<home>/.claude.json".to_owned(),
                |h| h.join(".claude.json").display().to_string(),
            );
            for key in ignored {
                self.diagnostics.push(doc.diagnostic(
                    Level::Warning,
                    &child_pointer("", key),
                    format!(
                        "`{key}` is ignored: this file is inside the project, and the project is not trusted (`hasTrustDialogAccepted` in {home_file})"
                    ),
                    None,
                    Some(key),
                ));
            }
        }
        // After every other project file: it was the highest of them all.
        self.contributions.push(Contribution {
            scope: Scope::Project,
            rank: untrusted_rank(),
            entries: parsed.entries,
            settings: Some(parsed.settings),
        });
    }

    /// A file holding application state at its root and one object per
    /// project (`<home>/.claude.json`): its top-level servers (`top`, user)
    /// and the project's `projects[...]` object (`entry`, local).
    fn state_file(&mut self, path: &Path, top: &Source, entry: &Source, project: Option<&Path>) {
        let Some(text) = self.read(path) else { return };
        let doc = match Document::parse(&text, path) {
            Ok(doc) => doc,
            Err(d) => {
                self.diagnostics.push(d);
                return;
            }
        };
        let top_map = pointer_below("", top.servers.keys());
        let (entries, diagnostics) = parse_servers(&doc, &top_map, self.env, None);
        self.diagnostics.extend(diagnostics);
        self.contributions.push(Contribution {
            scope: top.scope,
            rank: top.rank,
            entries,
            settings: None,
        });
        let local = self.home_project(&doc, entry, project);
        let mut maps = vec![top_map.as_str()];
        maps.extend(local.as_deref());
        self.diagnostics.extend(doc.file_findings(&maps));
    }

    /// The project's `projects[...]` object of `<home>/.claude.json`, as
    /// the contribution of `source`; returns the pointer of its server map.
    fn home_project(
        &mut self,
        doc: &Document,
        source: &Source,
        project: Option<&Path>,
    ) -> Option<String> {
        let project = project?;
        let key = project.display().to_string();
        let projects = doc.value.get(PROJECTS_KEY).and_then(Value::as_object);
        let key = projects.and_then(|p| {
            [key.as_str(), key.trim_end_matches('/')]
                .into_iter()
                .find(|k| p.contains_key(*k))
                .map(str::to_owned)
        })?;
        let pointer = child_pointer(&child_pointer("", PROJECTS_KEY), &key);
        let object = doc.get(&pointer)?;
        self.trusted = trusted_in(object);
        if !object.is_object() {
            self.diagnostics.push(doc.diagnostic(
                Level::Error,
                &pointer,
                format!("`projects[\"{key}\"]` must be an object"),
                None,
                Some("projects"),
            ));
            return None;
        }
        let keys = source.servers.keys();
        let servers = pointer_below(&pointer, keys);
        let (entries, diagnostics) = parse_servers(doc, &servers, self.env, None);
        self.diagnostics.extend(diagnostics);
        self.contributions.push(Contribution {
            scope: source.scope,
            rank: source.rank,
            entries,
            settings: Some(settings_without(object, &pointer_below("", keys))),
        });
        Some(servers)
    }
}

/// A diagnostic about the `enabledPlugins` switch of the plugin at `root`.
fn switch_diagnostic(level: Level, message: String, root: PathBuf) -> Diagnostic {
    Diagnostic {
        level,
        message,
        file: Some(root),
        line: None,
        column: None,
        server: None,
        field: Some("enabledPlugins".into()),
    }
}

/// The plugin names (the part before `@`) that `settings`'
/// `enabledPlugins` switches to `on`, sorted and unique.
fn plugin_switches(settings: &Value, on: bool) -> Vec<String> {
    let mut names: Vec<String> = settings
        .get("enabledPlugins")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, value)| value.as_bool() == Some(on))
        .map(|(id, _)| id.split('@').next().unwrap_or(id).to_owned())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Whether `name` is one plain folder name: an installed plugin is a folder
/// directly inside `<home>/.claude/plugins`, and a name with a separator,
/// `..` or a root would reach any folder on disk.
fn is_folder_name(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(_)), None)
    )
}

/// Loads and merges every source named by `options`. Never fails: every
/// problem is a diagnostic, and what could be loaded is kept.
pub fn load(options: &LoadOptions) -> LoadedConfig {
    let env = ParseEnv {
        vars: &options.env,
        home: options.home.as_deref(),
    };
    let mut loader = Loader {
        env,
        files: Vec::new(),
        diagnostics: Vec::new(),
        contributions: Vec::new(),
        trusted: false,
        policy: Policy::default(),
    };
    let mut policy = Policy::default();
    if let Some(dir) = &options.managed_dir {
        let managed = read_managed(dir, env);
        policy = managed.policy;
        loader.files.extend(managed.files);
        loader.diagnostics.extend(managed.diagnostics);
        loader.contributions.extend(managed.contributions);
    }

    for (i, source) in SOURCES.iter().enumerate() {
        let dir = match source.base {
            Base::Home => options.home.as_deref(),
            Base::Project => options.project.as_deref(),
            Base::OpenClawHome => options.openclaw_home.as_deref(),
        };
        let Some(dir) = dir else { continue };
        let path = source.path_in(dir);
        // The project's object of a state file comes with the row before it,
        // which reads the same file once.
        let entry = SOURCES
            .get(i + 1)
            .filter(|next| next.same_file(source))
            .filter(|next| matches!(next.servers, ServerMap::ProjectEntry(_)));
        match source.servers {
            ServerMap::ProjectEntry(_) => {}
            ServerMap::Root(_) if source.needs_trust() => {
                loader.project_local_settings(&path, source, options.home.as_deref());
            }
            ServerMap::Root(_) => match entry {
                Some(entry) => {
                    loader.state_file(&path, source, entry, options.project.as_deref());
                }
                None => loader.file(&path, source),
            },
        }
    }

    // Plugins: explicit roots, then those the settings enable.
    // The same folder given twice is one plugin.
    // Each root with its canonical form, when it has one.
    let mut roots: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    let mut seen_roots = std::collections::BTreeSet::new();
    let mut add_root = |root: PathBuf| {
        let real = root.canonicalize().ok();
        if real.as_ref().is_none_or(|r| seen_roots.insert(r.clone())) {
            roots.push((root, real));
        }
    };
    for root in &options.plugin_roots {
        add_root(root.clone());
    }
    if let Some(home) = &options.home {
        let mut settings = Value::Object(Default::default());
        // The same, from the user's own files only (not the project's).
        let mut owner = Value::Object(Default::default());
        let mut ordered: Vec<&Contribution> = loader.contributions.iter().collect();
        ordered.sort_by_key(|c| (c.scope, c.rank));
        for c in ordered {
            if let Some(s) = &c.settings {
                deep_merge(&mut settings, s);
                if c.scope != Scope::Project {
                    deep_merge(&mut owner, s);
                }
            }
        }
        let user_disabled = plugin_switches(&owner, false);
        let user_enabled = plugin_switches(&owner, true);
        let mut names = plugin_switches(&settings, true);
        names.retain(|name| {
            let refused = user_disabled.contains(name) && !user_enabled.contains(name);
            if refused {
                loader.diagnostics.push(switch_diagnostic(Level::Warning, format!(
                        "plugin `{name}` is disabled in your user or local settings; a file inside the project cannot enable it, so it is not loaded"
                    ), home.join(".claude").join("plugins").join(name)));
            }
            !refused
        });
        for name in names {
            let name = name.as_str();
            let root = home.join(".claude").join("plugins").join(name);
            if !is_folder_name(name) {
                loader.diagnostics.push(switch_diagnostic(
                    Level::Error,
                    format!("plugin name `{name}` leaves the plugins folder; it is not loaded"),
                    root,
                ));
                continue;
            }
            if !root.is_dir() {
                loader.diagnostics.push(switch_diagnostic(
                    Level::Warning,
                    format!("plugin `{name}` is enabled but not installed"),
                    root,
                ));
                continue;
            }
            add_root(root);
        }
    }
    let mut plugins = Vec::new();
    for (rank, (root, real)) in roots.into_iter().enumerate() {
        let mut diagnostics = Vec::new();
        let loaded = match real.filter(|r| r.is_dir()) {
            Some(real) => Some(load_canonical_plugin(real, env, &mut diagnostics)),
            None => load_plugin(&root, env, &mut diagnostics),
        };
        if let Some((info, entries)) = loaded {
            loader.files.extend(info.manifest.iter().cloned());
            loader.files.extend(info.mcp_files.iter().cloned());
            loader.contributions.push(Contribution {
                scope: Scope::Plugin,
                rank,
                entries,
                settings: None,
            });
            plugins.push(info);
        }
        loader.diagnostics.extend(diagnostics);
    }

    let session_idle_ttl = loader
        .contributions
        .iter()
        .filter(|c| c.scope == Scope::OpenClaw)
        .find_map(|c| {
            c.settings
                .as_ref()?
                .pointer("/mcp/sessionIdleTtlMs")?
                .as_u64()
        })
        .map_or(DEFAULT_SESSION_IDLE_TTL, Duration::from_millis);

    let mut merged = merge(loader.contributions, options.trust_project_servers);
    let mut diagnostics = loader.diagnostics;
    diagnostics.extend(merged.diagnostics);
    policy.absorb(loader.policy);
    for server in &mut merged.servers {
        let name = &server.config.name;
        let candidate = Candidate {
            config: &server.config,
            scope: server.scope,
            source: Some(&server.source),
            raw: merged.raw_entries.get(name),
        };
        if let Some(block) = policy.verdict(&candidate) {
            diagnostics.push(Diagnostic {
                level: Level::Warning,
                // The position is the rule's; the message adds what it says.
                message: match (block.rule.key.as_str(), block.rule.pattern.as_str()) {
                    ("", _) => format!("server `{name}` is blocked by policy: {}", block.reason),
                    (key, "") => {
                        format!(
                            "server `{name}` is blocked by policy: {} (`{key}`)",
                            block.reason
                        )
                    }
                    (key, pattern) => format!(
                        "server `{name}` is blocked by policy: {} (`{key}` {pattern})",
                        block.reason
                    ),
                },
                file: Some(block.rule.file.clone()),
                line: block.rule.line,
                column: None,
                server: Some(name.clone()),
                field: Some(block.rule.key.clone()),
            });
            server.approval = Approval::Denied;
            server.approval_basis = ApprovalBasis::Blocked(block);
        }
    }
    LoadedConfig {
        servers: merged.servers,
        raw_entries: merged.raw_entries,
        settings: merged.settings,
        session_idle_ttl,
        plugins,
        files: loader.files,
        diagnostics,
        project_trusted: loader.trusted,
        policy,
    }
}
