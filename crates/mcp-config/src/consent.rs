//! The user's consent to run what a project names (REFERENCE §1.7): whether
//! the user trusts a project, and what exactly an approval approved.
//!
//! The rules (trust of a project, approval records) are documented on
//! [`ApprovalRecord`], the public face of this module.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::identity::fnv1a64_hex;
use crate::types::{McpOAuthConfig, ServerConfig, TransportConfig};

/// The key of a project's entry in `<home>/.claude.json` that says the user
/// trusts the project.
pub(crate) const TRUST_KEY: &str = "hasTrustDialogAccepted";

/// The settings key that keeps an [`ApprovalRecord`] per approved name,
/// next to `enabledMcpjsonServers`.
pub(crate) const RECORDS_KEY: &str = "enabledMcpjsonServerSignatures";

/// Settings keys that approve or deny project servers. They count only
/// from user and local files, never from a file the project ships.
pub(crate) const APPROVAL_KEYS: &[&str] = &[
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    RECORDS_KEY,
];

/// The approval keys that give consent (all but the denial list): a file
/// inside an untrusted project is read without them.
pub(crate) const CONSENT_KEYS: &[&str] = &[
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    RECORDS_KEY,
];

/// The parts of a server an approval records, in the order messages name
/// them.
pub const RECORDED_PARTS: &[&str] = &[
    "kind",
    "command",
    "args",
    "env",
    "envPassthrough",
    "cwd",
    "url",
    "headersHelper",
    "headerSecrets",
    "oauthCredentials",
    "id",
    "name",
];

/// What an approval approved: one hash per part of the server. Parts a
/// server does not have are absent.
///
/// **Trust.** A cloned project can ship its own
/// `.claude/settings.local.json`, so a file inside the project tree counts
/// as the user's consent only once the user has trusted that project in
/// their own home config: `projects["<abs path>"].hasTrustDialogAccepted:
/// true` in `<home>/.claude.json` (the key Claude Code writes). Until then
/// the loader reads `settings.local.json` for everything but consent: its
/// approval keys are ignored (a denial still counts: it can only hold
/// servers back), its servers are project servers awaiting approval, and
/// it cannot enable a plugin the user disabled.
///
/// **Approval records.** An approval by name alone would outlive any change
/// to the server (after `approve p1`, `p1` could become `/bin/sh -c …`).
/// So approving also records, next to the name, one FNV-1a hash per part of
/// what was approved (this record): the transport kind, and for stdio
/// the command, args, env, `envPassthrough` (when set: which host secrets
/// the program gets) and cwd (env and cwd decide which program a bare
/// or relative command is), for remote servers the url and the
/// `headersHelper` (a command that runs before connecting) and the `oauth`
/// credential sources (`oauthCredentials`: the grant, the assertion command
/// or variable, the secret's variable or value, the private key file, the
/// identity provider's endpoint; absent when none is set, so approvals of
/// blocks written before these existed stay valid), for the proxy
/// its url and id. A server whose parts no longer match is pending again,
/// and the diagnostic names the parts that changed. Hashes, not values: args,
/// env values and url queries can hold tokens, and the record must not copy
/// them into another file. Names approved without a record (as Claude Code
/// writes `enabledMcpjsonServers`) stay approved by name, and say so
/// ([`ApprovalBasis::NameOnly`](crate::ApprovalBasis::NameOnly));
/// `enableAllProjectMcpServers` approves every project server whatever its
/// record says; a denial wins over both. Loading only reads: records are
/// written by [`ConfigDocument::set_approval_record`](crate::edit::ConfigDocument::set_approval_record),
/// and a denial forgets the record of its name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApprovalRecord {
    parts: BTreeMap<String, String>,
}

