//! Entry parsing through one `check` helper: both dialects, aliases,
//! inference, expansion, env safety and every invalid-entry case.

// Test helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

use mcp_config::{EntryOutcome, Level, ParseEnv, Scope, parse_file};
use serde_json::{Value, json};

/// Parses `entry` as server `s` of a user file (or an OpenClaw file when
/// `openclaw`) and compares the outcome and the diagnostics.
///
/// `expect` is the JSON of the parsed server (`transport`, plus `enabled`,
/// `required`, `toolFilter`, `timeouts` when given), or `"invalid"` /
/// `"tombstone"`. `diagnostics` lists `level field` pairs in order.
fn check_in(openclaw: bool, entry: Value, expect: Value, diagnostics: &[&str]) {
    let text = if openclaw {
        serde_json::to_string_pretty(&json!({"mcp": {"servers": {"s": entry}}})).unwrap()
    } else {
        serde_json::to_string_pretty(&json!({"mcpServers": {"s": entry}})).unwrap()
    };
    let vars: BTreeMap<String, String> = [("TOKEN", "t0k"), ("HOST", "h.example"), ("EMPTY", "")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let env = ParseEnv::new(&vars).with_home(Path::new("/home/u"));
    let scope = if openclaw {
        Scope::OpenClaw
    } else {
        Scope::User
    };
    let file = parse_file(&text, Path::new("/cfg/settings.json"), scope, env);
    assert_eq!(file.entries.len(), 1, "{text}");
    let got = match &file.entries[0].outcome {
        EntryOutcome::Server(s) => {
            let full = serde_json::to_value(s).unwrap();
            match &expect {
                Value::Object(keys) => {
                    Value::Object(keys.keys().map(|k| (k.clone(), full[k].clone())).collect())
                }
                _ => full,
            }
        }
        EntryOutcome::Tombstone => json!("tombstone"),
        EntryOutcome::Invalid => json!("invalid"),
    };
    assert_eq!(got, expect, "outcome of {text}");
    let got: Vec<String> = file
        .diagnostics
        .iter()
        .map(|d| {
            let level = match d.level {
                Level::Error => "error",
                Level::Warning => "warning",
                Level::Info => "info",
            };
            format!("{level} {}", d.field.as_deref().unwrap_or("-"))
        })
        .collect();
    assert_eq!(
        got, diagnostics,
        "diagnostics of {text}: {:#?}",
        file.diagnostics
    );
    for d in &file.diagnostics {
        assert_eq!(d.server.as_deref(), Some("s"));
        // Variable values are secrets: only text the file spells may show.
        assert!(
            text.contains("t0k") || !d.message.contains("t0k"),
            "a diagnostic shows the value of $TOKEN: {}",
            d.message
        );
        assert!(d.line.is_some() && d.column.is_some(), "{d:?}");
        assert!(
            d.message.contains("`s`"),
            "message names the server: {}",
            d.message
        );
    }
}

fn check(entry: Value, expect: Value, diagnostics: &[&str]) {
    check_in(false, entry, expect, diagnostics);
}

#[test]
fn stdio_entries() {
    check(
        json!({"command": "uvx", "args": ["srv", 1], "env": {"N": 1, "B": true, "S": "x"}, "cwd": "~/w"}),
        "invalid".into(),
        &["error args"],
    );
    check(
        json!({"command": "uvx", "args": ["srv"], "env": {"N": 1, "B": true, "S": "x"}, "cwd": "~/w"}),
        json!({"transport": {"type": "stdio", "command": "uvx", "args": ["srv"],
            "env": {"B": "true", "N": "1", "S": "x"}, "cwd": "/home/u/w"}}),
        &[],
    );
    check(
        json!({"type": "stdio", "command": "node", "workingDirectory": "/srv"}),
        json!({"transport": {"type": "stdio", "command": "node", "args": [], "env": {}, "cwd": "/srv"}}),
        &[],
    );
    // The first alias written wins. (Written in sorted order: `json!`
    // keeps its order only with serde_json's `preserve_order`.)
    check(
        json!({"command": "node", "cwd": "/b", "working_directory": "/a"}),
        json!({"transport": {"type": "stdio", "command": "node", "args": [], "env": {}, "cwd": "/b"}}),
        &["warning cwd"],
    );
}

#[test]
fn remote_entries_in_both_dialects() {
    check(
        json!({"type": "sse", "url": "https://x.example/sse", "headers": {"Authorization": "Bearer ${TOKEN}"}}),
        json!({"transport": {"type": "sse", "url": "https://x.example/sse",
            "headers": {"Authorization": "Bearer t0k"}, "headersHelper": null, "oauth": null}}),
        &[],
    );
    check_in(
        true,
        json!({"transport": "sse", "url": "https://x.example/sse"}),
        json!({"transport": {"type": "sse", "url": "https://x.example/sse", "headers": {}, "headersHelper": null, "oauth": null}}),
        &[],
    );
    check_in(
        true,
        json!({"transport": "streamable-http", "url": "https://${HOST}/mcp", "headers_helper": "get-headers"}),
        json!({"transport": {"type": "http", "url": "https://h.example/mcp", "headers": {}, "headersHelper": "get-headers", "oauth": null}}),
        &[],
    );
    check(
        json!({"type": "http", "url": "https://x.example/mcp",
            "oauth": {"clientId": "c", "callbackPort": 8123, "authServerMetadataUrl": "https://a.example/m", "xaa": true, "scopes": ["a", "b"]}}),
        json!({"transport": {"type": "http", "url": "https://x.example/mcp", "headers": {}, "headersHelper": null,
            "oauth": {"clientId": "c", "callbackPort": 8123, "authServerMetadataUrl": "https://a.example/m", "xaa": true, "scopes": ["a", "b"]}}}),
        &[],
    );
    check(
        json!({"type": "http", "url": "https://x.example/mcp", "oauth": {"callbackPort": 70000}}),
        "invalid".into(),
        &["error oauth"],
    );
    check(
        json!({"type": "ws", "url": "wss://x.example/ws", "oauth": {}}),
        json!({"transport": {"type": "ws", "url": "wss://x.example/ws", "headers": {}, "headersHelper": null, "oauth": null}}),
        &["warning oauth"],
    );
    check(
        json!({"type": "ws", "url": "ftp://x.example"}),
        "invalid".into(),
        &["error url"],
    );
    check(
        json!({"type": "http", "url": "not a url"}),
        "invalid".into(),
        &["error url"],
    );
    check(
        json!({"type": "http", "url": "${TOKEN}://x.example"}),
        "invalid".into(),
        &["error url"],
    );
    check(
        json!({"type": "sdk", "name": "inproc"}),
        json!({"transport": {"type": "sdk", "name": "inproc"}}),
        &[],
    );
    check(
        json!({"type": "claudeai-proxy", "url": "https://claude.ai/p", "id": "srv_1"}),
        json!({"transport": {"type": "claudeai-proxy", "url": "https://claude.ai/p", "id": "srv_1"}}),
        &[],
    );
    check(
        json!({"type": "claudeai-proxy", "url": "https://claude.ai/p"}),
        "invalid".into(),
        &["error id"],
    );
}

#[test]
fn type_inference_and_kind_errors() {
    // url only: streamable http, said at info level
    check(
        json!({"url": "https://x.example/mcp"}),
        json!({"transport": {"type": "http", "url": "https://x.example/mcp", "headers": {}, "headersHelper": null, "oauth": null}}),
        &["info url"],
    );
    check(
        json!({"type": "carrier-pigeon", "url": "https://x"}),
        "invalid".into(),
        &["error type"],
    );
    check(json!({"type": 3}), "invalid".into(), &["error type"]);
    check(
        json!({"type": "sse", "transport": "streamable-http", "url": "https://x.example"}),
        "invalid".into(),
        &["error transport"],
    );
    check(
        json!({"type": "http", "transport": "streamable-http", "url": "https://x.example"}),
        json!({"transport": {"type": "http", "url": "https://x.example", "headers": {}, "headersHelper": null, "oauth": null}}),
        &[],
    );
    // a field the kind does not use is a warning, never a silent drop
    check(
        json!({"command": "x", "url": "https://x.example"}),
        json!({"transport": {"type": "stdio", "command": "x", "args": [], "env": {}, "cwd": null}}),
        &["warning url"],
    );
}

#[test]
fn common_fields_aliases_and_timeouts() {
    check(
        json!({"command": "x", "enabled": false, "required": true,
            "tool_filter": {"include": ["a*"], "exclude": ["a_rm"]},
            "connectTimeout": 5, "connection_timeout_ms": 1500, "timeout": 2.5, "tool_call_timeout_ms": 9000}),
        json!({"enabled": false, "required": true,
            "toolFilter": {"include": ["a*"], "exclude": ["a_rm"]},
            "timeouts": {"connect": 1500, "request": 2500, "toolCall": 9000}}),
        &[],
    );
    check(
        json!({"command": "x"}),
        json!({"enabled": true, "required": false, "toolFilter": {"include": [], "exclude": []},
            "timeouts": {"connect": 30000, "request": 60000, "toolCall": 60000}}),
        &[],
    );
    check(
        json!({"command": "x", "requestTimeoutMs": -1}),
        "invalid".into(),
        &["error requestTimeoutMs"],
    );
    check(
        json!({"command": "x", "enabled": "no"}),
        "invalid".into(),
        &["error enabled"],
    );
    check(
        json!({"command": "x", "toolFilter": {"only": []}}),
        json!({"required": false}),
        &["warning toolFilter"],
    );
}

#[test]
fn description_limit() {
    // every entry kind takes it, under either spelling
    check(
        json!({"command": "x", "descriptionLimit": 300}),
        json!({"descriptionLimit": 300}),
        &[],
    );
    check(
        json!({"url": "https://x.example", "description_limit": 1}),
        json!({"descriptionLimit": 1}),
        &["info url"],
    );
    check(
        json!({"type": "ws", "url": "wss://x.example", "descriptionLimit": 4096}),
        json!({"descriptionLimit": 4096}),
        &[],
    );
    // left out, the host's limit applies
    check(
        json!({"command": "x"}),
        json!({"descriptionLimit": null}),
        &[],
    );
    for bad in [json!(0), json!(-5), json!(2.5), json!("300"), json!(null)] {
        check(
            json!({"command": "x", "descriptionLimit": bad}),
            "invalid".into(),
            &["error descriptionLimit"],
        );
    }
}

#[test]
fn tombstones() {
    check(json!({"enabled": false}), "tombstone".into(), &[]);
    // enabled:true alone is not a server
    check(
        json!({"enabled": true}),
        "invalid".into(),
        &["error command"],
    );
    check(json!({}), "invalid".into(), &["error command"]);
    check(json!("uvx"), "invalid".into(), &["error -"]);
}

#[test]
fn expansion_keeps_unset_variables_and_warns() {
    check(
        json!({"command": "${NOPE}/bin/x", "args": ["--k=${TOKEN}", "${ALSO_NOPE:-d}"], "env": {"A": "${EMPTY:-fallback}"}}),
        json!({"transport": {"type": "stdio", "command": "${NOPE}/bin/x", "args": ["--k=t0k", "d"],
            "env": {"A": "fallback"}, "cwd": null}}),
        &["warning command"],
    );
    check(
        json!({"url": "https://${MISSING_HOST}/mcp", "type": "http"}),
        json!({"transport": {"type": "http", "url": "https://${MISSING_HOST}/mcp", "headers": {}, "headersHelper": null, "oauth": null}}),
        &["warning url"],
    );
}

#[test]
fn dangerous_env_keys_are_errors_and_never_kept() {
    check(
        json!({"command": "node", "env": {"NODE_OPTIONS": "--require evil.js", "ld_preload": "x.so", "TOKEN": "ok"}}),
        json!({"transport": {"type": "stdio", "command": "node", "args": [], "env": {"TOKEN": "ok"}, "cwd": null}}),
        &["error env", "error env"],
    );
}

#[test]
fn env_passthrough_names_are_checked_like_env_keys() {
    let stdio = |passthrough: Value| {
        json!({"transport": {"type": "stdio", "command": "node", "args": [], "env": {},
            "cwd": null, "envPassthrough": passthrough}})
    };
    check(
        json!({"command": "node", "envPassthrough": ["AWS_PROFILE", "KUBECONFIG"]}),
        stdio(json!(["AWS_PROFILE", "KUBECONFIG"])),
        &[],
    );
    // the snake_case alias, and an empty list (left out, as if absent)
    check(
        json!({"command": "node", "env_passthrough": ["GH_HOST"]}),
        stdio(json!(["GH_HOST"])),
        &[],
    );
    check(
        json!({"command": "node", "envPassthrough": []}),
        json!({"transport": {"type": "stdio", "command": "node", "args": [], "env": {}, "cwd": null}}),
        &[],
    );
    // the wrong shapes make the entry invalid, as a malformed `env` does
    check(
        json!({"command": "node", "envPassthrough": "AWS_PROFILE"}),
        "invalid".into(),
        &["error envPassthrough"],
    );
    check(
        json!({"command": "node", "envPassthrough": ["A", 3]}),
        "invalid".into(),
        &["error envPassthrough"],
    );
    // refused keys and keys that are not names are errors and dropped; the
    // entry stays usable, as with refused `env` keys
    check(
        json!({"command": "node", "envPassthrough": ["LD_PRELOAD", "node_options", "OK", "A=B", "1X", "XDG_CONFIG_HOME"]}),
        stdio(json!(["OK"])),
        &[
            "error envPassthrough",
            "error envPassthrough",
            "error envPassthrough",
            "error envPassthrough",
            "error envPassthrough",
        ],
    );
    // a repeat is kept once, with a warning
    check(
        json!({"command": "node", "envPassthrough": ["OK", "OK"]}),
        stdio(json!(["OK"])),
        &["warning envPassthrough"],
    );
    // remote servers spawn nothing: the field is not used there
    check(
        json!({"url": "https://x.example/mcp", "type": "http", "envPassthrough": ["OK"]}),
        json!({"transport": {"type": "http", "url": "https://x.example/mcp", "headers": {}, "headersHelper": null, "oauth": null}}),
        &["warning envPassthrough"],
    );
}

#[test]
fn env_passthrough_messages_never_quote_an_item_that_is_not_a_name() {
    let text = r#"{"mcpServers": {"s": {"command": "node", "envPassthrough": ["TOKEN=s3cr3t"]}}}"#;
    let vars = BTreeMap::new();
    let env = ParseEnv::new(&vars);
    let file = parse_file(text, Path::new("/cfg/settings.json"), Scope::User, env);
    assert_eq!(file.diagnostics.len(), 1, "{:#?}", file.diagnostics);
    let d = &file.diagnostics[0];
    assert_eq!(d.level, Level::Error);
    assert!(!d.message.contains("s3cr3t"), "{}", d.message);
    assert!(d.message.contains("envPassthrough[0]"), "{}", d.message);
    assert_eq!((d.line, d.column), (Some(1), Some(61)), "{d:?}");
}

/// Claw's invalid-siblings vector: five configured, one valid, four
/// invalid (empty command, unknown field, missing command, command of the
/// wrong type). Our decision: an unknown field is a warning and the entry
/// still loads, so two servers load, three are invalid, and all four
/// problems are reported, each positioned at its own entry.
#[test]
fn invalid_siblings_are_all_reported() {
    let text = r#"{
  "mcpServers": {
    "good": { "command": "uvx", "args": ["ok"] },
    "empty": { "command": "" },
    "extra": { "command": "uvx", "bogus": 1 },
    "missing": { "args": ["x"] },
    "wrong": { "command": 42 }
  }
}"#;
    let vars = BTreeMap::new();
    let file = parse_file(text, Path::new("s.json"), Scope::User, ParseEnv::new(&vars));
    let outcomes: Vec<(&str, &str)> = file
        .entries
        .iter()
        .map(|e| {
            let o = match e.outcome {
                EntryOutcome::Server(_) => "server",
                EntryOutcome::Tombstone => "tombstone",
                EntryOutcome::Invalid => "invalid",
            };
            (e.name.as_str(), o)
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            ("good", "server"),
            ("empty", "invalid"),
            ("extra", "server"),
            ("missing", "invalid"),
            ("wrong", "invalid")
        ]
    );
    let diags: Vec<(Level, &str, Option<u32>)> = file
        .diagnostics
        .iter()
        .map(|d| (d.level, d.server.as_deref().unwrap_or(""), d.line))
        .collect();
    assert_eq!(
        diags,
        [
            (Level::Error, "empty", Some(4)),
            (Level::Warning, "extra", Some(5)),
            (Level::Error, "missing", Some(6)),
            (Level::Error, "wrong", Some(7)),
        ]
    );
    assert_eq!(file.diagnostics[1].field.as_deref(), Some("bogus"));
    assert_eq!(file.diagnostics[1].column, Some(34));
}

