//! The directories and switches every verb works with, resolved once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mcp_config::LoadOptions;
use mcp_config::edit::EditDirs;

use crate::cli::GlobalArgs;

/// Resolved global options.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub(crate) home: PathBuf,
    /// Absolute, with symlinks resolved when the directory exists, so the
    /// local scope's key is the same however the project was named.
    pub(crate) project: PathBuf,
    pub(crate) openclaw_home: PathBuf,
    /// The managed policy directory: `--managed-dir`, or the platform's.
    pub(crate) managed_dir: PathBuf,
    pub(crate) plugins: Vec<PathBuf>,
    pub(crate) trust_project: bool,
    pub(crate) json: bool,
    /// The process environment, for `${VAR}` expansion.
    pub(crate) env: BTreeMap<String, String>,
    /// `--protocol`: the one revision to speak.
    pub(crate) protocol: Option<String>,
    /// The folders given to servers that ask for roots: the `--root`
    /// folders, canonical, or else the project directory.
    pub(crate) roots: Vec<PathBuf>,
    /// `-v` given this many times.
    pub(crate) verbose: u8,
    /// Where `${secret:NAME}` values are read from: opened on first use,
    /// so a run whose servers name no secret never touches a keyring.
    pub(crate) secrets: std::sync::Arc<mcp_config::secret::OsSecretStore>,
    /// `--token-store`, when given (else `MCP_TOKEN_STORE` decides).
    pub(crate) token_store: Option<crate::cli::TokenStoreArg>,
}

impl Context {
    pub(crate) fn new(global: &GlobalArgs) -> anyhow::Result<Context> {
        let home = match &global.home {
            Some(home) => absolute(home)?,
            None => default_home()
                .context("cannot tell the home directory: $HOME is not set; pass --home DIR")?,
        };
        let project = match &global.project {
            Some(project) => absolute(project)?,
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let project = std::fs::canonicalize(&project).unwrap_or(project);
        let openclaw_home = match &global.openclaw_home {
            Some(dir) => absolute(dir)?,
            None => home.join(".openclaw"),
        };
        let managed_dir = match &global.managed_dir {
            Some(dir) => absolute(dir)?,
            None => mcp_config::policy::default_managed_dir(),
        };
        let plugins = global
            .plugins
            .iter()
            .map(|dir| absolute(dir))
            .collect::<anyhow::Result<_>>()?;
        let roots = if global.roots.is_empty() {
            vec![project.clone()]
        } else {
            global
                .roots
                .iter()
                .map(|dir| {
                    // Canonical, so a server sees one name per folder and no
                    // `..` or symlink it could misread.
                    std::fs::canonicalize(dir).with_context(|| format!("--root {}", dir.display()))
                })
                .collect::<anyhow::Result<_>>()?
        };
        let env: BTreeMap<String, String> = std::env::vars_os()
            .filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
            .collect();
        let secrets = secret_store(global, &env)?;
        Ok(Context {
            home,
            project,
            openclaw_home,
            managed_dir,
            plugins,
            trust_project: global.trust_project,
            json: global.json,
            env,
            protocol: global.protocol.clone(),
            roots,
            verbose: global.verbose,
            secrets,
            token_store: global.token_store,
        })
    }

    /// The loader's inputs: every directory and variable it may use.
    pub(crate) fn load_options(&self) -> LoadOptions {
        LoadOptions::default()
            .with_home(self.home.clone())
            .with_project(self.project.clone())
            .with_openclaw_home(self.openclaw_home.clone())
            .with_managed_dir(self.managed_dir.clone())
            .with_plugin_roots(self.plugins.clone())
            .with_env(self.env.clone())
            .with_trust_project_servers(self.trust_project)
    }

    pub(crate) fn edit_dirs(&self) -> EditDirs {
        EditDirs::new(
            self.home.clone(),
            self.project.clone(),
            self.openclaw_home.clone(),
        )
    }
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))
}

fn default_home() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var)
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
}

/// The run's secret store: `--secret-store` and `--secret-namespace`, else
/// `MCP_SECRET_STORE` and `MCP_SECRET_NAMESPACE` from `env`, else `auto`
/// in the `mcp-cli` namespace; opened on first use. A variable naming no
/// store, or no namespace, is a usage error naming the variable.
fn secret_store(
    global: &GlobalArgs,
    env: &BTreeMap<String, String>,
) -> anyhow::Result<std::sync::Arc<mcp_config::secret::OsSecretStore>> {
    use mcp_config::secret::{
        DEFAULT_NAMESPACE, OsSecretStore, SecretBackend, secret_name_problem,
    };
    let backend = match (global.secret_store, env.get("MCP_SECRET_STORE")) {
        (Some(backend), _) => backend,
        (None, Some(value)) => value
            .parse::<SecretBackend>()
            .map_err(|problem| crate::cli::usage(format!("MCP_SECRET_STORE: {problem}")))?,
        (None, None) => SecretBackend::default(),
    };
    let namespace = match (&global.secret_namespace, env.get("MCP_SECRET_NAMESPACE")) {
        (Some(namespace), _) => namespace.as_str(),
        (None, Some(value)) => {
            if let Some(problem) = secret_name_problem(value) {
                return Err(crate::cli::usage(format!(
                    "MCP_SECRET_NAMESPACE: not a namespace: {problem}"
                )));
            }
            value.as_str()
        }
        (None, None) => DEFAULT_NAMESPACE,
    };
    Ok(std::sync::Arc::new(OsSecretStore::deferred(
        backend, namespace,
    )))
}
