//! `${secret:NAME}`: where a reference may stand (load diagnostics with
//! their positions) and how `secret::resolve` puts values in (env and
//! headers, missing secrets, unusable values), through one `check` helper.
//! No error or diagnostic ever shows a value.

// Test helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

use mcp_config::secret::{
    MemorySecretStore, SecretName, SecretStore, SecretValue, referenced_secrets, resolve,
};
use mcp_config::{EntryOutcome, Level, ParseEnv, Scope, TransportConfig, parse_file};
use serde_json::{Value, json};

/// Values no message may show.
const VALUES: &[(&str, &str)] = &[
    ("api", "v4lue-API"),
    ("gh.token", "ghp_S3CRET"),
    ("two-part", "p4rt"),
    ("bad-header", "line\r\nX-Injected: 1"),
    ("nul", "a\0b"),
];

/// What one entry should come to.
enum Expect<'a> {
    /// Loads without a diagnostic; resolves to these `env`/`headers` values.
    Resolves(&'a [(&'a str, &'a str)]),
    /// Loads without a diagnostic; resolving fails with an error whose
    /// text holds each of these.
    Fails(&'a [&'a str]),
    /// Loading reports errors on these fields (with positions), naming the
    /// server.
    Diagnostics(&'a [&'a str]),
}

fn store() -> MemorySecretStore {
    let store = MemorySecretStore::new();
    for (name, value) in VALUES {
        store
            .set(&SecretName::new(name).unwrap(), &SecretValue::new(*value))
            .unwrap();
    }
    store
}

fn check(entry: Value, expect: Expect<'_>) {
    let text = serde_json::to_string_pretty(&json!({"mcpServers": {"srv": entry}})).unwrap();
    let vars = BTreeMap::from([("TOKEN".to_owned(), "t0k".to_owned())]);
    let file = parse_file(
        &text,
        Path::new("/cfg/.claude.json"),
        Scope::User,
        ParseEnv::new(&vars),
    );
    for d in &file.diagnostics {
        for (_, value) in VALUES {
            assert!(!d.message.contains(value), "{d:?}");
        }
    }
    if let Expect::Diagnostics(fields) = expect {
        let got: Vec<&str> = file
            .diagnostics
            .iter()
            .filter(|d| d.level == Level::Error)
            .map(|d| d.field.as_deref().unwrap_or("-"))
            .collect();
        assert_eq!(got, fields, "{text}: {:#?}", file.diagnostics);
        for d in &file.diagnostics {
            assert_eq!(d.server.as_deref(), Some("srv"));
            assert!(d.message.contains("`srv`"), "{}", d.message);
            assert!(d.line.is_some() && d.column.is_some(), "{d:?}");
            assert_eq!(d.file.as_deref(), Some(Path::new("/cfg/.claude.json")));
        }
        return;
    }
    assert!(
        file.diagnostics.is_empty(),
        "{text}: {:#?}",
        file.diagnostics
    );
    let EntryOutcome::Server(config) = &file.entries[0].outcome else {
        panic!("{text} did not load");
    };
    let store = store();
    match (resolve(config, &store), expect) {
        (Ok(resolved), Expect::Resolves(values)) => {
            let got: BTreeMap<&str, &str> = match &resolved.transport {
                TransportConfig::Stdio(s) => s
                    .env
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect(),
                TransportConfig::Http(r) | TransportConfig::Sse(r) | TransportConfig::Ws(r) => r
                    .headers
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect(),
                other => panic!("{other:?}"),
            };
            assert_eq!(got, values.iter().copied().collect(), "{text}");
            // The loaded entry still holds the references: the hash and
            // the signature are over what the file says.
            assert_ne!(
                mcp_config::config_hash(config),
                mcp_config::config_hash(&resolved)
            );
            // Debug of the resolved entry hides env and header values.
            let debug = format!("{resolved:?}");
            for (_, value) in VALUES {
                assert!(!debug.contains(value), "{debug}");
            }
        }
        (Err(error), Expect::Fails(parts)) => {
            let shown = format!("{error} {error:?}");
            for part in parts {
                assert!(shown.contains(part), "{shown} lacks {part}");
            }
            for (_, value) in VALUES {
                assert!(!shown.contains(value), "{shown}");
            }
        }
        (got, _) => panic!("{text}: unexpected {got:?}"),
    }
}