#[test]
fn malformed_json_is_one_positioned_error() {
    let vars = BTreeMap::new();
    let file = parse_file(
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": }\n  }\n}",
        Path::new("bad.json"),
        Scope::Project,
        ParseEnv::new(&vars),
    );
    assert!(file.entries.is_empty());
    assert_eq!(file.diagnostics.len(), 1);
    let d = &file.diagnostics[0];
    assert_eq!((d.level, d.line), (Level::Error, Some(3)));
    assert_eq!(d.file.as_deref(), Some(Path::new("bad.json")));
}

/// The `oauth` block of an http entry at `https://x.example/mcp` as parsed.
fn http_with_oauth(oauth: Value) -> Value {
    json!({"transport": {"type": "http", "url": "https://x.example/mcp", "headers": {},
        "headersHelper": null, "oauth": oauth}})
}

#[test]
fn oauth_grants_and_their_credential_sources() {
    let entry =
        |oauth: Value| json!({"type": "http", "url": "https://x.example/mcp", "oauth": oauth});
    let base = json!({"clientId": null, "callbackPort": null, "authServerMetadataUrl": null,
        "xaa": false, "scopes": []});
    let parsed = |extra: Value| {
        let mut out = base.clone();
        for (k, v) in extra.as_object().unwrap() {
            out[k] = v.clone();
        }
        http_with_oauth(out)
    };
    // A pre-registered client with its secret in the environment, and a
    // client ID metadata document; snake_case aliases canonicalise.
    check(
        entry(json!({"client_id": "c", "client_secret_env": "MY_SECRET",
            "clientMetadataUrl": "https://app.example/client.json"})),
        parsed(json!({"clientId": "c", "clientSecretEnv": "MY_SECRET",
            "clientMetadataUrl": "https://app.example/client.json"})),
        &[],
    );
    // Client credentials with a literal secret: expanded, masked, and a
    // plain-text one is a warning.
    check(
        entry(json!({"grant": "client_credentials", "clientId": "c", "clientSecret": "${TOKEN}"})),
        parsed(json!({"grant": "client_credentials", "clientId": "c", "clientSecret": "***"})),
        &[],
    );
    check(
        entry(json!({"grant": "client_credentials", "clientId": "c", "clientSecret": "hunter2"})),
        parsed(json!({"grant": "client_credentials", "clientId": "c", "clientSecret": "***"})),
        &["warning oauth"],
    );
    // ... or a private key; a relative path is relative to the file's folder.
    check(
        entry(json!({"grant": "client-credentials", "clientId": "c",
            "privateKeyFile": "keys/../keys/c.pem", "signingAlgorithm": "RS256"})),
        parsed(json!({"grant": "client_credentials", "clientId": "c",
            "privateKeyFile": "/cfg/keys/c.pem", "signingAlgorithm": "RS256"})),
        &[],
    );
    check(
        entry(json!({"privateKeyFile": "~/k.pem"})),
        parsed(json!({"privateKeyFile": "/home/u/k.pem"})),
        &[],
    );
    // Workload identity from a variable or a command (argv, expanded).
    check(
        entry(json!({"grant": "jwt_bearer", "assertion": {"env": "WORKLOAD_JWT"}, "dpop": true})),
        parsed(json!({"grant": "jwt_bearer", "assertion": {"env": "WORKLOAD_JWT"}, "dpop": true})),
        &[],
    );
    check(
        entry(json!({"grant": "jwt_bearer",
            "assertion": {"command": ["~/bin/token", "--aud", "${HOST}"], "timeoutMs": 5000}})),
        parsed(json!({"grant": "jwt_bearer",
            "assertion": {"command": ["/home/u/bin/token", "--aud", "h.example"], "timeoutMs": 5000}})),
        &[],
    );
    // Cross-app access: `grant` sets `xaa`; `xaa: true` alone still means it.
    let idp = json!({"tokenEndpoint": "https://idp.example/token", "clientId": "app",
        "clientSecretEnv": "IDP_SECRET"});
    check(
        entry(
            json!({"grant": "cross_app_access", "clientId": "c", "idp": idp,
            "idToken": {"env": "ID_TOKEN"}, "dpop": false}),
        ),
        parsed(
            json!({"grant": "cross_app_access", "xaa": true, "clientId": "c", "idp": idp,
            "assertion": {"env": "ID_TOKEN"}, "dpop": false}),
        ),
        &[],
    );
    check(
        entry(
            json!({"xaa": true, "idp": {"token_endpoint": "http://127.0.0.1:9/t", "client_id": "app"}}),
        ),
        parsed(
            json!({"xaa": true, "idp": {"tokenEndpoint": "http://127.0.0.1:9/t", "clientId": "app"}}),
        ),
        &[],
    );
    // Unknown keys, here and inside the sources, are warnings.
    check(
        entry(json!({"assertion": {"env": "T", "shell": true}, "nonsense": 1})),
        parsed(json!({"assertion": {"env": "T"}})),
        &["warning oauth", "warning oauth"],
    );
    // An unset variable in the secret is a warning naming the key.
    check(
        entry(json!({"clientSecret": "${NOPE}"})),
        parsed(json!({"clientSecret": "***"})),
        &["warning oauth"],
    );
}