impl ApprovalRecord {
    /// The record of `config` as it is now.
    pub fn of(config: &ServerConfig) -> ApprovalRecord {
        let mut parts = BTreeMap::new();
        let mut put = |part: &str, value: Value| {
            // A part the server does not have is absent, so that a
            // transport change names only the parts that exist.
            if value.is_null() {
                return;
            }
            // Each part is hashed with its name, so equal values of two
            // parts do not give equal hashes.
            let text = format!("{part}\0{value}");
            parts.insert(part.to_owned(), fnv1a64_hex(&text));
        };
        put("kind", Value::from(config.transport.kind().as_str()));
        match &config.transport {
            TransportConfig::Stdio(stdio) => {
                put("command", Value::from(stdio.command.as_str()));
                put("args", Value::from(stdio.args.clone()));
                let env: Map<String, Value> = stdio
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                    .collect();
                put("env", Value::Object(env));
                // Absent while empty, so approvals recorded before the
                // field existed stay valid.
                if !stdio.env_passthrough.is_empty() {
                    put("envPassthrough", Value::from(stdio.env_passthrough.clone()));
                }
                put(
                    "cwd",
                    stdio
                        .cwd
                        .as_ref()
                        .map_or(Value::Null, |c| Value::from(c.to_string_lossy())),
                );
            }
            TransportConfig::Sse(remote)
            | TransportConfig::Http(remote)
            | TransportConfig::Ws(remote) => {
                put("url", Value::from(remote.url.as_str()));
                put(
                    "headersHelper",
                    remote
                        .headers_helper
                        .as_deref()
                        .map_or(Value::Null, Value::from),
                );
                // Which header carries which secret: a project that starts
                // sending one of the user's secrets (or moves it to another
                // header) is approved again. Absent while none is named, so
                // approvals recorded before secrets existed stay valid.
                let header_secrets: Map<String, Value> = remote
                    .headers
                    .iter()
                    .filter_map(|(header, value)| {
                        let names: Vec<Value> = crate::secret::references(value)
                            .into_iter()
                            .filter_map(|r| match r {
                                crate::secret::Reference::Name(name) => {
                                    Some(Value::from(name.as_str()))
                                }
                                _ => None,
                            })
                            .collect();
                        (!names.is_empty())
                            .then(|| (header.to_ascii_lowercase(), Value::from(names)))
                    })
                    .collect();
                if !header_secrets.is_empty() {
                    put("headerSecrets", Value::Object(header_secrets));
                }
                put(
                    "oauthCredentials",
                    remote.oauth.as_ref().map_or(Value::Null, oauth_credentials),
                );
            }
            TransportConfig::ClaudeAiProxy(proxy) => {
                put("url", Value::from(proxy.url.as_str()));
                put("id", Value::from(proxy.id.as_str()));
            }
            TransportConfig::Sdk { name } => put("name", Value::from(name.as_str())),
        }
        ApprovalRecord { parts }
    }

    /// The record as it is written: `{"<part>": "<16 hex digits>", …}`.
    pub fn to_json(&self) -> Value {
        Value::Object(
            self.parts
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect(),
        )
    }

    /// A record read back from settings; `None` when `value` is not an
    /// object of strings (a damaged record approves nothing).
    pub fn from_json(value: &Value) -> Option<ApprovalRecord> {
        let object = value.as_object()?;
        let mut parts = BTreeMap::new();
        for (k, v) in object {
            parts.insert(k.clone(), v.as_str()?.to_owned());
        }
        Some(ApprovalRecord { parts })
    }

    /// The parts that differ between this record and `now`, in
    /// [`RECORDED_PARTS`] order (a part present on one side only differs).
    pub fn changed(&self, now: &ApprovalRecord) -> Vec<String> {
        let mut changed: Vec<String> = RECORDED_PARTS
            .iter()
            .filter(|part| self.parts.get(**part) != now.parts.get(**part))
            .map(|part| (*part).to_owned())
            .collect();
        // Parts this version does not know (a newer writer's) differ too.
        let unknown: std::collections::BTreeSet<&String> = self
            .parts
            .keys()
            .chain(now.parts.keys())
            .filter(|k| !RECORDED_PARTS.contains(&k.as_str()))
            .filter(|k| self.parts.get(*k) != now.parts.get(*k))
            .collect();
        changed.extend(unknown.into_iter().cloned());
        changed
    }
}

/// The parts of an `oauth` block that decide what runs or which secret
/// goes where: a project that changes its assertion command, points the
/// secret at another variable or sends the ID token to another identity
/// provider must be approved again. `Null` when the block uses none of
/// them (the authorization code grant with a client id and scopes).
fn oauth_credentials(oauth: &McpOAuthConfig) -> Value {
    let mut parts = Map::new();
    let mut put = |key: &str, value: Value| {
        if !value.is_null() {
            parts.insert(key.to_owned(), value);
        }
    };
    if let Some(grant) = oauth.grant {
        put("grant", Value::from(grant.as_str()));
    }
    if let Some(source) = &oauth.assertion {
        put(
            "assertion",
            serde_json::to_value(source).unwrap_or_default(),
        );
    }
    if let Some(name) = &oauth.client_secret_env {
        put("clientSecretEnv", Value::from(name.as_str()));
    }
    if let Some(secret) = &oauth.client_secret {
        // Hashed again with the rest, never copied.
        put("clientSecret", Value::from(fnv1a64_hex(secret.expose())));
    }
    if let Some(path) = &oauth.private_key_file {
        put("privateKeyFile", Value::from(path.to_string_lossy()));
    }
    if let Some(url) = &oauth.client_metadata_url {
        put("clientMetadataUrl", Value::from(url.as_str()));
    }
    if let Some(idp) = &oauth.idp {
        put("idp", serde_json::to_value(idp).unwrap_or_default());
    }
    if parts.is_empty() {
        Value::Null
    } else {
        Value::Object(parts)
    }
}