#[test]
fn references_resolve_in_env_and_headers_only() {
    check(
        json!({"command": "srv", "env": {"A": "${secret:api}", "B": "x-${secret:gh.token}-${TOKEN}", "C": "plain"}}),
        Expect::Resolves(&[
            ("A", "v4lue-API"),
            ("B", "x-ghp_S3CRET-t0k"),
            ("C", "plain"),
        ]),
    );
    check(
        json!({"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${secret:gh.token}", "X-Two": "${secret:api}${secret:two-part}"}}),
        Expect::Resolves(&[
            ("Authorization", "Bearer ghp_S3CRET"),
            ("X-Two", "v4lue-APIp4rt"),
        ]),
    );
    check(
        json!({"type": "sse", "url": "http://127.0.0.1:1/sse", "headers": {"X-Key": "${secret:api}"}}),
        Expect::Resolves(&[("X-Key", "v4lue-API")]),
    );
    // A missing secret names the secret and the server.
    check(
        json!({"command": "srv", "env": {"A": "${secret:absent}"}}),
        Expect::Fails(&["`absent`", "`srv`", "memory"]),
    );
    check(
        json!({"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"X": "${secret:absent}"}}),
        Expect::Fails(&["`absent`", "`srv`"]),
    );
    // A value that would end a header early, or a NUL in the environment.
    check(
        json!({"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"X": "${secret:bad-header}"}}),
        Expect::Fails(&["`bad-header`", "`srv`", "control character", "`X`"]),
    );
    check(
        json!({"command": "srv", "env": {"A": "${secret:nul}"}}),
        Expect::Fails(&["`nul`", "`srv`", "NUL", "`env.A`"]),
    );
    // Malformed names and references outside env and headers are load errors.
    check(
        json!({"command": "srv", "env": {"A": "${secret:-x}", "B": "${secret:a b}", "C": "${secret:open"}}),
        Expect::Diagnostics(&["env", "env", "env"]),
    );
    check(
        json!({"command": "${secret:api}", "args": ["--key", "${secret:api}"], "cwd": "/${secret:api}"}),
        Expect::Diagnostics(&["command", "cwd", "args"]),
    );
    check(
        json!({"type": "http", "url": "http://h/${secret:api}", "headers": {"X": "${secret:}"}}),
        Expect::Diagnostics(&["url", "headers"]),
    );
    check(
        json!({"type": "http", "url": "http://h/", "headersHelper": "/bin/helper ${secret:api}"}),
        Expect::Diagnostics(&["headersHelper"]),
    );
}

#[test]
fn references_are_listed_once_and_need_no_store_when_absent() {
    let text = r#"{"mcpServers": {"s": {"command": "x", "env": {"A": "${secret:b}", "B": "${secret:a}${secret:b}"}}, "t": {"command": "x", "env": {"A": "${HOME}"}}}}"#;
    let vars = BTreeMap::new();
    let file = parse_file(
        text,
        Path::new("/c.json"),
        Scope::User,
        ParseEnv::new(&vars),
    );
    let configs: Vec<_> = file
        .entries
        .iter()
        .map(|e| match &e.outcome {
            EntryOutcome::Server(c) => c.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    let names: Vec<String> = referenced_secrets(&configs[0])
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert!(referenced_secrets(&configs[1]).is_empty());
    // No reference: the entry comes back unchanged from an empty store.
    let resolved = resolve(&configs[1], &MemorySecretStore::new()).unwrap();
    assert_eq!(resolved, configs[1]);
}
