//! Where OAuth tokens live (`--token-store`, `MCP_TOKEN_STORE`): one 0600
//! file per server under `<home>/.mcp-cli/credentials` (the default), or
//! the OS secret store, one secret per server, with the refresh lock files
//! still in that folder. Also the secret store `import` writes VS Code's
//! password inputs to.
//!
//! The flag is read with the global options into the run's context;
//! without it, `MCP_TOKEN_STORE` from the context's environment decides.
//! [`tokens_in_secret_store`] is the one place a secret store becomes a
//! credential store, the run's own (`Context::secrets`). A secret store
//! that cannot be opened is an error when tokens are needed: tokens never
//! fall back to a file the person chose not to have.

use std::path::PathBuf;
use std::sync::Arc;

use clap::ValueEnum as _;
use mcp_config::secret::SecretStore;
use mcp_oauth::{CredentialStore, FileCredentialStore, SecretCredentialStore};

use crate::cli::TokenStoreArg;
use crate::context::Context;
use crate::output::{shown, usage};

/// The folder of the credential files and of every refresh lock file.
fn credentials_dir(context: &Context) -> PathBuf {
    context.home.join(".mcp-cli").join("credentials")
}

/// The store `--token-store` names, else `MCP_TOKEN_STORE`, else `file`;
/// a variable naming no store is a usage error.
fn chosen(context: &Context) -> anyhow::Result<TokenStoreArg> {
    if let Some(kind) = context.token_store {
        return Ok(kind);
    }
    match context.env.get("MCP_TOKEN_STORE") {
        None => Ok(TokenStoreArg::File),
        Some(value) => TokenStoreArg::from_str(value, false).map_err(|_| {
            usage(format!(
                "MCP_TOKEN_STORE={}: expected `file` or `secret-store`",
                shown(value)
            ))
        }),
    }
}

/// The credential store of the chosen kind: the file store, or one in the
/// run's secret store (opened on first use; a store that cannot be opened
/// fails the verb that needs tokens, naming the store, and never falls
/// back to a file).
pub(crate) fn credential_store(context: &Context) -> anyhow::Result<Arc<dyn CredentialStore>> {
    Ok(match chosen(context)? {
        TokenStoreArg::File => Arc::new(FileCredentialStore::new(credentials_dir(context))),
        TokenStoreArg::SecretStore => tokens_in_secret_store(context, context.secrets.clone()),
    })
}

/// OAuth tokens kept in `secrets`, one secret per server, with the refresh
/// lock files under `<home>/.mcp-cli/credentials` (the same lock files
/// the file store takes, so switching stores never lets two refreshes of
/// one server run at once).
pub(crate) fn tokens_in_secret_store(
    context: &Context,
    secrets: Arc<dyn SecretStore>,
) -> Arc<dyn CredentialStore> {
    Arc::new(SecretCredentialStore::new(
        secrets,
        credentials_dir(context),
    ))
}