#[test]
fn bad_oauth_values_are_positioned_errors() {
    let entry =
        |oauth: Value| json!({"type": "http", "url": "https://x.example/mcp", "oauth": oauth});
    for (oauth, diagnostics) in [
        (json!({"grant": "password"}), &["error oauth"][..]),
        (json!({"grant": 3}), &["error oauth"]),
        (
            json!({"grant": "client_credentials", "xaa": true}),
            &["error oauth"],
        ),
        (
            json!({"grant": "cross_app_access", "xaa": false}),
            &["error oauth"],
        ),
        // A variable name that is not a name (perhaps the secret itself).
        (json!({"clientSecretEnv": "s3cr=t value"}), &["error oauth"]),
        (json!({"clientSecretEnv": ""}), &["error oauth"]),
        (json!({"clientSecretEnv": 7}), &["error oauth"]),
        (
            json!({"clientMetadataUrl": "http://app.example/client.json"}),
            &["error oauth"],
        ),
        (json!({"clientMetadataUrl": "not a url"}), &["error oauth"]),
        (json!({"privateKeyFile": ""}), &["error oauth"]),
        (json!({"signingAlgorithm": "HS256"}), &["error oauth"]),
        (json!({"assertion": "WORKLOAD_JWT"}), &["error oauth"]),
        (json!({"assertion": {}}), &["error oauth"]),
        (
            json!({"assertion": {"env": "A", "command": ["b"]}}),
            &["error oauth"],
        ),
        (json!({"assertion": {"env": "1A"}}), &["error oauth"]),
        (
            json!({"assertion": {"command": "token-tool --print"}}),
            &["error oauth"],
        ),
        (json!({"assertion": {"command": []}}), &["error oauth"]),
        (
            json!({"assertion": {"command": ["a", 1]}}),
            &["error oauth"],
        ),
        (
            json!({"assertion": {"command": ["a"], "timeoutMs": 0}}),
            &["error oauth"],
        ),
        (json!({"idp": {"clientId": "app"}}), &["error oauth"]),
        (
            json!({"idp": {"tokenEndpoint": "ftp://idp.example", "clientId": "app"}}),
            &["error oauth"],
        ),
        (
            json!({"idp": {"tokenEndpoint": "https://idp.example/t", "clientId": "a", "clientSecretEnv": "a b"}}),
            &["error oauth"],
        ),
        (json!({"idp": []}), &["error oauth"]),
        (json!({"dpop": "yes"}), &["error oauth"]),
    ] {
        check(entry(oauth), "invalid".into(), diagnostics);
    }
}