/// Whether the object of one project in `<home>/.claude.json` says the
/// user trusts it: only a literal `true` does.
pub(crate) fn trusted_in(project_entry: &Value) -> bool {
    project_entry.get(TRUST_KEY).and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{StdioConfig, Timeouts, ToolFilter};

    fn stdio(command: &str, args: &[&str]) -> ServerConfig {
        ServerConfig {
            name: "s".into(),
            transport: TransportConfig::Stdio(StdioConfig {
                command: command.into(),
                args: args.iter().map(|a| (*a).to_owned()).collect(),
                env: BTreeMap::new(),
                cwd: None,
                env_passthrough: Vec::new(),
            }),
            enabled: true,
            required: false,
            tool_filter: ToolFilter::default(),
            timeouts: Timeouts::default(),
            description_limit: None,
        }
    }

    fn remote(oauth: Option<McpOAuthConfig>) -> ServerConfig {
        let mut server = stdio("a", &[]);
        server.transport = TransportConfig::Http(crate::types::RemoteConfig {
            url: "https://x.example/mcp".into(),
            headers: BTreeMap::new(),
            headers_helper: None,
            oauth,
        });
        server
    }

    #[test]
    fn a_changed_oauth_credential_source_needs_approval_again() {
        use crate::types::CredentialSource;
        let command = |argv: &[&str]| McpOAuthConfig {
            grant: Some(crate::OAuthGrantKind::JwtBearer),
            assertion: Some(CredentialSource::Command {
                argv: argv.iter().map(|a| (*a).to_owned()).collect(),
                timeout: None,
            }),
            ..McpOAuthConfig::default()
        };
        let approved = ApprovalRecord::of(&remote(Some(command(&["token-tool"]))));
        let check = |oauth: Option<McpOAuthConfig>, changed: &[&str]| {
            assert_eq!(
                approved.changed(&ApprovalRecord::of(&remote(oauth))),
                changed
            );
        };
        check(Some(command(&["token-tool"])), &[]);
        check(
            Some(command(&["sh", "-c", "curl evil"])),
            &["oauthCredentials"],
        );
        let mut other_var = command(&["token-tool"]);
        other_var.client_secret_env = Some("AWS_SECRET_ACCESS_KEY".into());
        check(Some(other_var), &["oauthCredentials"]);
        // A plain authorization-code block records nothing more than before.
        let plain = McpOAuthConfig {
            client_id: Some("c".into()),
            scopes: vec!["read".into()],
            ..McpOAuthConfig::default()
        };
        assert_eq!(
            ApprovalRecord::of(&remote(Some(plain))),
            ApprovalRecord::of(&remote(None))
        );
    }

    #[test]
    fn a_header_that_starts_carrying_a_secret_needs_approval_again() {
        let with = |headers: &[(&str, &str)]| {
            let mut server = remote(None);
            if let TransportConfig::Http(remote) = &mut server.transport {
                remote.headers = headers
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect();
            }
            ApprovalRecord::of(&server)
        };
        let plain = with(&[("X-Team", "blue")]);
        // Headers without secrets record nothing more than before.
        assert_eq!(plain, with(&[]));
        let check = |approved: &ApprovalRecord, now: ApprovalRecord, changed: &[&str]| {
            assert_eq!(approved.changed(&now), changed);
        };
        check(
            &plain,
            with(&[("Authorization", "Bearer ${secret:GH}")]),
            &["headerSecrets"],
        );
        let approved = with(&[("Authorization", "Bearer ${secret:GH}")]);
        check(
            &approved,
            with(&[("authorization", "token ${secret:GH}")]),
            &[],
        );
        check(
            &approved,
            with(&[("Authorization", "Bearer ${secret:AWS}")]),
            &["headerSecrets"],
        );
        check(
            &approved,
            with(&[("X-Other", "${secret:GH}")]),
            &["headerSecrets"],
        );
    }

    #[test]
    fn records_name_the_parts_that_changed_and_survive_a_round_trip() {
        let before = ApprovalRecord::of(&stdio("a", &["b"]));
        let check = |after: ServerConfig, changed: &[&str]| {
            assert_eq!(before.changed(&ApprovalRecord::of(&after)), changed);
        };
        check(stdio("a", &["b"]), &[]);
        check(stdio("x", &["b"]), &["command"]);
        check(stdio("a", &[]), &["args"]);
        // A value moving from one part to another is still a change.
        check(stdio("b", &["a"]), &["command", "args"]);
        // A passthrough list is part of what was approved: naming another
        // host variable hands the program another secret.
        let with_passthrough = |names: &[&str]| {
            let mut server = stdio("a", &["b"]);
            if let TransportConfig::Stdio(stdio) = &mut server.transport {
                stdio.env_passthrough = names.iter().map(|n| (*n).to_owned()).collect();
            }
            server
        };
        check(with_passthrough(&["AWS_PROFILE"]), &["envPassthrough"]);
        check(with_passthrough(&[]), &[]);
        let approved = ApprovalRecord::of(&with_passthrough(&["AWS_PROFILE"]));
        let changed = approved.changed(&ApprovalRecord::of(&with_passthrough(&[
            "AWS_PROFILE",
            "GITHUB_TOKEN",
        ])));
        assert_eq!(changed, ["envPassthrough"]);
        let back = ApprovalRecord::from_json(&before.to_json());
        assert_eq!(back.as_ref(), Some(&before));
        assert_eq!(
            ApprovalRecord::from_json(&serde_json::json!({"kind": 1})),
            None
        );
        assert_eq!(ApprovalRecord::from_json(&serde_json::json!([])), None);
        let text = before.to_json().to_string();
        assert!(!text.contains("\"a\"") && !text.contains("\"b\""), "{text}");
    }
}
