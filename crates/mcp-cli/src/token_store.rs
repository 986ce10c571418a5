//! Where OAuth tokens live (`--token-store`, `MCP_TOKEN_STORE`): one 0600
//! file per server under `<home>/.mcp-cli/credentials` (the default), or
//! the OS secret store, one secret per server, with the refresh lock files
//! still in that folder. Also the secret store `import` writes VS Code's
//! password inputs to.
//!
//! The flag is read with the global options and holds for the process;
//! without it, `MCP_TOKEN_STORE` from the context's environment decides. [`SecretStoreChoice::secrets`] is the secret store the process
//! was given; [`tokens_in_secret_store`] is the one place a secret store
//! becomes a credential store. Choosing `secret-store` where there is none
//! is an error when tokens are needed: tokens never fall back to a file
//! the person chose not to have.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use clap::ValueEnum as _;
use mcp_config::secret::SecretStore;
use mcp_oauth::{CredentialStore, FileCredentialStore, SecretCredentialStore};

use crate::cli::TokenStoreArg;
use crate::context::Context;
use crate::output::{shown, usage};

/// The process's token store choice and the secret store it has, if any.
#[derive(Debug)]
pub(crate) struct SecretStoreChoice {
    tokens: Option<TokenStoreArg>,
    secrets: Option<Arc<dyn SecretStore>>,
}

static CHOICE: OnceLock<SecretStoreChoice> = OnceLock::new();

impl SecretStoreChoice {
    /// Records the choice for this process: `tokens` from `--token-store`
    /// (`None`: not given), and `secrets`, the secret store this build and
    /// platform offer (`None`: no secret store). Set once, before the verb
    /// runs; a second call keeps the first.
    pub(crate) fn set(tokens: Option<TokenStoreArg>, secrets: Option<Arc<dyn SecretStore>>) {
        let _ = CHOICE.set(SecretStoreChoice { tokens, secrets });
    }

    fn get() -> &'static SecretStoreChoice {
        CHOICE.get_or_init(|| SecretStoreChoice {
            tokens: None,
            secrets: None,
        })
    }

    /// The secret store of this process, when there is one.
    pub(crate) fn secrets() -> Option<Arc<dyn SecretStore>> {
        Self::get().secrets.clone()
    }
}

/// The folder of the credential files and of every refresh lock file.
fn credentials_dir(context: &Context) -> PathBuf {
    context.home.join(".mcp-cli").join("credentials")
}

/// The store `--token-store` names, else `MCP_TOKEN_STORE`, else `file`;
/// a variable naming no store is a usage error.
fn chosen(context: &Context, flag: Option<TokenStoreArg>) -> anyhow::Result<TokenStoreArg> {
    if let Some(kind) = flag {
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

/// The credential store of the chosen kind: the file store, or the
/// secret store's; an error naming the choice when it is `secret-store`
/// and this process has no secret store.
pub(crate) fn credential_store(context: &Context) -> anyhow::Result<Arc<dyn CredentialStore>> {
    let choice = SecretStoreChoice::get();
    match chosen(context, choice.tokens)? {
        TokenStoreArg::File => Ok(Arc::new(FileCredentialStore::new(credentials_dir(context)))),
        TokenStoreArg::SecretStore => match &choice.secrets {
            Some(secrets) => Ok(tokens_in_secret_store(context, secrets.clone())),
            None => anyhow::bail!(
                "--token-store secret-store (or MCP_TOKEN_STORE): no OS secret store is available to this process; use --token-store file"
            ),
        },
    }
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