#[test]
fn oauth_diagnostics_never_show_what_may_be_a_secret() {
    let text = r#"{"mcpServers": {"s": {"type": "http", "url": "https://x.example/mcp",
        "oauth": {"clientSecretEnv": "sk_live_pasted secret", "idp": {"tokenEndpoint": "https://i.example/t", "clientId": "a", "clientSecretEnv": "sk=also"}}}}}"#;
    let vars = BTreeMap::new();
    let env = ParseEnv::new(&vars);
    let file = parse_file(text, Path::new("/cfg/.mcp.json"), Scope::Project, env);
    assert_eq!(file.diagnostics.len(), 2, "{:#?}", file.diagnostics);
    for d in &file.diagnostics {
        assert!(
            !d.message.contains("sk_live") && !d.message.contains("sk=also"),
            "{}",
            d.message
        );
        assert!(
            d.message.contains("oauth.") && d.message.contains("`s`"),
            "{}",
            d.message
        );
        assert_eq!(d.file.as_deref(), Some(Path::new("/cfg/.mcp.json")));
        assert_eq!(d.line, Some(2), "{d:?}");
    }
}

/// The constructors a host builds entries with give what a file entry
/// naming only its transport loads as, so a host and a file agree.
#[test]
fn constructors_match_minimal_entries() {
    use mcp_config::{ProxyConfig, RemoteConfig, ServerConfig, StdioConfig, TransportConfig};
    let vars = BTreeMap::new();
    let loaded = |entry: Value| {
        let text = json!({"mcpServers": {"s": entry}}).to_string();
        let file = parse_file(
            &text,
            Path::new("/cfg/.claude.json"),
            Scope::User,
            ParseEnv::new(&vars),
        );
        match &file.entries[0].outcome {
            EntryOutcome::Server(server) => server.clone(),
            other => panic!("{other:?}: {:#?}", file.diagnostics),
        }
    };
    let check =
        |entry: Value, built: ServerConfig| assert_eq!(loaded(entry.clone()), built, "{entry}");
    check(
        json!({"command": "x", "args": ["a"]}),
        ServerConfig::new(
            "s",
            TransportConfig::Stdio(StdioConfig::new("x").with_args(["a"])),
        ),
    );
    check(
        json!({"type": "http", "url": "https://a.example/mcp"}),
        ServerConfig::new(
            "s",
            TransportConfig::Http(RemoteConfig::new("https://a.example/mcp")),
        ),
    );
    check(
        json!({"type": "claudeai-proxy", "url": "https://p.example", "id": "i"}),
        ServerConfig::new(
            "s",
            TransportConfig::ClaudeAiProxy(ProxyConfig::new("https://p.example", "i")),
        ),
    );
}
